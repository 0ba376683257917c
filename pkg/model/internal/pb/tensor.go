package pb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ONNX TensorProto data types read here.
const (
	Float = 1 // float32
	Int64 = 7
)

// MaxElems bounds a tensor's elements: pkg/model's networks are far
// smaller (EdAR's largest initializer has 28,800).
const MaxElems = 1 << 20

// Tensor is a TensorProto: Float holds the data of a Float tensor, Int of
// an Int64 one; other types carry no data.
type Tensor struct {
	Name  string
	Dims  []int64
	DType uint64
	Float []float32
	Int   []int64
}

// ParseTensor decodes a TensorProto (dims 1, data_type 2, float_data 4,
// int64_data 7, name 8, raw_data 9, data_location 14), checking that the
// data matches the dims and stays within MaxElems. External data is refused.
func ParseTensor(b []byte) (*Tensor, error) {
	t := &Tensor{}
	var raw []byte
	haveRaw, external := false, false
	p := Reader{B: b}
	for len(p.B) > 0 {
		f, wt, v, pl, err := p.Next()
		if err != nil {
			return t, err
		}
		switch {
		case f == 1 && wt == Varint:
			t.Dims = append(t.Dims, int64(v))
		case f == 1 && wt == Len: // packed dims
			q := Reader{B: pl}
			for len(q.B) > 0 {
				d, err := q.Varint()
				if err != nil {
					return t, err
				}
				t.Dims = append(t.Dims, int64(d))
			}
		case f == 2 && wt == Varint:
			t.DType = v
		case f == 4 && wt == I32:
			t.Float = append(t.Float, math.Float32frombits(uint32(v)))
		case f == 4 && wt == Len: // packed float_data
			if len(pl)%4 != 0 || len(pl)/4 > MaxElems {
				return t, errors.New("bad packed float_data")
			}
			for i := 0; i < len(pl); i += 4 {
				t.Float = append(t.Float, math.Float32frombits(binary.LittleEndian.Uint32(pl[i:])))
			}
		case f == 7 && wt == Varint:
			t.Int = append(t.Int, int64(v))
		case f == 7 && wt == Len: // packed int64_data
			q := Reader{B: pl}
			for len(q.B) > 0 && len(t.Int) <= MaxElems {
				d, err := q.Varint()
				if err != nil {
					return t, err
				}
				t.Int = append(t.Int, int64(d))
			}
		case f == 8 && wt == Len:
			t.Name = string(pl)
		case f == 9 && wt == Len:
			raw, haveRaw = pl, true
		case f == 14 && wt == Varint:
			external = v == 1
		}
		if len(t.Float) > MaxElems || len(t.Int) > MaxElems || len(t.Dims) > 8 {
			return t, errors.New("tensor too large")
		}
	}
	if t.DType != Float && t.DType != Int64 {
		t.Float, t.Int = nil, nil
		return t, nil
	}
	if external {
		return t, errors.New("external tensor data is not supported")
	}
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 || d > MaxElems {
			return t, fmt.Errorf("dimension %d", d)
		}
		n *= d
		if n > MaxElems {
			return t, errors.New("tensor too large")
		}
	}
	size, have := int64(4), int64(len(t.Float))
	if t.DType == Int64 {
		size, have = 8, int64(len(t.Int))
	}
	if haveRaw {
		if int64(len(raw)) != size*n {
			return t, fmt.Errorf("raw_data has %d bytes, dims %v need %d", len(raw), t.Dims, size*n)
		}
		if t.DType == Float {
			t.Float = make([]float32, n)
			for i := range t.Float {
				t.Float[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		} else {
			t.Int = make([]int64, n)
			for i := range t.Int {
				t.Int[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
	} else if have != n {
		return t, fmt.Errorf("data has %d values, dims %v need %d", have, t.Dims, n)
	}
	return t, nil
}
