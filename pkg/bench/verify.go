package bench

import (
	"bytes"
	"errors"
	"io"
)

// payloadCheck is an io.Writer that compares what is written to it, in
// order, with the payload of one seed (newPayload): the client checks what
// it received against what the server was to send, byte for byte, without
// hashing either side. An exact comparison catches every corruption, loss,
// repetition or misplaced block a digest would, and costs one pass over the
// bytes instead of a SHA-256 at each end (about a tenth of the training
// environment's CPU: docs/edar-generalisation.md §7). Write never fails; ok
// gives the verdict. Not safe for concurrent use.
type payloadCheck struct {
	want payload
	n    int64 // bytes written so far
	bad  bool  // some byte differed from the payload's
}

func newPayloadCheck(seed int64) *payloadCheck {
	return &payloadCheck{want: *newPayload(seed)}
}

// Write compares p with the payload's next len(p) bytes.
func (c *payloadCheck) Write(p []byte) (int, error) {
	if !c.want.match(p) {
		c.bad = true
	}
	c.n += int64(len(p))
	return len(p), nil
}

// ok reports whether exactly n bytes were written and each was the
// payload's.
func (c *payloadCheck) ok(n int64) bool { return !c.bad && c.n == n }

// match reports whether b is the payload's next len(b) bytes, and moves past
// them. It reads the payload in place: the block, and the index that
// replaces the first 8 bytes of each repetition.
func (p *payload) match(b []byte) bool {
	same := true
	for len(b) > 0 {
		idx, i := p.off/payloadBlock, int(p.off%payloadBlock)
		k := min(len(b), payloadBlock-i)
		for j := i; j < 8 && j < i+k; j++ {
			if b[j-i] != byte(idx>>(8*j)) {
				same = false
			}
		}
		if lo := max(i, 8); lo < i+k && !bytes.Equal(b[lo-i:k], p.block[lo:i+k]) {
			same = false
		}
		b = b[k:]
		p.off += int64(k)
	}
	return same
}

// errTrailing is what wantEOF returns when a response goes on past the
// bytes asked for.
var errTrailing = errors.New("bench: the response goes on past the bytes asked for")

// wantEOF reads what is left of r, which must be nothing: the server ends
// each response where its payload ends.
func wantEOF(r io.Reader) error {
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	switch {
	case n > 0:
		return errTrailing
	case err == io.EOF:
		return nil
	}
	return err
}
