package h3

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// readHeaders reads a stream's frames up to its first HEADERS frame and
// decodes it. Unknown frames before it are skipped (RFC 9114 §9); DATA
// before it is "an invalid sequence of frames [that] MUST be treated as a
// connection error of type H3_FRAME_UNEXPECTED" (§4.1). A section past
// the limits is errHeaderTooLarge, returned before its payload is read.
func readHeaders(fr *frameReader, st ReceiveStream, lim *limits, isServer bool) (fields []qpackField, err error) {
	st.SetReadDeadline(time.Now().Add(lim.headerTimeout))
	defer st.SetReadDeadline(time.Time{})
	for {
		hdr, err := fr.next()
		if err != nil {
			return nil, err
		}
		if err := checkRequestStreamFrame(hdr.typ, isServer); err != nil {
			return nil, err
		}
		switch hdr.typ {
		case frameHeaders:
			if hdr.len > uint64(lim.maxHeaderBytes) {
				return nil, errHeaderTooLarge
			}
			p, err := fr.payload(hdr.len, lim.maxHeaderBytes, errHeaderTooLarge)
			if err != nil {
				return nil, err
			}
			return decodeFields(p, lim.maxHeaderBytes, lim.maxHeaderCount)
		case frameData:
			return nil, connError(ErrCodeFrameUnexpected, "DATA before HEADERS")
		default:
			if err := fr.skip(hdr.len); err != nil {
				return nil, err
			}
		}
	}
}

// checkRequestStreamFrame refuses the frame types a request stream may not
// carry: control-stream frames and HTTP/2's reserved types are "a
// connection error of type H3_FRAME_UNEXPECTED" (RFC 9114 §7.2.4, §7.2.6,
// §7.2.7, §7.2.8); PUSH_PROMISE sent to a server likewise (§7.2.5), and to
// a client that never allowed a push (no MAX_PUSH_ID) it is H3_ID_ERROR.
func checkRequestStreamFrame(t uint64, isServer bool) error {
	switch {
	case t == frameSettings || t == frameGoAway || t == frameMaxPushID || t == frameCancelPush ||
		t == framePriorityUpdate || t == framePriorityPush || isHTTP2Frame(t):
		return connError(ErrCodeFrameUnexpected, "%s on a request stream", frameName(t))
	case t == framePushPromise && isServer:
		return connError(ErrCodeFrameUnexpected, "PUSH_PROMISE from a client")
	case t == framePushPromise:
		return connError(ErrCodeIDError, "PUSH_PROMISE without MAX_PUSH_ID")
	}
	return nil
}

// body reads a message body from DATA frames, then the trailers. A Read
// waits at most lim.readTimeout for data. Errors of the protocol go to
// fail (which resets the stream or closes the connection) and are
// returned by every later Read. Read is for one goroutine at a time; Close
// may be called concurrently with it.
type body struct {
	st       ReceiveStream
	fr       *frameReader
	lim      *limits
	isServer bool
	maxBody  int64 // bytes a server accepts; 0: no limit

	contentLength int64       // declared, -1 unknown
	trailer       http.Header // filled with the trailers (nil: make one if some arrive)
	setTrailer    func(http.Header)
	fail          func(error) // told of every protocol error, once
	onEnd         func()      // called once at the end (io.EOF, error or Close)

	mu     sync.Mutex // guards err and ended against Close
	err    error      // sticky
	ended  bool
	remain uint64 // bytes left in the current DATA frame
	n      int64  // body bytes read
	trDone bool   // trailers read
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := b.read(p)
	if err != nil {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		err = b.err
		b.mu.Unlock()
		if err != io.EOF {
			var he *Error
			if errors.As(err, &he) && !he.Remote {
				b.fail(err)
			}
		}
		b.end()
	}
	return n, err
}

func (b *body) end() {
	b.mu.Lock()
	ended := b.ended
	b.ended = true
	b.mu.Unlock()
	if !ended && b.onEnd != nil {
		b.onEnd()
	}
}

func (b *body) read(p []byte) (int, error) {
	for b.remain == 0 {
		if err := b.nextFrame(); err != nil {
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if uint64(len(p)) > b.remain {
		p = p[:b.remain]
	}
	b.st.SetReadDeadline(time.Now().Add(b.lim.readTimeout))
	n, err := b.fr.r.Read(p)
	b.remain -= uint64(n)
	b.n += int64(n)
	if b.contentLength >= 0 && b.n > b.contentLength {
		// RFC 9114 §4.1.2: "A request or response that is defined as having
		// content when it contains a Content-Length header field ... is
		// malformed if the value of the Content-Length header field does
		// not equal the sum of the DATA frame lengths".
		return n, streamError(ErrCodeMessageError, "body longer than content-length %d", b.contentLength)
	}
	if b.maxBody > 0 && b.n > b.maxBody {
		return n, streamError(ErrCodeExcessiveLoad, "body longer than %d bytes", b.maxBody)
	}
	if err == io.EOF && b.remain == 0 && n > 0 {
		err = nil // the frame is complete; the next Read sees the end
	}
	if err != nil {
		return n, b.ioErr(err)
	}
	return n, nil
}

// ioErr converts a transport error met inside a frame.
func (b *body) ioErr(err error) error {
	if errors.Is(err, io.EOF) {
		return errTruncated
	}
	return translate(err)
}

// nextFrame reads frame headers until a DATA frame with payload, the
// trailers, or the end.
func (b *body) nextFrame() error {
	b.st.SetReadDeadline(time.Now().Add(b.lim.readTimeout))
	hdr, err := b.fr.next()
	if err == io.EOF {
		if b.contentLength >= 0 && b.n != b.contentLength {
			return streamError(ErrCodeMessageError, "body of %d bytes, content-length %d", b.n, b.contentLength)
		}
		return io.EOF
	}
	if err != nil {
		return b.ioErr(err)
	}
	if err := checkRequestStreamFrame(hdr.typ, b.isServer); err != nil {
		return err
	}
	switch hdr.typ {
	case frameData:
		if b.trDone {
			// RFC 9114 §4.1: after the trailers, "Receipt of an invalid
			// sequence of frames MUST be treated as a connection error of
			// type H3_FRAME_UNEXPECTED."
			return connError(ErrCodeFrameUnexpected, "DATA after trailers")
		}
		b.remain = hdr.len
	case frameHeaders:
		if b.trDone {
			return connError(ErrCodeFrameUnexpected, "HEADERS after trailers")
		}
		p, err := b.fr.payload(hdr.len, b.lim.maxHeaderBytes, errHeaderTooLarge)
		if err != nil {
			return err
		}
		fields, err := decodeFields(p, b.lim.maxHeaderBytes, b.lim.maxHeaderCount)
		if err != nil {
			return err
		}
		h, err := fieldsToHeader(fields)
		if err != nil {
			return err
		}
		b.trDone = true
		if b.setTrailer != nil {
			b.setTrailer(h)
		}
	default:
		return b.fr.skip(hdr.len)
	}
	return nil
}

// Close stops reading: the rest of the body is refused with code (a
// STOP_SENDING), unless it was read to its end.
func (b *body) Close() error { return b.closeWith(ErrCodeRequestCancelled) }

func (b *body) closeWith(code ErrCode) error {
	b.mu.Lock()
	done := b.err != nil
	if b.err == nil {
		b.err = errBodyClosed
	}
	b.mu.Unlock()
	if !done {
		b.st.CancelRead(uint64(code))
	}
	b.end()
	return nil
}

var errBodyClosed = errors.New("h3: read on closed body")
