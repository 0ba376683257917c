package session

import (
	"errors"
	"fmt"
	"io"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Read buffers of a path's data stream (bytes): the handshake is read
// through handshakeReadBuf (its frames are under 100 bytes), segments
// through dataReadBuf, which holds several whole segments so that the loop
// processes them as one batch (rxbatch.go).
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

// readSegments hands the segments of p's data stream to the loop until the
// stream fails (the read error: io.EOF at a clean end, a wire ErrMalformed
// error for a malformed or truncated frame) or the session ends (conn set).
// The frames that lie whole in the path's read buffer are parsed in place (no
// copy) and posted to the loop together, in batches of at most maxReadBatch
// (rxbatch.go); a frame that arrived in part waits in the buffer for the rest
// (segReader). While the loop processes its batches, the reader reads on into
// the buffer's free space, adds what it reads to the batch it posted last
// while the loop has not taken that, and else posts the next, up to rxDepth
// batches at once;
// it waits for the loop when it has rxDepth batches posted and more to post,
// before it moves the buffer's contents, and before it returns, so every
// segment read is processed before the path is ended.
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
	var ring [rxDepth]*rxBatch
	for i := range ring {
		ring[i] = newRxBatch(p)
	}
	head, count := 0, 0 // ring[head] is the oldest of count posted batches
	posted := 0         // bytes at the front of rd's buffer that posted batches hold
	// settle waits for the oldest posted batch and consumes its bytes; false:
	// the session ended.
	settle := func() bool {
		b := ring[head]
		if !s.waitBatch(b) {
			return false
		}
		rd.discard(b.used)
		posted -= b.used
		head, count = (head+1)%rxDepth, count-1
		return true
	}
	for {
		if count > 0 { // add to the batch posted last, if the loop has not taken it
			k, err := s.rx.extend(ring[(head+count-1)%rxDepth], rd.buffered()[posted:])
			if err != nil {
				return true, protocolErr(err)
			}
			if k > 0 {
				posted += k
				continue
			}
		}
		if count < rxDepth {
			b := ring[(head+count)%rxDepth]
			b.n, b.used = 0, 0
			k, err := b.add(rd.buffered()[posted:])
			if err != nil {
				return true, protocolErr(err)
			}
			if k > 0 {
				s.postBatch(b)
				posted += k
				count++
				continue
			}
		}
		if count > 0 && (rd.room() < minSegRead || count == rxDepth && wholeSegment(rd.buffered()[posted:])) {
			// No room to read into without moving the posted bytes, or a
			// whole segment waits for a batch.
			if !settle() {
				return true, ErrClosed
			}
			continue
		}
		// Nothing, or only part of the next frame, is buffered after the
		// posted batches, and a whole frame fits after what is buffered (or
		// nothing is posted, and fill may move what is buffered).
		err = rd.fill()
		s.handoffs.add() // it waited for quic-go to have stream data
		if err != nil {
			for count > 0 {
				if !settle() {
					return true, ErrClosed
				}
			}
			if errors.Is(err, io.EOF) && len(rd.buffered()) > 0 {
				err = fmt.Errorf("%w: truncated frame", wire.ErrMalformed)
			}
			return false, err
		}
	}
}

// wholeSegment reports whether b begins with a whole segment frame (or a
// malformed one, which the next parse reports).
func wholeSegment(b []byte) bool {
	_, n, err := wire.ParseSegment(b)
	return n > 0 || err != nil
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

// room is the free space after what is buffered, bytes.
func (b *segReader) room() int { return len(b.buf) - b.w }

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
