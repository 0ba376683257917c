package gonet

import (
	"github.com/mpqsched/mpqsched/pkg/model/internal/onnx"
)

// onnxModel is what Parse needs of a ModelProto read by
// pkg/model/internal/onnx.
type onnxModel struct {
	ops          []string // op_type of each graph node, in order
	metadata     map[string]string
	initializers map[string]*tensor
}

// tensor is a float32 initializer.
type tensor struct {
	dims []int64
	data []float32
}

// parseModel reads the model and keeps its float32 initializers; int64
// ones (shapes, slice bounds) are skipped.
func parseModel(b []byte) (*onnxModel, error) {
	om, err := onnx.Parse(b)
	if err != nil {
		return nil, err
	}
	m := &onnxModel{metadata: om.Metadata, initializers: map[string]*tensor{}}
	for _, n := range om.Graph.Nodes {
		m.ops = append(m.ops, n.Op)
	}
	for _, t := range om.Graph.Initializers {
		if t.DType == onnx.Float {
			m.initializers[t.Name] = &tensor{dims: t.Dims, data: t.Float}
		}
	}
	return m, nil
}
