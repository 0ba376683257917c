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

	"github.com/mpqsched/mpqsched/pkg/model/internal/pb"
)

// ErrUnsupported is wrapped by Parse's error for a well-formed model with
// an operator the interpreter does not implement (onnxruntime may run it);
// the returned Graph then still carries the metadata.
var ErrUnsupported = errors.New("not supported by the pure-Go interpreter (onnxruntime can run it)")

// Limits of a graph Parse accepts.
const (
	MaxNodes = 1024 // nodes
	MaxRank  = 6    // dimensions of any tensor
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

// Parse reads an ONNX ModelProto. It checks every operator against the
// supported set, every initializer's data against its shape and for
// finiteness, and that every node input is defined before use.
func Parse(b []byte) (*Graph, error) {
	g := &Graph{meta: map[string]string{}, consts: map[string]*Tensor{}, ints: map[string][]int64{}}
	p := pb.Reader{B: b}
	graphs := 0
	for len(p.B) > 0 {
		f, wt, v, pl, err := p.Next()
		if err != nil {
			return nil, err
		}
		switch {
		case f == 1 && wt == pb.Varint:
			g.irVer = int64(v)
		case f == 7 && wt == pb.Len:
			graphs++
			if err := g.parseGraph(pl); err != nil {
				if !errors.Is(err, ErrUnsupported) {
					return nil, fmt.Errorf("graph: %w", err)
				}
				g.unsupported = err // read on: the metadata comes after the graph
			}
		case f == 8 && wt == pb.Len: // opset_import: version is field 2
			q := pb.Reader{B: pl}
			for len(q.B) > 0 {
				qf, qwt, qv, _, err := q.Next()
				if err != nil {
					return nil, err
				}
				if qf == 2 && qwt == pb.Varint {
					g.opset = int64(qv)
				}
			}
		case f == 14 && wt == pb.Len:
			k, val, err := entry(pl)
			if err != nil {
				return nil, fmt.Errorf("metadata_props: %w", err)
			}
			g.meta[k] = val
		}
	}
	if graphs != 1 {
		return nil, fmt.Errorf("model has %d graphs, want 1", graphs)
	}
	if g.unsupported != nil {
		return g, g.unsupported
	}
	return g, g.check()
}

func entry(b []byte) (k, v string, err error) {
	p := pb.Reader{B: b}
	for len(p.B) > 0 {
		f, wt, _, pl, err := p.Next()
		if err != nil {
			return "", "", err
		}
		if wt == pb.Len && f == 1 {
			k = string(pl)
		} else if wt == pb.Len && f == 2 {
			v = string(pl)
		}
	}
	return k, v, nil
}

func (g *Graph) parseGraph(b []byte) error {
	p := pb.Reader{B: b}
	var inputs []string
	for len(p.B) > 0 {
		f, wt, _, pl, err := p.Next()
		if err != nil {
			return err
		}
		if wt != pb.Len {
			continue
		}
		switch f {
		case 1:
			if len(g.nodes) >= MaxNodes {
				return errors.New("too many nodes")
			}
			n, err := parseNode(pl)
			if err != nil {
				return fmt.Errorf("node %d: %w", len(g.nodes), err)
			}
			g.nodes = append(g.nodes, n)
		case 5:
			t, err := pb.ParseTensor(pl)
			if err != nil {
				return fmt.Errorf("initializer %q: %w", t.Name, err)
			}
			switch t.DType {
			case pb.Float:
				for _, v := range t.Float {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						return fmt.Errorf("initializer %q has a non-finite value", t.Name)
					}
				}
				g.consts[t.Name] = &Tensor{Shape: dims(t.Dims), Data: t.Float}
			case pb.Int64:
				g.ints[t.Name] = t.Int
			default:
				return fmt.Errorf("initializer %q of data type %d (only float32 and int64)", t.Name, t.DType)
			}
		case 11, 12:
			name, err := valueName(pl)
			if err != nil {
				return err
			}
			if f == 11 {
				inputs = append(inputs, name)
			} else if g.output == "" {
				g.output = name
			}
		}
	}
	for _, in := range inputs { // initializers may be listed as inputs too (IR < 4)
		if g.consts[in] == nil && g.ints[in] == nil {
			g.inputs = append(g.inputs, in)
		}
	}
	return nil
}

func valueName(b []byte) (string, error) {
	p := pb.Reader{B: b}
	for len(p.B) > 0 {
		f, wt, _, pl, err := p.Next()
		if err != nil {
			return "", err
		}
		if f == 1 && wt == pb.Len {
			return string(pl), nil
		}
	}
	return "", errors.New("value without a name")
}

func parseNode(b []byte) (node, error) {
	n := node{attrs: map[string]attr{}}
	p := pb.Reader{B: b}
	for len(p.B) > 0 {
		f, wt, _, pl, err := p.Next()
		if err != nil {
			return n, err
		}
		if wt != pb.Len {
			continue
		}
		switch f {
		case 1:
			n.in = append(n.in, string(pl))
		case 2:
			n.out = append(n.out, string(pl))
		case 4:
			n.op = string(pl)
		case 5:
			name, a, err := parseAttr(pl)
			if err != nil {
				return n, err
			}
			n.attrs[name] = a
		case 7:
			if d := string(pl); d != "" && d != "ai.onnx" {
				return n, fmt.Errorf("operator domain %q", d)
			}
		}
		if len(n.in) > 64 || len(n.out) > 8 || len(n.attrs) > 16 {
			return n, errors.New("node too large")
		}
	}
	if !supported[n.op] {
		return n, fmt.Errorf("operator %q: %w", n.op, ErrUnsupported)
	}
	if len(n.out) != 1 {
		return n, fmt.Errorf("%s with %d outputs", n.op, len(n.out))
	}
	return n, nil
}

func parseAttr(b []byte) (string, attr, error) {
	var name string
	var a attr
	p := pb.Reader{B: b}
	for len(p.B) > 0 {
		f, wt, v, pl, err := p.Next()
		if err != nil {
			return "", a, err
		}
		switch {
		case f == 1 && wt == pb.Len:
			name = string(pl)
		case f == 2 && wt == pb.I32:
			a.f = math.Float32frombits(uint32(v))
		case f == 3 && wt == pb.Varint:
			a.i = int64(v)
		case f == 8 && wt == pb.Varint:
			a.ints = append(a.ints, int64(v))
		case f == 8 && wt == pb.Len:
			q := pb.Reader{B: pl}
			for len(q.B) > 0 && len(a.ints) < MaxRank+2 {
				d, err := q.Varint()
				if err != nil {
					return "", a, err
				}
				a.ints = append(a.ints, int64(d))
			}
		}
	}
	return name, a, nil
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
