package session

import (
	"errors"
	"io"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// readLoop reads the peer's segments from the path's data stream until it
// ends, then ends the path (or the session, for a connection error).
func (s *Session) readLoop(p *path) {
	conn, err := s.readSegments(p)
	switch {
	case conn:
		s.fail(err)
	case errors.Is(err, wire.ErrMalformed):
		s.fail(errors.Join(ErrProtocol, err))
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
func (s *Session) readSegments(p *path) (conn bool, err error) {
	buf := make([]byte, wire.MaxSegmentPayload)
	for {
		if _, err := p.in.Peek(1); err != nil { // wait for data
			return false, err
		}
		n, err := s.bufferedSegments(p)
		if err != nil {
			return true, err
		}
		if n > 0 {
			continue
		}
		// The next frame is only partly buffered.
		seg, err := wire.ReadSegment(p.in, buf)
		if err != nil {
			return false, err
		}
		if err := s.segmentReceived(p, seg); err != nil {
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
			return k, errors.Join(ErrProtocol, err)
		}
		if n == 0 {
			break
		}
		if err := s.segmentReceivedLocked(p, seg, now); err != nil {
			s.mu.Unlock()
			return k, err
		}
		used += n
		k++
	}
	s.mu.Unlock()
	p.in.Discard(used)
	return k, nil
}
