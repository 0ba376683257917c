package session

import (
	"bufio"
	"errors"
	"io"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Read buffers of a path's data stream (bytes): the handshake is read
// through handshakeReadBuf (its frames are under 100 bytes), segments
// through dataReadBuf, which holds several whole segments so that
// bufferedSegments handles them under one lock.
const (
	handshakeReadBuf = 512
	dataReadBuf      = 64 << 10
)

// readLoop reads the peer's segments from the path's data stream until it
// ends, then ends the path (or the session, for a connection error).
func (s *Session) readLoop(p *path) {
	conn, err := s.readSegments(p)
	switch {
	case conn:
		s.fail(err)
	case errors.Is(err, wire.ErrMalformed):
		s.fail(protocolErr(err))
	default:
		if err == io.EOF {
			err = errors.New("peer closed the path's data stream")
		}
		s.pathGone(p, err)
	}
}

// readSegments hands the segments of p's data stream to the session until
// the stream fails (the read error: io.EOF at a clean end, a wire
// ErrMalformed error for a malformed frame) or the session refuses a
// segment (a connection error, conn set). The frames that lie whole in the
// path's read buffer are handled in place (no copy) and together, under one
// acquisition of s.mu with one clock reading; only a frame that straddles
// the buffer's end is read with a copy.
//
// An idle path costs little: the stream is read through the handshake's
// small buffer until the first segment's bytes arrive, and only then
// through a buffer of dataReadBuf bytes (kept until the path ends); the
// copy buffer for straddling frames is made the first time one straddles.
func (s *Session) readSegments(p *path) (conn bool, err error) {
	var buf []byte
	for {
		if _, err := p.in.Peek(1); err != nil { // wait for data
			return false, err
		}
		if p.in.Size() < dataReadBuf {
			// A bufio.Reader reads straight into the caller's slice when its
			// own buffer is empty and the slice is larger, so the small
			// reader below costs no copy once drained.
			p.in = bufio.NewReaderSize(p.in, dataReadBuf)
		}
		n, err := s.bufferedSegments(p)
		if err != nil {
			return true, err
		}
		if n > 0 {
			continue
		}
		// The next frame is only partly buffered.
		if buf == nil {
			buf = make([]byte, wire.MaxSegmentPayload)
		}
		seg, err := wire.ReadSegment(p.in, buf)
		if err != nil {
			return false, err
		}
		if err := s.segmentReceived(p, seg, false); err != nil {
			return true, err
		}
	}
}

// maxReadBatch bounds the segments handled under one acquisition of s.mu,
// so that a stream reader or the ack loop waits for the lock no longer than
// that.
const maxReadBatch = 16

// bufferedSegments handles the whole segment frames at the front of p's read
// buffer (at most maxReadBatch) and consumes them; it returns how many it
// handled (0 if the first frame is incomplete). An error is a connection
// error.
func (s *Session) bufferedSegments(p *path) (int, error) {
	b, _ := p.in.Peek(p.in.Buffered()) // never fails: the bytes are buffered
	used, k := 0, 0
	now := s.now()
	s.mu.Lock()
	for k < maxReadBatch {
		seg, n, err := wire.ParseSegment(b[used:])
		if err != nil {
			s.mu.Unlock()
			return k, protocolErr(err)
		}
		if n == 0 {
			break
		}
		if err := s.segmentReceivedLocked(p, seg, now, false); err != nil {
			s.mu.Unlock()
			return k, err
		}
		used += n
		k++
	}
	wake := k > 0 && p.tr == nil && p.sv.segmentsArrived(now)
	s.mu.Unlock()
	if wake {
		poke(s.wake)
	}
	p.in.Discard(used)
	return k, nil
}
