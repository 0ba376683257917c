// Package graph is a pure-Go interpreter of small feed-forward ONNX graphs:
// the policies the training environment exports (python/mpqgym/export.py)
// and anything else built from the operators below, in float32. It is the
// fallback of pkg/model/gympolicy when onnxruntime is missing, as
// pkg/model/gonet is EdAR's.
//
// Operators: Gemm, MatMul, Add, Sub, Mul, Div (numpy broadcasting), Relu,
// LeakyRelu, Tanh, Sigmoid, Softmax, Clip, Reshape, Flatten, Concat,
// Identity. A graph with any other operator is refused by Parse, saying
// which; onnxruntime then has to run it.
package graph

import (
	"errors"
	"fmt"
	"math"

	"github.com/mpqsched/mpqsched/pkg/model/internal/onnx"
)

// ErrUnsupported is wrapped by Parse's error for a well-formed model with
// an operator the interpreter does not implement (onnxruntime may run it);
// the returned Graph then still carries the metadata.
var ErrUnsupported = errors.New("not supported by the pure-Go interpreter (onnxruntime can run it)")

// Limits of a graph Parse accepts.
const (
	MaxNodes = onnx.MaxNodes // nodes
	MaxRank  = 6             // dimensions of any tensor
)

// supported lists the operators Run implements.
var supported = map[string]bool{"Gemm": true, "MatMul": true, "Add": true, "Sub": true, "Mul": true,
	"Div": true, "Relu": true, "LeakyRelu": true, "Tanh": true, "Sigmoid": true, "Softmax": true,
	"Clip": true, "Reshape": true, "Flatten": true, "Concat": true, "Identity": true}

type attr struct {
	f    float32
	i    int64
	ints []int64
}

type node struct {
	op      string
	in, out []string
	attrs   map[string]attr
}

// Graph is a parsed model. Run is safe for concurrent use.
type Graph struct {
	meta   map[string]string
	inputs []string // graph inputs that are not initializers, in order
	output string   // the first graph output
	nodes  []node
	consts map[string]*Tensor // float initializers
	ints   map[string][]int64 // int64 initializers (shapes)
	opset  int64
	irVer  int64
	// unsupported is the first operator the interpreter lacks, if any.
	unsupported error
}

// Tensor is a float32 tensor, row-major.
type Tensor struct {
	Shape []int     // dimensions
	Data  []float32 // len = the product of Shape
}

// Parse reads an ONNX ModelProto with pkg/model/internal/onnx. It checks
// every operator against the supported set, every initializer's data
// against its shape and for finiteness, and that every node input is
// defined before use.
func Parse(b []byte) (*Graph, error) {
	m, err := onnx.Parse(b)
	if err != nil {
		return nil, err
	}
	g := &Graph{meta: m.Metadata, consts: map[string]*Tensor{}, ints: map[string][]int64{},
		opset: m.Opset, irVer: m.IRVersion}
	if err := g.build(&m.Graph); err != nil {
		if !errors.Is(err, ErrUnsupported) {
			return nil, fmt.Errorf("graph: %w", err)
		}
		return g, err // a well-formed model: the Graph carries the metadata
	}
	return g, g.check()
}

// build takes the nodes, initializers, inputs and first output of a parsed
// graph, checking what the interpreter needs; it stops at the first
// operator it lacks, with ErrUnsupported.
func (g *Graph) build(og *onnx.Graph) error {
	for _, t := range og.Initializers {
		switch t.DType {
		case onnx.Float:
			for _, v := range t.Float {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return fmt.Errorf("initializer %q has a non-finite value", t.Name)
				}
			}
			g.consts[t.Name] = &Tensor{Shape: dims(t.Dims), Data: t.Float}
		case onnx.Int64:
			g.ints[t.Name] = t.Int
		default:
			return fmt.Errorf("initializer %q of data type %d (only float32 and int64)", t.Name, t.DType)
		}
	}
	for i, on := range og.Nodes {
		n, err := newNode(on)
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		g.nodes = append(g.nodes, n)
	}
	for _, in := range og.Inputs { // initializers may be listed as inputs too (IR < 4)
		if g.consts[in] == nil && g.ints[in] == nil {
			g.inputs = append(g.inputs, in)
		}
	}
	if len(og.Outputs) > 0 {
		g.output = og.Outputs[0]
	}
	return nil
}

// newNode checks a parsed node: the default domain, an operator Run
// implements, one output.
func newNode(on onnx.Node) (node, error) {
	n := node{op: on.Op, in: on.In, out: on.Out, attrs: map[string]attr{}}
	if d := on.Domain; d != "" && d != "ai.onnx" {
		return n, fmt.Errorf("operator domain %q", d)
	}
	if !supported[n.op] {
		return n, fmt.Errorf("operator %q: %w", n.op, ErrUnsupported)
	}
	if len(n.out) != 1 {
		return n, fmt.Errorf("%s with %d outputs", n.op, len(n.out))
	}
	for _, a := range on.Attrs {
		n.attrs[a.Name] = attr{f: a.F, i: a.I, ints: a.Ints}
	}
	return n, nil
}

// check verifies that every node input exists before the node.
func (g *Graph) check() error {
	if g.output == "" {
		return errors.New("graph has no output")
	}
	have := map[string]bool{"": true} // an empty name is an omitted optional input
	for _, in := range g.inputs {
		have[in] = true
	}
	for k := range g.consts {
		have[k] = true
	}
	for k := range g.ints {
		have[k] = true
	}
	for i, n := range g.nodes {
		for _, in := range n.in {
			if !have[in] {
				return fmt.Errorf("node %d (%s) reads %q before anything defines it", i, n.op, in)
			}
		}
		have[n.out[0]] = true
	}
	if !have[g.output] {
		return fmt.Errorf("output %q is never computed", g.output)
	}
	return nil
}

func dims(d []int64) []int {
	s := make([]int, len(d))
	for i, v := range d {
		s[i] = int(v)
	}
	return s
}

// Metadata returns the model's metadata_props; it must not be modified.
func (g *Graph) Metadata() map[string]string { return g.meta }

// Inputs returns the names of the graph's inputs, in order.
func (g *Graph) Inputs() []string { return g.inputs }

// Output returns the name of the graph's (first) output.
func (g *Graph) Output() string { return g.output }
