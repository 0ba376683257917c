// Package pb is a minimal reader of the protobuf wire format, enough for the
// ONNX files of pkg/model's backends. Every length is checked against the
// remaining input, so corrupt input gives an error, never a panic or a huge
// allocation.
package pb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTruncated is returned when a field runs past the end of the input.
var ErrTruncated = errors.New("truncated protobuf")

// Wire types.
const (
	Varint = 0
	I64    = 1
	Len    = 2
	I32    = 5
)

// Reader reads fields from B until it is empty.
type Reader struct{ B []byte }

// Varint reads one base-128 varint.
func (p *Reader) Varint() (uint64, error) {
	v, n := binary.Uvarint(p.B)
	if n <= 0 {
		return 0, ErrTruncated
	}
	p.B = p.B[n:]
	return v, nil
}

// Next returns the next field number, wire type and, for Len, the payload;
// for varint and fixed fields val holds the value.
func (p *Reader) Next() (field int, wt int, val uint64, payload []byte, err error) {
	tag, err := p.Varint()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	field, wt = int(tag>>3), int(tag&7)
	if field == 0 {
		return 0, 0, 0, nil, errors.New("protobuf field number 0")
	}
	switch wt {
	case Varint:
		val, err = p.Varint()
	case I64:
		if len(p.B) < 8 {
			return 0, 0, 0, nil, ErrTruncated
		}
		val, p.B = binary.LittleEndian.Uint64(p.B), p.B[8:]
	case I32:
		if len(p.B) < 4 {
			return 0, 0, 0, nil, ErrTruncated
		}
		val, p.B = uint64(binary.LittleEndian.Uint32(p.B)), p.B[4:]
	case Len:
		var n uint64
		if n, err = p.Varint(); err != nil {
			return
		}
		if n > uint64(len(p.B)) {
			return 0, 0, 0, nil, ErrTruncated
		}
		payload, p.B = p.B[:n], p.B[n:]
	default:
		err = fmt.Errorf("unsupported protobuf wire type %d", wt)
	}
	return
}
