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
