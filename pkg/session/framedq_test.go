package session

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Issue 30, what to build, item 4: "Application bytes are copied once,
// into the stream's send buffer. Frames refer to buffer chunks until those
// are acknowledged." Seeded random frames (control frames, STREAM frames
// of three streams, ends alone) go into a framedQueue; segments are cut at
// frame ends, as cut does; the segments' payloads (appendPayload) must be
// the frames as a plain byte stream would hold them, each segment's size
// its share of it, and the streams' buffers must free every block once all
// segments are acknowledged.
func TestFramedQueueModel(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var q framedQueue
		q.inline.recycle = true
		streams := make([]*Stream, 3)
		for i := range streams {
			streams[i] = &Stream{id: uint64(4 * i)}
		}
		var want []byte // the model: every frame, data inline
		var ends []uint64
		var spans []frameSpan // the STREAM frames in want
		for range 1 + rng.IntN(60) {
			switch k := rng.IntN(4); {
			case k == 0:
				f := wire.AppendMaxData(nil, rng.Uint64N(1<<40))
				q.Append(f)
				want = append(want, f...)
			default:
				st := streams[rng.IntN(len(streams))]
				p := make([]byte, 1+rng.IntN(3000))
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				st.send.buf.write(p)
				hdr := wire.AppendStreamFrameHeader(nil, st.id, st.send.framed, len(p), false)
				q.appendData(uint64(len(want)), hdr, st, st.send.framed, len(p))
				st.send.framed += uint64(len(p))
				want = append(want, hdr...)
				want = append(want, p...)
				spans = append(spans, frameSpan{len(want) - len(hdr) - len(p), len(want), st})
			}
			ends = append(ends, uint64(len(want)))
		}
		if q.Len() != len(want) {
			t.Fatalf("seed %d: Len %d, want %d", seed, q.Len(), len(want))
		}
		// A stream reset after its frames were framed and before they go:
		// they go as PADDING, header included (RFC 9000 §3.3: "A sender
		// MUST NOT send a STREAM or STREAM_DATA_BLOCKED frame for a stream
		// in the "Reset Sent" state or any terminal state -- that is,
		// after sending a RESET_STREAM frame").
		if rng.IntN(2) == 0 {
			st := streams[rng.IntN(len(streams))]
			st.send.err = errFlushing
			st.send.buf.drop(st.send.framed)
			for _, sp := range spans {
				if sp.st == st {
					clear(want[sp.start:sp.end])
				}
			}
		}
		// Cut at random frame ends, several frames per segment at times.
		var got []byte
		var segs []*segment
		from := uint64(0)
		for i := 0; i < len(ends); {
			i += 1 + rng.IntN(3)
			to := ends[min(i, len(ends))-1]
			g := &segment{off: from, size: to - from}
			q.take(g, from, int(to-from))
			b := appendPayload(nil, g)
			if uint64(len(b)) != g.size {
				t.Fatalf("seed %d: segment [%d,%d) has %d bytes", seed, from, to, len(b))
			}
			got = append(got, b...)
			segs = append(segs, g)
			from = to
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: the segments' payloads differ from the frames framed", seed)
		}
		if q.Len() != 0 || len(q.refs) != 0 {
			t.Fatalf("seed %d: %d bytes, %d refs left", seed, q.Len(), len(q.refs))
		}
		// Acknowledged in random order, the buffers give every block back.
		rng.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
		for _, g := range segs {
			ackRefs(g)
		}
		for _, st := range streams {
			if n := len(st.send.buf.blocks); n != 0 || (st.send.err == nil && st.send.buf.acked != st.send.buf.end) {
				t.Fatalf("seed %d: stream %d keeps %d blocks, acked %d of %d", seed, st.id, n, st.send.buf.acked, st.send.buf.end)
			}
		}
	}
}

// frameSpan is where a STREAM frame of st lies in a byte stream.
type frameSpan struct {
	start, end int
	st         *Stream
}

// The scheduler's round frames and cuts segments, so cutting must not
// allocate per segment, even for a segment of several frames (requests and
// short answers of several streams): its inline bytes and refs come from
// slabs, one allocation per many segments, as segments themselves do
// (newSegment).
func TestFramedQueueCutAllocs(t *testing.T) {
	var q framedQueue
	q.inline.recycle = true
	streams := make([]*Stream, 4)
	for i := range streams {
		streams[i] = &Stream{id: uint64(4 * i)}
	}
	p := make([]byte, 100)
	var hb [maxFrameHeader]byte
	var coff uint64
	var segs [64]segment
	round := func() {
		for i := range segs {
			g := &segs[i]
			from := coff
			for _, st := range streams { // four frames of 100 bytes: 4 headers and 4 refs
				st.send.buf.write(p)
				hdr := wire.AppendStreamFrameHeader(hb[:0], st.id, st.send.framed, len(p), false)
				q.appendData(coff, hdr, st, st.send.framed, len(p))
				st.send.framed += uint64(len(p))
				coff += uint64(len(hdr) + len(p))
			}
			*g = segment{}
			q.take(g, from, int(coff-from))
			ackRefs(g)
		}
	}
	round()
	round()
	allocs := testing.AllocsPerRun(20, round) // per 64 segments
	// (Under the race detector sync.Pool drops a quarter of its Puts on
	// purpose, so the send buffers' blocks are allocated again.)
	if per := allocs / float64(len(segs)); per > 0.1 && !raceEnabled {
		t.Errorf("%.2f allocations per segment of 4 frames, want at most 0.1", per)
	}
}
