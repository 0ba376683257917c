package attack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// The raw HTTP/3 side of a Peer (protocol version 4): it decodes the
// frames the server sends (pkg/wire.ParseFrames) into what the HTTP/3
// attacks check: the server's SETTINGS, the stream credit it grants, and
// each watched request stream's response status, reset and STOP_SENDING
// codes.

// HTTP/3's constants (RFC 9114).
const (
	h3FrameData     = 0x00
	h3FrameHeaders  = 0x01
	h3FrameSettings = 0x04
	h3StreamControl = 0x00 // unidirectional stream type of a control stream
	h3MaxFieldSect  = 0x06 // SETTINGS_MAX_FIELD_SECTION_SIZE

	h3RequestCancelled = 0x10c // H3_REQUEST_CANCELLED

	// codeApplication is the session's internal close code whose reason
	// phrase carries the application's code in decimal (pkg/session
	// closeerr.go).
	codeApplication quic.ApplicationErrorCode = 9

	// h3StreamWindow is the receive window per stream the HTTP/3 attacks
	// grant the server (bytes): room for a response's HEADERS and the
	// server's SETTINGS, so a cancelled download sends at most this much.
	h3StreamWindow = 4 << 10
	// h3KeepBytes is how much of a stream's data is kept for decoding.
	h3KeepBytes = 4 << 10
	// h3Wait bounds each wait for the server's answer.
	h3Wait = 20 * time.Second
)

// clientStreamID is the ID of the client's stream of index i (RFC 9000
// §2.1: client-initiated IDs are even; 0x02 marks a unidirectional one).
func clientStreamID(i uint64, uni bool) uint64 {
	if uni {
		return i<<2 | 2
	}
	return i << 2
}

// serverControlID is the server's first unidirectional stream (index 0,
// server-initiated: 0b11), where pkg/h3 opens its control stream.
const serverControlID = 3

// h3Stream is what the server sent on one stream.
type h3Stream struct {
	buf        []byte // the first h3KeepBytes bytes of data
	status     int    // the response's :status (0: none yet)
	fin        bool
	reset      int64 // RESET_STREAM code, -1: none
	stopSend   int64 // STOP_SENDING code, -1: none
	headerDone bool
}

// h3State is the decoded server side of one raw HTTP/3 session. Safe for
// concurrent use. Memory: at most h3KeepBytes per watched stream; streams
// are watched only while an attack waits on them.
type h3State struct {
	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	bidiLimit uint64        // client bidirectional streams the server allows
	uniLimit  uint64        // client unidirectional streams the server allows
	settings  map[uint64]uint64
	ctrl      []byte // the server's control stream so far (bounded)
	streams   map[uint64]*h3Stream
}

func newH3State(bidi, uni uint64) *h3State {
	return &h3State{changed: make(chan struct{}), bidiLimit: bidi, uniLimit: uni, streams: make(map[uint64]*h3Stream)}
}

// notifyLocked wakes the waiters.
func (h *h3State) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// watch starts keeping what the server sends on stream id.
func (h *h3State) watch(id uint64) {
	h.mu.Lock()
	h.streams[id] = &h3Stream{reset: -1, stopSend: -1}
	h.mu.Unlock()
}

// forget stops watching stream id.
func (h *h3State) forget(id uint64) {
	h.mu.Lock()
	delete(h.streams, id)
	h.mu.Unlock()
}

// wait waits until ok (called under the lock) holds, ctx ends or conn
// closes.
func (h *h3State) wait(ctx context.Context, conn context.Context, ok func() bool) error {
	for {
		h.mu.Lock()
		if ok() {
			h.mu.Unlock()
			return nil
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-conn.Done():
			return fmt.Errorf("attack: session closed: %w", context.Cause(conn))
		}
	}
}

// StreamFrame takes a STREAM frame of the server's (one path: they come in
// order).
func (h *h3State) StreamFrame(id, _ uint64, p []byte, fin bool) error {
	h.streamData(id, p)
	if fin {
		h.streamFin(id)
	}
	return nil
}

// streamData keeps the start of a watched stream's data, and decodes the
// server's control stream and a response's HEADERS.
func (h *h3State) streamData(id uint64, p []byte) {
	if id == serverControlID {
		if h.settings == nil && len(h.ctrl) < h3KeepBytes {
			h.ctrl = append(h.ctrl, p[:min(len(p), h3KeepBytes-len(h.ctrl))]...)
			if s, ok := parseControl(h.ctrl); ok {
				h.settings = s
				h.notifyLocked()
			}
		}
		return
	}
	st := h.streams[id]
	if st == nil || st.headerDone {
		return
	}
	st.buf = append(st.buf, p[:min(len(p), h3KeepBytes-len(st.buf))]...)
	if status, ok := parseResponse(st.buf); ok {
		st.status, st.headerDone, st.buf = status, true, nil
		h.notifyLocked()
	}
	return
}

func (h *h3State) streamFin(id uint64) {
	if st := h.streams[id]; st != nil {
		st.fin = true
		h.notifyLocked()
	}
}

// ResetStream records a watched stream's reset code.
func (h *h3State) ResetStream(id, code, _ uint64) error {
	if st := h.streams[id]; st != nil {
		st.reset = int64(code)
		h.notifyLocked()
	}
	return nil
}

