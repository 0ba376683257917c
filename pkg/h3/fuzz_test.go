package h3

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/quic-go/quic-go/quicvarint"
)

// memStream is a ReceiveStream over bytes.
type memStream struct{ *bytes.Reader }

func (memStream) ID() uint64                      { return 0 }
func (memStream) CancelRead(uint64)               {}
func (memStream) SetReadDeadline(time.Time) error { return nil }

var fuzzLimits = &limits{maxHeaderBytes: 4096, maxHeaderCount: 32, maxBody: 1 << 16,
	headerTimeout: time.Second, readTimeout: time.Second, writeTimeout: time.Second}

// FuzzRequestStream feeds arbitrary bytes to the server's reading of a
// request stream (frames, QPACK, validation, body, trailers) and to the
// control stream parser: no input may panic or make it hold more than its
// limits.
func FuzzRequestStream(f *testing.F) {
	f.Add(append(headersFrame("GET", "/x"), appendFrame(nil, frameData, []byte("body"))...))
	f.Add(append(headersFrame("POST", "/x", "content-length", "3"), appendFrame(nil, frameData, []byte("abc"))...))
	f.Add(appendFrame(nil, frameData, []byte("x")))
	f.Add(appendSettings(nil, 100))
	f.Add(appendFrame(appendSettings(nil, 1), frameGoAway, []byte{4}))
	f.Add(appendFrame(appendSettings(nil, 1), framePriorityUpdate, append(quicvarint.Append(nil, 0), "u=1"...)))
	f.Fuzz(func(t *testing.T, in []byte) {
		st := memStream{bytes.NewReader(in)}
		fr := newFrameReader(st)
		if fields, err := readHeaders(fr, st, fuzzLimits, true); err == nil {
			if req, err := requestFromFields(fields); err == nil {
				b := &body{st: st, fr: fr, lim: fuzzLimits, isServer: true, maxBody: fuzzLimits.maxBody,
					contentLength: req.ContentLength, fail: func(error) {}}
				n, _ := io.Copy(io.Discard, b)
				if n > fuzzLimits.maxBody+readBufSize {
					t.Fatalf("read %d body bytes past the limit %d", n, fuzzLimits.maxBody)
				}
			}
		}
		h := newConn(nil, true, 4096)
		h.readControl(newFrameReader(bytes.NewReader(in)))
		ParsePriority(string(in), DefaultPriority)
	})
}

// FuzzHeaderDecode decodes arbitrary QPACK field sections and builds
// requests and responses from them.
func FuzzHeaderDecode(f *testing.F) {
	e := newEncoder()
	e.field(":method", "GET")
	e.field(":scheme", "https")
	e.field(":authority", "a.test")
	e.field(":path", "/")
	f.Add(e.frame()[2:])
	e = newEncoder()
	e.field(":status", "200")
	e.field("content-length", "5")
	f.Add(e.frame()[2:])
	f.Fuzz(func(t *testing.T, in []byte) {
		fields, err := decodeFields(in, 4096, 32)
		if err != nil {
			return
		}
		size := 0
		for _, f := range fields {
			size += len(f.Name) + len(f.Value) + 32
		}
		if size > 4096 || len(fields) > 32 {
			t.Fatalf("decoded %d fields of %d bytes past the limits", len(fields), size)
		}
		requestFromFields(fields)
		responseFromFields(fields)
		fieldsToHeader(fields)
	})
}
