package onnx

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// field is one decoded protobuf field: for varint and fixed wire types val
// holds the value, for length-delimited ones payload holds the bytes (a
// sub-slice of the input, not a copy).
type field struct {
	num     protowire.Number
	typ     protowire.Type
	val     uint64
	payload []byte
}

// eachField calls fn on every field of message b in order, with
// protowire's checked decoding: a field that runs past the end, a field
// number 0 or a group (ONNX has none) is an error, never a panic.
func eachField(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.val, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.val = uint64(v)
		case protowire.Fixed64Type:
			f.val, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			f.payload, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("unsupported protobuf wire type %d", typ)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// errTooMany is returned by appendPacked past its limit.
var errTooMany = errors.New("too many packed values")

// appendPacked appends the packed varints of b to s, refusing to grow s
// past max values.
func appendPacked(s []int64, b []byte, max int) ([]int64, error) {
	for len(b) > 0 {
		if len(s) >= max {
			return s, errTooMany
		}
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return s, protowire.ParseError(n)
		}
		s, b = append(s, int64(v)), b[n:]
	}
	return s, nil
}
