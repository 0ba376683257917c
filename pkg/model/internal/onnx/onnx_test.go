package onnx

import (
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Both backends' models read, with what each backend needs.
func TestParseModels(t *testing.T) {
	for _, c := range []struct {
		file, meta, firstOp string
		nodes               int
	}{
		{"edar-synthetic-a.onnx", "edar.graph", "Transpose", 13},
		{"gym-policy.onnx", "", "", 0},
	} {
		b, err := os.ReadFile("../../testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(m.Graph.Nodes) == 0 || len(m.Graph.Initializers) == 0 || len(m.Graph.Outputs) == 0 {
			t.Errorf("%s: %d nodes, %d initializers, %d outputs", c.file,
				len(m.Graph.Nodes), len(m.Graph.Initializers), len(m.Graph.Outputs))
		}
		if c.nodes > 0 && len(m.Graph.Nodes) != c.nodes {
			t.Errorf("%s: %d nodes, want %d", c.file, len(m.Graph.Nodes), c.nodes)
		}
		if c.firstOp != "" && m.Graph.Nodes[0].Op != c.firstOp {
			t.Errorf("%s: first op %q, want %q", c.file, m.Graph.Nodes[0].Op, c.firstOp)
		}
		if _, ok := m.Metadata[c.meta]; c.meta != "" && !ok {
			t.Errorf("%s: metadata %v lacks %q", c.file, m.Metadata, c.meta)
		}
	}
}

// Corrupt wire data gets an error that says what is wrong.
func TestParseCorruptWire(t *testing.T) {
	graph := func(g []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, 7, protowire.BytesType), g)
	}
	node := func(n []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), n)
	}
	attr := func(a []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), a)
	}
	var ints []byte
	for i := 0; i < MaxAttrInts+1; i++ {
		ints = protowire.AppendVarint(protowire.AppendTag(ints, 8, protowire.VarintType), 1)
	}
	tensor := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 3) // dims [3]
	tensor = protowire.AppendVarint(protowire.AppendTag(tensor, 2, protowire.VarintType), Float)
	tensor = protowire.AppendBytes(protowire.AppendTag(tensor, 9, protowire.BytesType), make([]byte, 8))
	init := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), tensor)
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "0 graphs"},
		{"field number 0", []byte{0x00, 0x01}, "invalid field number"},
		{"truncated length", []byte{0x3a, 0x05, 0x0a}, "unexpected EOF"},
		{"group", []byte{0x3b}, "wire type 3"},
		{"two graphs", append(graph(nil), graph(nil)...), "2 graphs"},
		{"attribute of too many ints", graph(node(attr(ints))), "node 0: attribute"},
		{"raw_data of the wrong size", graph(init), "raw_data has 8 bytes"},
	} {
		_, err := Parse(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.want)
		}
	}
}

// FuzzParse: no input panics or allocates past what its length allows.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile("../../testdata/gym-policy.onnx")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := Parse(data); err == nil && m == nil {
			t.Fatal("nil model without an error")
		}
	})
}
