package gonet

import (
	"errors"
	"fmt"

	"github.com/mpqsched/mpqsched/pkg/model/internal/pb"
)

// The few ONNX fields the network needs (onnx.proto3), read with
// pkg/model/internal/pb: ModelProto.graph (7), ModelProto.ir_version (1),
// ModelProto.metadata_props (14), GraphProto.node (1) op_type (4),
// GraphProto.initializer (5), and TensorProto dims (1), data_type (2),
// float_data (4), int64_data (7), name (8), raw_data (9), data_location
// (14). Everything else is skipped by wire type.

// onnxModel is what the reader extracts from a ModelProto.
type onnxModel struct {
	irVersion    int64
	ops          []string // op_type of each graph node, in order
	metadata     map[string]string
	initializers map[string]*tensor
}

// tensor is a float32 initializer.
type tensor struct {
	dims []int64
	data []float32
}

func parseModel(b []byte) (*onnxModel, error) {
	m := &onnxModel{metadata: map[string]string{}, initializers: map[string]*tensor{}}
	p := pb.Reader{B: b}
	graphs := 0
	for len(p.B) > 0 {
		f, wt, v, pl, err := p.Next()
		if err != nil {
			return nil, err
		}
		switch {
		case f == 1 && wt == pb.Varint:
			m.irVersion = int64(v)
		case f == 7 && wt == pb.Len:
			graphs++
			if err := m.parseGraph(pl); err != nil {
				return nil, fmt.Errorf("graph: %w", err)
			}
		case f == 14 && wt == pb.Len:
			k, val, err := parseEntry(pl)
			if err != nil {
				return nil, fmt.Errorf("metadata_props: %w", err)
			}
			m.metadata[k] = val
		}
	}
	if graphs != 1 {
		return nil, fmt.Errorf("model has %d graphs, want 1", graphs)
	}
	return m, nil
}

func parseEntry(b []byte) (k, v string, err error) {
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

func (m *onnxModel) parseGraph(b []byte) error {
	p := pb.Reader{B: b}
	for len(p.B) > 0 {
		f, wt, _, pl, err := p.Next()
		if err != nil {
			return err
		}
		if f == 1 && wt == pb.Len { // NodeProto: op_type is field 4
			if len(m.ops) >= 1024 {
				return errors.New("too many nodes")
			}
			q := pb.Reader{B: pl}
			op := ""
			for len(q.B) > 0 {
				nf, nwt, _, npl, err := q.Next()
				if err != nil {
					return fmt.Errorf("node: %w", err)
				}
				if nf == 4 && nwt == pb.Len {
					op = string(npl)
				}
			}
			m.ops = append(m.ops, op)
		}
		if f == 5 && wt == pb.Len {
			name, t, err := parseTensor(pl)
			if err != nil {
				return fmt.Errorf("initializer %q: %w", name, err)
			}
			if t != nil {
				m.initializers[name] = t
			}
		}
	}
	return nil
}

// parseTensor decodes a float32 initializer; int64 ones (shapes, slice
// bounds) are skipped and return a nil tensor.
func parseTensor(b []byte) (string, *tensor, error) {
	t, err := pb.ParseTensor(b)
	if err != nil || t.DType != pb.Float {
		return t.Name, nil, err
	}
	return t.Name, &tensor{dims: t.Dims, data: t.Float}, nil
}
