package h3

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// responseWriter is the http.ResponseWriter of one request stream. It
// also implements http.Flusher. Trailers work as in net/http: keys
// declared in the "Trailer" header before WriteHeader, or keys with the
// http.TrailerPrefix, set before the handler returns.
//
// Like net/http's, it is for the handler's goroutine only (Flush
// included). The response goes out in DATA frames of up to writeBufSize
// bytes; each write to the stream waits at most lim.writeTimeout.
type responseWriter struct {
	st     Stream
	conn   *conn
	lim    *limits
	isHead bool

	header      http.Header
	status      int      // 0 until WriteHeader
	trailerKeys []string // declared in "Trailer" when the header was sent
	headerSent  bool
	clen        int64 // declared Content-Length, -1: none
	written     int64 // body bytes accepted (for HEAD: counted, not sent)
	bw          *bufio.Writer
	err         error // sticky stream write error
}

func newResponseWriter(st Stream, c *conn, lim *limits, isHead bool) *responseWriter {
	w := &responseWriter{st: st, conn: c, lim: lim, isHead: isHead, header: make(http.Header), clen: -1}
	w.bw = bufio.NewWriterSize(dataWriter{w}, writeBufSize)
	return w
}

// Header is the response header; changes after WriteHeader have no effect
// except for trailers.
func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader sends the status line once (the header goes out with the first
// flush of the body, so that a short body gets a Content-Length). A 1xx
// status (except 101) is sent at once as an interim response and may be
// followed by more.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("h3: invalid WriteHeader code %d", code))
	}
	if w.status != 0 {
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		e := newEncoder()
		e.field(":status", strconv.Itoa(code))
		e.header(w.header, nil)
		w.writeStream(e.frame())
		return
	}
	w.status = code
	if v := w.header.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			w.clen = n
		} else {
			w.header.Del("Content-Length")
		}
	}
	for _, v := range w.header.Values("Trailer") {
		for _, k := range strings.Split(v, ",") {
			if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k != "" {
				w.trailerKeys = append(w.trailerKeys, k)
			}
		}
	}
}

// bodyAllowed reports whether the status permits a body (RFC 9110 §6.4.1).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// Write adds body bytes. It fails with http.ErrBodyNotAllowed for a status
// without a body, http.ErrContentLength past a declared Content-Length, or
// the stream's error (a reset by the peer, or a write that waited longer
// than the write timeout).
func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if !w.headerSent && w.written == 0 && len(p) > 0 {
		// As net/http: a body without a Content-Type gets a sniffed one.
		if _, ok := w.header["Content-Type"]; !ok && w.header.Get("Content-Encoding") == "" {
			w.header.Set("Content-Type", http.DetectContentType(p))
		}
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.clen >= 0 && w.written+int64(len(p)) > w.clen {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.isHead {
		return len(p), nil
	}
	n, err := w.bw.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// Flush sends the header and every buffered body byte.
func (w *responseWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.flush()
}

// FlushError is Flush that reports the stream's error (http.ResponseController).
func (w *responseWriter) FlushError() error {
	w.Flush()
	return w.err
}

func (w *responseWriter) flush() {
	if w.err != nil {
		return
	}
	if !w.headerSent {
		w.sendHeader()
	}
	if err := w.bw.Flush(); err != nil && w.err == nil {
		w.err = err
	}
}

// sendHeader writes the HEADERS frame of the final response.
func (w *responseWriter) sendHeader() {
	w.headerSent = true
	e := newEncoder()
	e.field(":status", strconv.Itoa(w.status))
	e.header(w.header, func(k string) bool { return strings.HasPrefix(k, http.TrailerPrefix) })
	w.writeStream(e.frame())
}

// finish completes the response after the handler returned: header,
// buffered body, trailers, end of stream.
func (w *responseWriter) finish() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.headerSent && w.clen < 0 && bodyAllowed(w.status) && w.header.Get("Transfer-Encoding") == "" {
		// The whole body is buffered: state its length.
		w.header.Set("Content-Length", strconv.FormatInt(w.written, 10))
	}
	w.flush()
	if t := w.trailers(); len(t) > 0 && w.err == nil {
		e := newEncoder()
		e.header(t, nil)
		w.writeStream(e.frame())
	}
	if w.err != nil {
		return w.err
	}
	return w.st.Close()
}

// trailers collects the trailer values the handler set.
func (w *responseWriter) trailers() http.Header {
	var t http.Header
	add := func(k string, vs []string) {
		if len(vs) == 0 {
			return
		}
		if t == nil {
			t = make(http.Header)
		}
		t[http.CanonicalHeaderKey(k)] = vs
	}
	for _, k := range w.trailerKeys {
		add(k, w.header[k])
	}
	for k, vs := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			add(strings.TrimPrefix(k, http.TrailerPrefix), vs)
		}
	}
	return t
}

// writeStream writes b to the stream within the write timeout.
func (w *responseWriter) writeStream(b []byte) {
	if w.err != nil {
		return
	}
	w.st.SetWriteDeadline(time.Now().Add(w.lim.writeTimeout))
	if _, err := w.st.Write(b); err != nil {
		w.err = translate(err)
	}
}

// dataWriter frames what the bufio.Writer flushes as one DATA frame.
type dataWriter struct{ w *responseWriter }

func (d dataWriter) Write(p []byte) (int, error) {
	w := d.w
	if !w.headerSent {
		w.sendHeader()
	}
	if len(p) == 0 {
		return 0, w.err
	}
	var hdr [16]byte
	w.writeStream(appendFrameHeader(hdr[:0], frameData, uint64(len(p))))
	w.writeStream(p)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}
