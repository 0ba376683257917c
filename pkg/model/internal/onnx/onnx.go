// Package onnx is the one ONNX reader of pkg/model's pure-Go backends
// (pkg/model/gonet for EdAR, pkg/model/graph for the gym policies). It
// decodes the few fields of onnx.proto3 they need with protowire's checked
// primitives, so corrupt input gives an error, never a panic or an
// allocation larger than the input allows:
//
//   - ModelProto: ir_version 1, graph 7, opset_import 8 (version 2),
//     metadata_props 14 (key 1, value 2);
//   - GraphProto: node 1, initializer 5, input 11, output 12 (name 1);
//   - NodeProto: input 1, output 2, op_type 4, attribute 5, domain 7;
//   - AttributeProto: name 1, f 2, i 3, ints 8;
//   - TensorProto: see ParseTensor.
//
// Everything else is skipped by wire type. What a model must contain to
// run is for the backends to check.
package onnx

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Limits of a model Parse accepts.
const (
	MaxNodes     = 1024 // nodes of the graph
	MaxNodeIn    = 64   // inputs of one node
	MaxNodeOut   = 8    // outputs of one node
	MaxNodeAttrs = 16   // attributes of one node
	MaxAttrInts  = 8    // values of one ints attribute
)

// Model is what Parse reads from a ModelProto.
type Model struct {
	IRVersion int64             // ir_version
	Opset     int64             // the version of the last opset_import
	Metadata  map[string]string // metadata_props, key to value
	Graph     Graph             // the one graph
}

// Graph is a GraphProto.
type Graph struct {
	Nodes        []Node    // in file order (topological for a valid model)
	Initializers []*Tensor // in file order
	Inputs       []string  // names of the inputs, initializers included (IR < 4)
	Outputs      []string  // names of the outputs
}

// Node is a NodeProto.
type Node struct {
	Op     string   // op_type, such as "Gemm"
	Domain string   // operator domain; "" or "ai.onnx" is the default
	In     []string // input names; "" is an omitted optional input
	Out    []string // output names
	Attrs  []Attr   // attributes, in file order
}

// Attr is an AttributeProto's name and its float, int or ints value.
type Attr struct {
	Name string  // attribute name, such as "alpha"
	F    float32 // f, for a FLOAT attribute
	I    int64   // i, for an INT attribute
	Ints []int64 // ints, for an INTS attribute (at most MaxAttrInts)
}

// Parse reads an ONNX ModelProto with exactly one graph. An error inside
// the graph names the node or initializer.
func Parse(b []byte) (*Model, error) {
	m := &Model{Metadata: map[string]string{}}
	graphs := 0
	err := eachField(b, func(f field) error {
		switch {
		case f.num == 1 && f.typ == protowire.VarintType:
			m.IRVersion = int64(f.val)
		case f.num == 7 && f.typ == protowire.BytesType:
			graphs++
			if err := m.Graph.parse(f.payload); err != nil {
				return fmt.Errorf("graph: %w", err)
			}
		case f.num == 8 && f.typ == protowire.BytesType:
			return eachField(f.payload, func(q field) error {
				if q.num == 2 && q.typ == protowire.VarintType {
					m.Opset = int64(q.val)
				}
				return nil
			})
		case f.num == 14 && f.typ == protowire.BytesType:
			var k, v string
			err := eachField(f.payload, func(q field) error {
				if q.typ == protowire.BytesType && q.num == 1 {
					k = string(q.payload)
				} else if q.typ == protowire.BytesType && q.num == 2 {
					v = string(q.payload)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("metadata_props: %w", err)
			}
			m.Metadata[k] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if graphs != 1 {
		return nil, fmt.Errorf("model has %d graphs, want 1", graphs)
	}
	return m, nil
}

func (g *Graph) parse(b []byte) error {
	return eachField(b, func(f field) error {
		if f.typ != protowire.BytesType {
			return nil
		}
		switch f.num {
		case 1:
			if len(g.Nodes) >= MaxNodes {
				return errors.New("too many nodes")
			}
			n, err := parseNode(f.payload)
			if err != nil {
				return fmt.Errorf("node %d: %w", len(g.Nodes), err)
			}
			g.Nodes = append(g.Nodes, n)
		case 5:
			t, err := ParseTensor(f.payload)
			if err != nil {
				return fmt.Errorf("initializer %q: %w", t.Name, err)
			}
			g.Initializers = append(g.Initializers, t)
		case 11, 12:
			name, err := valueName(f.payload)
			if err != nil {
				return err
			}
			if f.num == 11 {
				g.Inputs = append(g.Inputs, name)
			} else {
				g.Outputs = append(g.Outputs, name)
			}
		}
		return nil
	})
}

// errFound stops valueName's walk at the name.
var errFound = errors.New("found")

// valueName returns a ValueInfoProto's name.
func valueName(b []byte) (string, error) {
	name := ""
	err := eachField(b, func(f field) error {
		if f.num == 1 && f.typ == protowire.BytesType {
			name = string(f.payload)
			return errFound
		}
		return nil
	})
	if err == errFound {
		return name, nil
	}
	if err != nil {
		return "", err
	}
	return "", errors.New("value without a name")
}

func parseNode(b []byte) (Node, error) {
	var n Node
	err := eachField(b, func(f field) error {
		if f.typ != protowire.BytesType {
			return nil
		}
		switch f.num {
		case 1:
			n.In = append(n.In, string(f.payload))
		case 2:
			n.Out = append(n.Out, string(f.payload))
		case 4:
			n.Op = string(f.payload)
		case 5:
			a, err := parseAttr(f.payload)
			if err != nil {
				return err
			}
			n.Attrs = append(n.Attrs, a)
		case 7:
			n.Domain = string(f.payload)
		}
		if len(n.In) > MaxNodeIn || len(n.Out) > MaxNodeOut || len(n.Attrs) > MaxNodeAttrs {
			return errors.New("node too large")
		}
		return nil
	})
	return n, err
}

func parseAttr(b []byte) (Attr, error) {
	var a Attr
	err := eachField(b, func(f field) error {
		switch {
		case f.num == 1 && f.typ == protowire.BytesType:
			a.Name = string(f.payload)
		case f.num == 2 && f.typ == protowire.Fixed32Type:
			a.F = math.Float32frombits(uint32(f.val))
		case f.num == 3 && f.typ == protowire.VarintType:
			a.I = int64(f.val)
		case f.num == 8 && f.typ == protowire.VarintType:
			a.Ints = append(a.Ints, int64(f.val))
		case f.num == 8 && f.typ == protowire.BytesType:
			var err error
			if a.Ints, err = appendPacked(a.Ints, f.payload, MaxAttrInts+1); err != nil && !errors.Is(err, errTooMany) {
				return err
			}
		}
		if len(a.Ints) > MaxAttrInts {
			return fmt.Errorf("attribute %q has over %d ints", a.Name, MaxAttrInts)
		}
		return nil
	})
	return a, err
}
