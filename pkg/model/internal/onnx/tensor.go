package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// ONNX TensorProto data types read here.
const (
	Float = 1 // float32
	Int64 = 7
)

// Limits of a tensor ParseTensor accepts: pkg/model's networks are far
// smaller (EdAR's largest initializer has 28,800 elements).
const (
	MaxElems = 1 << 20 // elements
	MaxDims  = 8       // dimensions
)

// errTooLarge is returned for a tensor past MaxElems or MaxDims.
var errTooLarge = errors.New("tensor too large")

// Tensor is a TensorProto: Float holds the data of a Float tensor, Int of
// an Int64 one; other types carry no data.
type Tensor struct {
	Name  string    // initializer name
	Dims  []int64   // shape
	DType uint64    // data_type: Float, Int64 or another (no data)
	Float []float32 // the data of a Float tensor, row-major
	Int   []int64   // the data of an Int64 tensor, row-major
}

// ParseTensor decodes a TensorProto (dims 1, data_type 2, float_data 4,
// int64_data 7, name 8, raw_data 9, data_location 14), checking that the
// data matches the dims and stays within MaxElems. External data is
// refused. The returned Tensor is never nil, so that an error can name it.
func ParseTensor(b []byte) (*Tensor, error) {
	t := &Tensor{}
	var raw []byte
	haveRaw, external := false, false
	err := eachField(b, func(f field) error {
		var err error
		switch {
		case f.num == 1 && f.typ == protowire.VarintType:
			t.Dims = append(t.Dims, int64(f.val))
		case f.num == 1 && f.typ == protowire.BytesType: // packed dims
			t.Dims, err = appendPacked(t.Dims, f.payload, MaxDims)
		case f.num == 2 && f.typ == protowire.VarintType:
			t.DType = f.val
		case f.num == 4 && f.typ == protowire.Fixed32Type:
			t.Float = append(t.Float, math.Float32frombits(uint32(f.val)))
		case f.num == 4 && f.typ == protowire.BytesType: // packed float_data
			if len(f.payload)%4 != 0 || len(f.payload)/4 > MaxElems {
				return errors.New("bad packed float_data")
			}
			for i := 0; i < len(f.payload); i += 4 {
				t.Float = append(t.Float, math.Float32frombits(binary.LittleEndian.Uint32(f.payload[i:])))
			}
		case f.num == 7 && f.typ == protowire.VarintType:
			t.Int = append(t.Int, int64(f.val))
		case f.num == 7 && f.typ == protowire.BytesType: // packed int64_data
			t.Int, err = appendPacked(t.Int, f.payload, MaxElems+1)
		case f.num == 8 && f.typ == protowire.BytesType:
			t.Name = string(f.payload)
		case f.num == 9 && f.typ == protowire.BytesType:
			raw, haveRaw = f.payload, true
		case f.num == 14 && f.typ == protowire.VarintType:
			external = f.val == 1
		}
		if errors.Is(err, errTooMany) || len(t.Float) > MaxElems || len(t.Int) > MaxElems || len(t.Dims) > MaxDims {
			return errTooLarge
		}
		return err
	})
	if err != nil {
		return t, err
	}
	if t.DType != Float && t.DType != Int64 {
		t.Float, t.Int = nil, nil
		return t, nil
	}
	if external {
		return t, errors.New("external tensor data is not supported")
	}
	return t, t.fill(raw, haveRaw)
}

// fill checks the data against the dims and, for raw_data, decodes it.
func (t *Tensor) fill(raw []byte, haveRaw bool) error {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 || d > MaxElems {
			return fmt.Errorf("dimension %d", d)
		}
		n *= d
		if n > MaxElems {
			return errTooLarge
		}
	}
	size, have := int64(4), int64(len(t.Float))
	if t.DType == Int64 {
		size, have = 8, int64(len(t.Int))
	}
	if !haveRaw {
		if have != n {
			return fmt.Errorf("data has %d values, dims %v need %d", have, t.Dims, n)
		}
		return nil
	}
	if int64(len(raw)) != size*n {
		return fmt.Errorf("raw_data has %d bytes, dims %v need %d", len(raw), t.Dims, size*n)
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
	return nil
}
