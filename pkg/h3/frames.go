package h3

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/quic-go/quic-go/quicvarint"
)

// Frame types (RFC 9114 §7.2, RFC 9218 §7.2).
const (
	frameData           = 0x0
	frameHeaders        = 0x1
	frameCancelPush     = 0x3
	frameSettings       = 0x4
	framePushPromise    = 0x5
	frameGoAway         = 0x7
	frameMaxPushID      = 0xd
	framePriorityUpdate = 0xf0700 // PRIORITY_UPDATE for a request stream
	framePriorityPush   = 0xf0701 // PRIORITY_UPDATE for a push stream
)

// isHTTP2Frame reports the frame types reserved because HTTP/2 used them:
// "their receipt MUST be treated as a connection error of type
// H3_FRAME_UNEXPECTED" (RFC 9114 §7.2.8).
func isHTTP2Frame(t uint64) bool { return t == 0x2 || t == 0x6 || t == 0x8 || t == 0x9 }

// frameHeader is a frame's type and payload length; the payload follows
// in the stream.
type frameHeader struct {
	typ uint64
	len uint64
}

// frameReader reads frames from one stream through a small buffer.
type frameReader struct {
	r *bufio.Reader
}

// readBufSize is the buffer of every frameReader (bytes): one per stream.
const readBufSize = 4 << 10

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, readBufSize)}
}

// errTruncated is a stream that ended inside a frame (RFC 9114 §7.1: "the
// end of a stream ... in the middle of a frame MUST be treated as a
// connection error of type H3_FRAME_ERROR").
var errTruncated = connError(ErrCodeFrameError, "stream ended inside a frame")

// next reads the next frame header. io.EOF means the stream ended cleanly
// between frames.
func (fr *frameReader) next() (frameHeader, error) {
	t, err := quicvarint.Read(fr.r)
	if err != nil {
		return frameHeader{}, err // io.EOF between frames is clean
	}
	n, err := quicvarint.Read(fr.r)
	if err != nil {
		return frameHeader{}, truncated(err)
	}
	return frameHeader{typ: t, len: n}, nil
}

// truncated turns an io.EOF inside a frame into errTruncated.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// payload reads a frame's whole payload of n bytes, at most max bytes
// (a larger one is refused before it is read, with tooBig).
func (fr *frameReader) payload(n uint64, max int, tooBig *Error) ([]byte, error) {
	if n > uint64(max) {
		return nil, tooBig
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(fr.r, b); err != nil {
		return nil, truncated(err)
	}
	return b, nil
}

// skip discards a frame's payload of n bytes (an unknown frame type:
// "Implementations MUST discard frames ... that have unknown or unsupported
// types", RFC 9114 §9). It holds no memory beyond the reader's buffer.
func (fr *frameReader) skip(n uint64) error {
	if n == 0 {
		return nil
	}
	if _, err := fr.r.Discard(int(min(n, 1<<30))); err != nil {
		return truncated(err)
	}
	if n > 1<<30 {
		return fr.skip(n - 1<<30)
	}
	return nil
}

// appendFrameHeader appends a frame header of type t and payload length n.
func appendFrameHeader(b []byte, t, n uint64) []byte {
	b = quicvarint.Append(b, t)
	return quicvarint.Append(b, n)
}

// appendFrame appends a whole frame.
func appendFrame(b []byte, t uint64, payload []byte) []byte {
	b = appendFrameHeader(b, t, uint64(len(payload)))
	return append(b, payload...)
}

// parseVarint reads one varint from p, as a frame payload of its own
// (GOAWAY, MAX_PUSH_ID, CANCEL_PUSH): trailing bytes are a frame error.
func parseVarint(p []byte, what string) (uint64, error) {
	v, n, err := quicvarint.Parse(p)
	if err != nil || n != len(p) {
		return 0, connError(ErrCodeFrameError, "malformed %s frame", what)
	}
	return v, nil
}

// priorityUpdate is a PRIORITY_UPDATE frame's payload (RFC 9218 §7.2).
type priorityUpdate struct {
	id    uint64 // the prioritized element: a request stream's ID
	value string // a Priority Field Value, as in the priority header
}

func parsePriorityUpdate(p []byte) (priorityUpdate, error) {
	id, n, err := quicvarint.Parse(p)
	if err != nil {
		return priorityUpdate{}, connError(ErrCodeFrameError, "malformed PRIORITY_UPDATE frame")
	}
	return priorityUpdate{id: id, value: string(p[n:])}, nil
}

// frameName names a frame type for error messages.
func frameName(t uint64) string {
	switch t {
	case frameData:
		return "DATA"
	case frameHeaders:
		return "HEADERS"
	case frameCancelPush:
		return "CANCEL_PUSH"
	case frameSettings:
		return "SETTINGS"
	case framePushPromise:
		return "PUSH_PROMISE"
	case frameGoAway:
		return "GOAWAY"
	case frameMaxPushID:
		return "MAX_PUSH_ID"
	case framePriorityUpdate, framePriorityPush:
		return "PRIORITY_UPDATE"
	}
	return fmt.Sprintf("frame %#x", t)
}
