package bench

import (
	"bytes"
	"io"
	"testing"
)

// The payload depends on the offset only: read in any piece sizes it is the
// same, and a different seed or a swapped block changes it.
func TestPayloadDeterministic(t *testing.T) {
	const n = 3*payloadBlock + 12345
	whole := make([]byte, n)
	io.ReadFull(newPayload(7), whole)
	var pieces []byte
	p := newPayload(7)
	for size := 1; len(pieces) < n; size = size*3 + 1 {
		b := make([]byte, min(size%70000+1, n-len(pieces)))
		p.Read(b)
		pieces = append(pieces, b...)
	}
	if !bytes.Equal(whole, pieces) {
		t.Fatal("the payload depends on read sizes")
	}
	other := make([]byte, n)
	io.ReadFull(newPayload(8), other)
	if bytes.Equal(whole, other) {
		t.Fatal("seeds 7 and 8 give the same payload")
	}
	if bytes.Equal(whole[:payloadBlock], whole[payloadBlock:2*payloadBlock]) {
		t.Fatal("consecutive blocks are identical: a repeated block would go unnoticed")
	}
}

// payloadCheck takes the payload written in any piece sizes, and refuses it
// with any byte changed (in a block or in a repetition's index), a block
// repeated, a byte missing or extra, or another seed's payload.
func TestPayloadCheck(t *testing.T) {
	const n = 3*payloadBlock + 12345
	whole := make([]byte, n)
	io.ReadFull(newPayload(7), whole)
	check := func(b []byte, pieces int) bool {
		c := newPayloadCheck(7)
		for size := pieces; len(b) > 0; size = size*5%70001 + 1 {
			k := min(size, len(b))
			c.Write(b[:k])
			b = b[k:]
		}
		return c.ok(n)
	}
	for _, pieces := range []int{1, 7, 8, 9, payloadBlock, n} {
		if !check(whole, pieces) {
			t.Fatalf("the payload itself, written from pieces of %d: refused", pieces)
		}
	}
	for _, at := range []int{0, 7, 8, payloadBlock - 1, payloadBlock, payloadBlock + 3, n - 1} {
		b := bytes.Clone(whole)
		b[at] ^= 0x40
		if check(b, 1000) {
			t.Errorf("byte %d changed: accepted", at)
		}
	}
	repeated := bytes.Clone(whole)
	copy(repeated[payloadBlock:], whole[:payloadBlock])
	if check(repeated, 4096) {
		t.Error("block 0 in place of block 1: accepted")
	}
	if check(whole[:n-1], 4096) || check(append(bytes.Clone(whole), 0), 4096) {
		t.Error("a byte short or extra: accepted")
	}
	other := make([]byte, n)
	io.ReadFull(newPayload(8), other)
	if check(other, 4096) {
		t.Error("seed 8's payload: accepted")
	}
}
