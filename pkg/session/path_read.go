package session

import (
	"errors"
	"fmt"
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
// ErrMalformed error for a malformed or truncated frame) or the session
// refuses a segment (a connection error, conn set). The frames that lie
// whole in the path's read buffer are handled in place (no copy) and
// together, under one acquisition of s.mu with one clock reading; a frame
// that arrived in part waits in the buffer for the rest (segReader).
//
// An idle path costs little: the stream is read through the handshake's
// small buffer until the first segment's bytes arrive, and only then
// through a buffer of dataReadBuf bytes, kept until the path ends.
func (s *Session) readSegments(p *path) (conn bool, err error) {
	if _, err := p.in.Peek(1); err != nil { // wait for data
		return false, err
	}
	// Once drained, the small reader reads straight into segReader's
	// buffer: its reads are at least minSegRead bytes, more than its own.
	rd := segReader{src: p.in, buf: make([]byte, dataReadBuf)}
	for {
		n, err := s.bufferedSegments(p, &rd)
		if err != nil {
			return true, err
		}
		if n > 0 {
			continue
		}
		// Nothing, or only part of the next frame, is buffered.
		err = rd.fill()
		s.handoffs.add() // it waited for quic-go to have stream data
		if err != nil {
			if errors.Is(err, io.EOF) && len(rd.buffered()) > 0 {
				err = fmt.Errorf("%w: truncated frame", wire.ErrMalformed)
			}
			return false, err
		}
	}
}

// segReader is a path's read buffer for segment frames. It reads from the
// data stream into the space after what it holds, and moves what it holds
// to the front only when that space is too small for a whole frame, so a
// frame that arrives in pieces is read into place, not copied
// (bufio.Reader moves its contents on every fill: a frame split across
// quic-go's Reads, about 4 in 10, was copied once more). Owned by the
// path's read goroutine; it holds dataReadBuf bytes.
type segReader struct {
	src  io.Reader
	buf  []byte // dataReadBuf bytes
	r, w int    // buf[r:w] holds the bytes read and not yet consumed
}

// minSegRead is the least room segReader reads into, bytes: room for the
// largest segment frame, so that any frame fits once its first byte is at
// the front.
const minSegRead = wire.MaxSegmentPayload + 32

func (b *segReader) buffered() []byte { return b.buf[b.r:b.w] }

// discard consumes n buffered bytes.
func (b *segReader) discard(n int) {
	if b.r += n; b.r == b.w {
		b.r, b.w = 0, 0
	}
}

// fill reads once more from the stream, first moving what is buffered (part
// of one frame) to the front if fewer than minSegRead bytes are free after
// it. It returns the read's error only if nothing was read.
func (b *segReader) fill() error {
	if len(b.buf)-b.w < minSegRead {
		n := copy(b.buf, b.buf[b.r:b.w])
		countCopyIn(n)
		b.r, b.w = 0, n
	}
	for range 100 { // as bufio: a reader that keeps returning nothing is broken
		n, err := b.src.Read(b.buf[b.w:])
		b.w += n
		if n > 0 || err != nil {
			if n > 0 {
				return nil
			}
			return err
		}
	}
	return io.ErrNoProgress
}

// maxReadBatch bounds the segments handled under one acquisition of s.mu,
// so that a stream reader or the ack pass waits for the lock no longer than
// that.
const maxReadBatch = 16

// bufferedSegments handles the whole segment frames at the front of p's read
// buffer (at most maxReadBatch) and consumes them; it returns how many it
// handled (0 if the first frame is incomplete). An error is a connection
// error.
func (s *Session) bufferedSegments(p *path, rd *segReader) (int, error) {
	b := rd.buffered()
	seg, n, err := wire.ParseSegment(b)
	if err != nil {
		return 0, protocolErr(err)
	}
	if n == 0 {
		return 0, nil // nothing whole yet: no lock taken for it
	}
	used, k := 0, 0
	now := s.now()
	s.mu.Lock()
	for {
		if err := s.segmentReceivedLocked(p, seg, now, false); err != nil {
			s.mu.Unlock()
			return k, err
		}
		used += n
		k++
		if k == maxReadBatch {
			break
		}
		if seg, n, err = wire.ParseSegment(b[used:]); err != nil {
			s.mu.Unlock()
			return k, protocolErr(err)
		}
		if n == 0 {
			break
		}
	}
	wake := p.tr == nil && p.sv.segmentsArrived(now)
	s.mu.Unlock()
	if wake {
		poke(s.wake)
	}
	rd.discard(used)
	return k, nil
}
