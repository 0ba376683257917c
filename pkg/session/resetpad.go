package session

import "github.com/mpqsched/mpqsched/pkg/wire"

// A segment sent again carries no data of a stream this end has reset
// (RFC 9000 §13.3: "Application data sent in STREAM frames is retransmitted
// in new STREAM frames unless the endpoint has sent a RESET_STREAM for that
// stream").
//
// Segments are kept whole until acknowledged, and their sequence numbers
// and connection offsets must stay as they were, so the session cannot
// leave a frame out. Before a segment goes out again (nextFor), the
// STREAM frames of streams whose send side was reset are overwritten with
// PADDING, which the peer skips. The bytes still travel; the data does
// not, and the peer never sees a reset stream's bytes after its
// RESET_STREAM. A stream that was freed since (both of its sides ended) is
// no longer known here, and its frames go again as they were: the peer
// discards data past a reset either way (§3.2).

// resetPadder is the wire.FrameHandler that pads a segment's frames of
// reset streams. Session.mu is held: the path writers copy a segment's
// bytes under it (pull.go), so the rewrite is never seen half done.
type resetPadder struct {
	s      *Session
	seg    []byte
	id     uint64
	stream bool // the frame being parsed is a STREAM frame of stream id
	padded int  // bytes turned into PADDING
}

// padResetLocked pads g's frames of reset streams and returns how many
// bytes it padded. s.mu is held.
func (s *Session) padResetLocked(g *segment) int {
	if s.streams.resets == 0 {
		return 0 // no stream was ever reset: nothing to look for
	}
	p := resetPadder{s: s, seg: g.data}
	_ = wire.ParseFrames(g.data, &p) // the session framed it: well-formed
	return p.padded
}

func (p *resetPadder) StreamFrame(id, _ uint64, _ []byte, _ bool) error {
	p.id, p.stream = id, true
	return nil
}

func (p *resetPadder) FrameEnd(start, end int) {
	if p.stream {
		if st := p.s.streams.byID[p.id]; st != nil && st.send.err != nil {
			clear(p.seg[start:end]) // PADDING is 0x00
			p.padded += end - start
		}
	}
	p.stream = false
}

func (p *resetPadder) ResetStream(_, _, _ uint64) error     { return nil }
func (p *resetPadder) StopSending(_, _ uint64) error        { return nil }
func (p *resetPadder) MaxData(_ uint64) error               { return nil }
func (p *resetPadder) MaxStreamData(_, _ uint64) error      { return nil }
func (p *resetPadder) MaxStreams(_ uint64, _ bool) error    { return nil }
func (p *resetPadder) PathStatus(_, _ uint64, _ bool) error { return nil }
