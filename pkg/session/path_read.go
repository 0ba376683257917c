package session

import (
	"errors"
	"io"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// readLoop reads the peer's segments from the path's data stream. The
// frames that lie whole in the path's read buffer are handled in place (no
// copy) and together, under one acquisition of s.mu with one clock reading;
// only a frame that straddles the buffer's end is read with a copy.
func (s *Session) readLoop(p *path) {
	buf := make([]byte, wire.MaxSegmentPayload)
	for {
		if _, err := p.in.Peek(1); err != nil { // wait for data
			s.readFailed(p, err)
			return
		}
		n, err := s.bufferedSegments(p)
		if err != nil {
			s.fail(err)
			return
		}
		if n > 0 {
			continue
		}
		// The next frame is only partly buffered.
		seg, err := wire.ReadSegment(p.in, buf)
		if err != nil {
			s.readFailed(p, err)
			return
		}
		if err := s.segmentReceived(p, seg); err != nil {
			s.fail(err)
			return
		}
	}
}

// readFailed ends the path (or the session, for a malformed frame) after a
// failed read of its data stream.
func (s *Session) readFailed(p *path, err error) {
	if errors.Is(err, wire.ErrMalformed) {
		s.fail(errors.Join(ErrProtocol, err))
		return
	}
	if err == io.EOF {
		err = errors.New("peer closed the path's data stream")
	}
	s.pathGone(p, err)
}

// bufferedSegments handles every whole segment frame in p's read buffer
// and consumes them; it returns how many it handled (0 if the first frame
// is incomplete). An error is a connection error.
func (s *Session) bufferedSegments(p *path) (int, error) {
	b, _ := p.in.Peek(p.in.Buffered()) // never fails: the bytes are buffered
	used, k := 0, 0
	now := s.now()
	s.mu.Lock()
	for {
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
