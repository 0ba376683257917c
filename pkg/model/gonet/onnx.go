package gonet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A minimal reader of the protobuf wire format for the few ONNX fields the
// network needs (onnx.proto3): ModelProto.graph (7), ModelProto.ir_version
// (1), ModelProto.metadata_props (14), GraphProto.node (1) op_type (4),
// GraphProto.initializer (5), and
// TensorProto dims (1), data_type (2), float_data (4), int64_data (7), name
// (8), raw_data (9), data_location (14). Everything else is skipped by wire
// type. Every length is checked against the remaining input, so corrupt
// input gives an error, never a panic or a huge allocation.

var errTruncated = errors.New("truncated protobuf")

// wire types
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

type pbuf struct{ b []byte }

func (p *pbuf) varint() (uint64, error) {
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		return 0, errTruncated
	}
	p.b = p.b[n:]
	return v, nil
}

// next returns the next field number, wire type and, for wireLen, the
// payload; for varint/fixed fields val holds the value.
func (p *pbuf) next() (field int, wt int, val uint64, payload []byte, err error) {
	tag, err := p.varint()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	field, wt = int(tag>>3), int(tag&7)
	if field == 0 {
		return 0, 0, 0, nil, errors.New("protobuf field number 0")
	}
	switch wt {
	case wireVarint:
		val, err = p.varint()
	case wireI64:
		if len(p.b) < 8 {
			return 0, 0, 0, nil, errTruncated
		}
		val, p.b = binary.LittleEndian.Uint64(p.b), p.b[8:]
	case wireI32:
		if len(p.b) < 4 {
			return 0, 0, 0, nil, errTruncated
		}
		val, p.b = uint64(binary.LittleEndian.Uint32(p.b)), p.b[4:]
	case wireLen:
		var n uint64
		if n, err = p.varint(); err != nil {
			return
		}
		if n > uint64(len(p.b)) {
			return 0, 0, 0, nil, errTruncated
		}
		payload, p.b = p.b[:n], p.b[n:]
	default:
		err = fmt.Errorf("unsupported protobuf wire type %d", wt)
	}
	return
}

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

// ONNX TensorProto data types used here.
const (
	onnxFloat = 1
	onnxInt64 = 7
)

func parseModel(b []byte) (*onnxModel, error) {
	m := &onnxModel{metadata: map[string]string{}, initializers: map[string]*tensor{}}
	p := pbuf{b}
	graphs := 0
	for len(p.b) > 0 {
		f, wt, v, pl, err := p.next()
		if err != nil {
			return nil, err
		}
		switch {
		case f == 1 && wt == wireVarint:
			m.irVersion = int64(v)
		case f == 7 && wt == wireLen:
			graphs++
			if err := m.parseGraph(pl); err != nil {
				return nil, fmt.Errorf("graph: %w", err)
			}
		case f == 14 && wt == wireLen:
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
	p := pbuf{b}
	for len(p.b) > 0 {
		f, wt, _, pl, err := p.next()
		if err != nil {
			return "", "", err
		}
		if wt == wireLen && f == 1 {
			k = string(pl)
		} else if wt == wireLen && f == 2 {
			v = string(pl)
		}
	}
	return k, v, nil
}

func (m *onnxModel) parseGraph(b []byte) error {
	p := pbuf{b}
	for len(p.b) > 0 {
		f, wt, _, pl, err := p.next()
		if err != nil {
			return err
		}
		if f == 1 && wt == wireLen { // NodeProto: op_type is field 4
			if len(m.ops) >= 1024 {
				return errors.New("too many nodes")
			}
			q := pbuf{pl}
			op := ""
			for len(q.b) > 0 {
				nf, nwt, _, npl, err := q.next()
				if err != nil {
					return fmt.Errorf("node: %w", err)
				}
				if nf == 4 && nwt == wireLen {
					op = string(npl)
				}
			}
			m.ops = append(m.ops, op)
		}
		if f == 5 && wt == wireLen {
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

// maxElems bounds an initializer: the network's largest has 28,800.
const maxElems = 1 << 20

// parseTensor decodes a float32 initializer; int64 ones (shapes, slice
// bounds) are skipped and return a nil tensor.
func parseTensor(b []byte) (string, *tensor, error) {
	var (
		name      string
		dims      []int64
		dtype     uint64
		raw       []byte
		haveRaw   bool
		floats    []float32
		external  bool
		elemCount = int64(1)
	)
	p := pbuf{b}
	for len(p.b) > 0 {
		f, wt, v, pl, err := p.next()
		if err != nil {
			return name, nil, err
		}
		switch {
		case f == 1 && wt == wireVarint:
			dims = append(dims, int64(v))
		case f == 1 && wt == wireLen: // packed dims
			q := pbuf{pl}
			for len(q.b) > 0 {
				d, err := q.varint()
				if err != nil {
					return name, nil, err
				}
				dims = append(dims, int64(d))
			}
		case f == 2 && wt == wireVarint:
			dtype = v
		case f == 4 && wt == wireI32:
			floats = append(floats, math.Float32frombits(uint32(v)))
		case f == 4 && wt == wireLen: // packed float_data
			if len(pl)%4 != 0 || len(pl)/4 > maxElems {
				return name, nil, errors.New("bad packed float_data")
			}
			for i := 0; i < len(pl); i += 4 {
				floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(pl[i:])))
			}
		case f == 8 && wt == wireLen:
			name = string(pl)
		case f == 9 && wt == wireLen:
			raw, haveRaw = pl, true
		case f == 14 && wt == wireVarint:
			external = v == 1
		}
		if len(floats) > maxElems || len(dims) > 8 {
			return name, nil, errors.New("initializer too large")
		}
	}
	if dtype != onnxFloat {
		return name, nil, nil
	}
	if external {
		return name, nil, errors.New("external tensor data is not supported")
	}
	for _, d := range dims {
		if d < 0 || d > maxElems {
			return name, nil, fmt.Errorf("dimension %d", d)
		}
		elemCount *= d
		if elemCount > maxElems {
			return name, nil, errors.New("initializer too large")
		}
	}
	if haveRaw {
		if int64(len(raw)) != 4*elemCount {
			return name, nil, fmt.Errorf("raw_data has %d bytes, dims %v need %d", len(raw), dims, 4*elemCount)
		}
		floats = make([]float32, elemCount)
		for i := range floats {
			floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	} else if int64(len(floats)) != elemCount {
		return name, nil, fmt.Errorf("float_data has %d values, dims %v need %d", len(floats), dims, elemCount)
	}
	return name, &tensor{dims: dims, data: floats}, nil
}