// StopSending records a watched stream's STOP_SENDING code.
func (h *h3State) StopSending(id uint64, code uint64) error {
	if st := h.streams[id]; st != nil {
		st.stopSend = int64(code)
		h.notifyLocked()
	}
	return nil
}

// MaxStreamData, MaxData and PathStatus are of no interest here.
func (h *h3State) MaxStreamData(uint64, uint64) error    { return nil }
func (h *h3State) MaxData(uint64) error                  { return nil }
func (h *h3State) PathStatus(uint64, uint64, bool) error { return nil }

// MaxStreams records the stream credit the server grants.
func (h *h3State) MaxStreams(n uint64, uni bool) error {
	l := &h.bidiLimit
	if uni {
		l = &h.uniLimit
	}
	if n > *l {
		*l = n
		h.notifyLocked()
	}
	return nil
}

// feed parses the frames of the server's next segment.
func (h *h3State) feed(p []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return wire.ParseFrames(p, h)
}

// parseControl decodes a control stream's type and SETTINGS frame (RFC
// 9114 §6.2.1, §7.2.4) once b holds them.
func parseControl(b []byte) (map[uint64]uint64, bool) {
	typ, n, err := quicvarint.Parse(b)
	if err != nil || typ != h3StreamControl {
		return nil, false
	}
	b = b[n:]
	ft, n, err := quicvarint.Parse(b)
	if err != nil || ft != h3FrameSettings {
		return nil, false
	}
	b = b[n:]
	l, n, err := quicvarint.Parse(b)
	if err != nil || uint64(len(b)-n) < l {
		return nil, false
	}
	p := b[n : n+int(l)]
	s := make(map[uint64]uint64)
	for len(p) > 0 {
		id, n1, err1 := quicvarint.Parse(p)
		if err1 != nil {
			return s, true
		}
		v, n2, err2 := quicvarint.Parse(p[n1:])
		if err2 != nil {
			return s, true
		}
		s[id] = v
		p = p[n1+n2:]
	}
	return s, true
}

// parseResponse decodes the :status of the HEADERS frame at the start of
// b, skipping unknown frames, once b holds it.
func parseResponse(b []byte) (int, bool) {
	for {
		ft, n, err := quicvarint.Parse(b)
		if err != nil {
			return 0, false
		}
		l, n2, err := quicvarint.Parse(b[n:])
		if err != nil || uint64(len(b)-n-n2) < l {
			return 0, false
		}
		p := b[n+n2 : n+n2+int(l)]
		b = b[n+n2+int(l):]
		if ft != h3FrameHeaders {
			continue
		}
		next := qpack.NewDecoder().Decode(p)
		for {
			f, err := next()
			if err != nil {
				return -1, true // no :status: malformed
			}
			if f.Name == ":status" {
				s, err := strconv.Atoi(f.Value)
				if err != nil {
					return -1, true
				}
				return s, true
			}
		}
	}
}

// h3Request is an HTTP/3 request for path as one HEADERS frame (RFC 9114
// §4.1), QPACK-encoded without a dynamic table; extra adds name/value
// pairs.
func h3Request(method, path string, extra ...string) []byte {
	var fields bytes.Buffer
	enc := qpack.NewEncoder(&fields)
	for _, f := range [][2]string{{":method", method}, {":scheme", "https"}, {":authority", "localhost"}, {":path", path}} {
		enc.WriteField(qpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for i := 0; i+1 < len(extra); i += 2 {
		enc.WriteField(qpack.HeaderField{Name: extra[i], Value: extra[i+1]})
	}
	b := quicvarint.Append(nil, h3FrameHeaders)
	b = quicvarint.Append(b, uint64(fields.Len()))
	return append(b, fields.Bytes()...)
}

// acceptParam reads a field of an Accept's Params by name (0 if this
// version lacks it: version 1's Accept has no Params).
func acceptParam(a *wire.Accept, name string) uint64 {
	v := reflect.ValueOf(a).Elem().FieldByName("Params")
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return 0
	}
	if f := v.FieldByName(name); f.IsValid() && f.Kind() == reflect.Uint64 {
		return f.Uint()
	}
	return 0
}

// setParam sets a wire.Params field by name where this version has it.
func setParam(params any, name string, n uint64) {
	if f := reflect.ValueOf(params).Elem().FieldByName(name); f.IsValid() && f.CanSet() && f.Kind() == reflect.Uint64 {
		f.SetUint(n)
	}
}

// errNoH3 is returned by the HTTP/3 attacks against a protocol version
// without HTTP/3.
var errNoH3 = errors.New("attack: HTTP/3 needs session protocol version 3")

// closeCode is the application code the server closed the session with
// (pkg/session's codeApplication close carries "CODE reason"), or false.
func closeCode(conn *quic.Conn) (uint64, string, bool) {
	var ae *quic.ApplicationError
	if !errors.As(context.Cause(conn.Context()), &ae) || !ae.Remote || ae.ErrorCode != codeApplication {
		return 0, "", false
	}
	num, reason, _ := strings.Cut(ae.ErrorMessage, " ")
	c, err := strconv.ParseUint(num, 10, 64)
	return c, reason, err == nil
}
