package session

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// chunkReader returns its bytes in reads of random sizes, as a QUIC stream
// returns whatever arrived: frames straddle the reader's buffer anywhere.
type chunkReader struct {
	b   []byte
	rng *rand.Rand
	max int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(r.max))], r.b)
	r.b = r.b[n:]
	return n, nil
}

// The read loop delivers every segment of the data stream, in place or
// copied, in order or not, whatever the read sizes; it stops with io.EOF at
// the stream's clean end. RFC 9000 §2.2: "STREAM frame boundaries are not
// expected to be preserved when data is transmitted, retransmitted after
// packet loss, or delivered to the application at a receiver."
func TestReadSegments(t *testing.T) {
	for _, maxRead := range []int{1, 700, 5000, 64 << 10} {
		sp := newScriptedPeer(t, nil)
		sp.s.rcv.maxData = sp.s.rcv.nextMaxData() // as if an Ack announced the whole window
		rng := rand.New(rand.NewPCG(uint64(maxRead), 3))
		want := make([]byte, 300<<10)
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		for rest := want; len(rest) > 0; {
			n := min(len(rest), 1000+rng.IntN(3000))
			sp.data(0, rest[:n])
			rest = rest[n:]
		}
		var segs []wire.Segment
		for len(sp.pend) > 0 {
			segs = append(segs, sp.cut(1+rng.IntN(1500)))
		}
		for i := 0; i+1 < len(segs); i += 2 + rng.IntN(4) { // some arrive out of order
			segs[i], segs[i+1] = segs[i+1], segs[i]
		}
		var stream []byte
		for _, g := range segs {
			stream = append(wire.AppendSegmentHeader(stream, g.Seq, g.Offset, len(g.Payload)), g.Payload...)
		}
		sp.p.in = bufio.NewReaderSize(&chunkReader{b: stream, rng: rng, max: maxRead}, 64<<10)
		stop := sp.serveBatches()
		conn, err := sp.s.readSegments(sp.p)
		stop()
		if conn || err != io.EOF {
			t.Fatalf("reads of ≤ %d bytes: stopped with %v (connection error %v), want io.EOF", maxRead, err, conn)
		}
		st := tryAccept(sp.s)
		st.rmu.Lock()
		n := st.recv.buf.readable()
		st.rmu.Unlock()
		got := make([]byte, n)
		io.ReadFull(st, got)
		if !bytes.Equal(got, want) {
			t.Errorf("reads of ≤ %d bytes: the stream holds %d bytes, not the %d sent", maxRead, n, len(want))
		}
		sp.close()
	}
}

// A malformed frame, whole in the buffer or not, stops the loop with a
// protocol error; so does a stream that ends inside a frame.
func TestReadSegmentsMalformed(t *testing.T) {
	for _, truncated := range []bool{false, true} {
		for _, maxRead := range []int{1, 64 << 10} {
			sp := newScriptedPeer(t, nil)
			sp.s.rcv.maxData = sp.s.rcv.nextMaxData()
			sp.data(0, []byte("hello"))
			g := sp.cut(1500)
			good := append(wire.AppendSegmentHeader(nil, g.Seq, g.Offset, len(g.Payload)), g.Payload...)
			bad := append(append([]byte(nil), good...), wire.TypeAck, 0, 0)
			if truncated {
				bad = good[:len(good)-1]
			}
			sp.p.in = bufio.NewReader(&chunkReader{b: bad, rng: rand.New(rand.NewPCG(1, 1)), max: maxRead})
			stop := sp.serveBatches()
			_, err := sp.s.readSegments(sp.p)
			stop()
			if !errors.Is(err, wire.ErrMalformed) {
				t.Errorf("truncated %v, reads of ≤ %d bytes: err = %v, want a malformed frame", truncated, maxRead, err)
			}
			sp.close()
		}
	}
}
