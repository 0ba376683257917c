package h3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Transport is an http.RoundTripper speaking HTTP/3 (RFC 9114). It keeps
// one connection per authority (host:port), made by Dial and reused by
// every request to that authority until the connection ends or the server
// sends GOAWAY. Requests on one connection run concurrently up to the
// transport's stream credit (further ones wait for it, within the request's
// context).
//
// Set the fields before the first RoundTrip and leave them alone after;
// RoundTrip and CloseIdleConnections are safe for concurrent use. A
// request's context cancels it: the stream is reset with
// H3_REQUEST_CANCELLED in both directions, and the body's Read fails.
type Transport struct {
	// Dial makes the connection for an authority ("host:port", the port
	// defaulting to 443). For a multipath session, a function around
	// session.Dial or session.DialAddr that also adds the paths, returning
	// FromSession(s); for quic-go, FromQUIC of a connection whose TLS
	// configuration offers ALPN "h3". Required.
	Dial func(ctx context.Context, authority string) (Conn, error)

	// DialTimeout bounds Dial (its context's deadline); see
	// DefaultDialTimeout.
	DialTimeout time.Duration

	MaxResponseHeaderBytes int           // largest response field section (bytes), announced in SETTINGS; see DefaultMaxHeaderBytes
	MaxHeaderCount         int           // most fields in a response section; see DefaultMaxHeaderCount
	ResponseHeaderTimeout  time.Duration // wait for the response's HEADERS once the request is sent; see DefaultHeaderTimeout
	ReadTimeout            time.Duration // each wait of a response body Read; see DefaultReadTimeout
	WriteTimeout           time.Duration // each wait of a request body write for the server's credit; see DefaultWriteTimeout

	mu    sync.Mutex
	conns map[string]*clientConn
}

// clientConn is one connection of the Transport.
type clientConn struct {
	t         *Transport
	authority string
	ready     chan struct{} // closed when dialling ended
	err       error         // dial error, valid after ready
	h         *conn
	lim       *limits

	mu     sync.Mutex
	active int // requests in flight
}

func (t *Transport) limits() *limits {
	return &limits{
		maxHeaderBytes: orInt(t.MaxResponseHeaderBytes, DefaultMaxHeaderBytes),
		maxHeaderCount: orInt(t.MaxHeaderCount, DefaultMaxHeaderCount),
		headerTimeout:  orDur(t.ResponseHeaderTimeout, DefaultHeaderTimeout),
		readTimeout:    orDur(t.ReadTimeout, DefaultReadTimeout),
		writeTimeout:   orDur(t.WriteTimeout, DefaultWriteTimeout),
	}
}

// authorityOf is the connection key of a URL: host:port.
func authorityOf(u *http.Request) string {
	host := u.URL.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "443")
	}
	return host
}

// RoundTrip sends one request and returns its response, whose Body streams
// the response body (close it to release the stream). Only https URLs are
// accepted.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "https" || req.URL.Host == "" {
		closeBody(req)
		return nil, fmt.Errorf("h3: unsupported URL %v", req.URL)
	}
	if t.Dial == nil {
		closeBody(req)
		return nil, errors.New("h3: Transport.Dial is nil")
	}
	for attempt := 0; ; attempt++ {
		cc, err := t.connFor(req.Context(), authorityOf(req))
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := cc.roundTrip(req)
		if !errors.Is(err, ErrGoAway) || attempt > 0 {
			return resp, err
		}
		// Refused before processing: retry once on a new connection when
		// the body can be sent again (RFC 9114 §5.2 allows it).
		t.forget(cc)
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			nb, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = nb
		}
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// connFor returns the authority's connection, dialling it if needed.
func (t *Transport) connFor(ctx context.Context, authority string) (*clientConn, error) {
	t.mu.Lock()
	if t.conns == nil {
		t.conns = make(map[string]*clientConn)
	}
	cc := t.conns[authority]
	if cc != nil {
		select {
		case <-cc.ready:
			if cc.err != nil || !cc.usable() {
				delete(t.conns, authority)
				cc = nil
			}
		default:
		}
	}
	if cc == nil {
		cc = &clientConn{t: t, authority: authority, ready: make(chan struct{}), lim: t.limits()}
		t.conns[authority] = cc
		go cc.dial()
	}
	t.mu.Unlock()
	select {
	case <-cc.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if cc.err != nil {
		t.forget(cc)
		return nil, cc.err
	}
	return cc, nil
}

// dial makes the connection. It runs on its own goroutine with a context
// that is not any one request's, so that a cancelled first request does not
// fail the others waiting for the same connection; DialTimeout bounds it.
func (cc *clientConn) dial() {
	defer close(cc.ready)
	ctx, cancel := context.WithTimeout(context.Background(), orDur(cc.t.DialTimeout, DefaultDialTimeout))
	defer cancel()
	c, err := cc.t.Dial(ctx, cc.authority)
	if err != nil {
		cc.err = err
		return
	}
	cc.h = newConn(c, false, cc.lim.maxHeaderBytes)
	if err := cc.h.start(); err != nil {
		c.CloseWithError(uint64(ErrCodeInternalError), "control stream")
		cc.err = err
		return
	}
	go cc.refuseServerStreams()
	go cc.watchGoAway()
}

// refuseServerStreams: RFC 9114 §6.1: "Clients MUST treat receipt of a
// server-initiated bidirectional stream as a connection error of type
// H3_STREAM_CREATION_ERROR unless such an extension has been negotiated."
func (cc *clientConn) refuseServerStreams() {
	if _, err := cc.h.c.AcceptStream(cc.h.c.Context()); err == nil {
		cc.h.fail(connError(ErrCodeStreamCreationError, "server-initiated bidirectional stream"))
	}
}

// watchGoAway closes the connection once the server sent GOAWAY and no
// request is left (RFC 9114 §5.2: the endpoint "can close the connection"
// once the requests below the ID are complete).
func (cc *clientConn) watchGoAway() {
	select {
	case <-cc.h.goAwayRcv:
	case <-cc.h.c.Context().Done():
		return
	}
	cc.t.forget(cc)
	cc.mu.Lock()
	idle := cc.active == 0
	cc.mu.Unlock()
	if idle {
		cc.h.fail(&Error{Code: ErrCodeNoError, Reason: "after GOAWAY"})
	}
}

func (cc *clientConn) usable() bool {
	if cc.h.c.Context().Err() != nil {
		return false
	}
	_, away := cc.h.goingAway()
	return !away
}

func (t *Transport) forget(cc *clientConn) {
	t.mu.Lock()
	if t.conns[cc.authority] == cc {
		delete(t.conns, cc.authority)
	}
	t.mu.Unlock()
}

// CloseIdleConnections closes every connection with no request in flight,
// with H3_NO_ERROR.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*clientConn
	for k, cc := range t.conns {
		select {
		case <-cc.ready:
		default:
			continue
		}
		if cc.err != nil {
			delete(t.conns, k)
			continue
		}
		cc.mu.Lock()
		if cc.active == 0 {
			idle = append(idle, cc)
			delete(t.conns, k)
		}
		cc.mu.Unlock()
	}
	t.mu.Unlock()
	for _, cc := range idle {
		cc.h.fail(&Error{Code: ErrCodeNoError, Reason: "idle"})
	}
}

// Close closes every connection of the Transport, idle or busy, with
// H3_NO_ERROR (a connection still being dialled is closed once it is
// made): requests in flight fail. A later RoundTrip dials anew. It is the
// Close of quic-go's http3.Transport, for a Transport that owns sockets.
func (t *Transport) Close() error {
	t.mu.Lock()
	all := t.conns
	t.conns = nil
	t.mu.Unlock()
	for _, cc := range all {
		closeConn := func() {
			<-cc.ready
			if cc.err == nil {
				cc.h.fail(&Error{Code: ErrCodeNoError, Reason: "transport closed"})
			}
		}
		select {
		case <-cc.ready:
			closeConn()
		default:
			go closeConn()
		}
	}
	return nil
}

func (cc *clientConn) begin() {
	cc.mu.Lock()
	cc.active++
	cc.mu.Unlock()
}

func (cc *clientConn) end() {
	cc.mu.Lock()
	cc.active--
	idle := cc.active == 0
	cc.mu.Unlock()
	if _, away := cc.h.goingAway(); away && idle {
		cc.h.fail(&Error{Code: ErrCodeNoError, Reason: "after GOAWAY"})
	}
}

// roundTrip runs one request on the connection.
func (cc *clientConn) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if _, away := cc.h.goingAway(); away {
		return nil, ErrGoAway
	}
	cc.begin()
	st, err := cc.h.c.OpenStreamSync(ctx)
	if err != nil {
		cc.end()
		closeBody(req)
		return nil, translate(err)
	}
	if id, away := cc.h.goingAway(); away && st.ID() >= id {
		st.CancelWrite(uint64(ErrCodeRequestCancelled))
		st.CancelRead(uint64(ErrCodeRequestCancelled))
		cc.end()
		return nil, ErrGoAway
	}
	var once sync.Once
	finish := func() { once.Do(cc.end) }
	cancel := func() {
		st.CancelWrite(uint64(ErrCodeRequestCancelled))
		st.CancelRead(uint64(ErrCodeRequestCancelled))
	}
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) (*http.Response, error) {
		stop()
		cancel()
		finish()
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if c, _, ok := streamResetCode(err); ok && ErrCode(c) == ErrCodeRequestRejected {
			return nil, ErrGoAway
		}
		return nil, translate(err)
	}

	hdr, err := cc.requestHeaders(req)
	if err != nil {
		closeBody(req)
		return fail(err)
	}
	st.SetWriteDeadline(time.Now().Add(cc.lim.writeTimeout))
	if _, err := st.Write(hdr); err != nil {
		closeBody(req)
		return fail(err)
	}
	// The body goes out on its own goroutine, so a response (an error, a
	// 100-continue) can arrive while it is sent.
	bodyErr := make(chan error, 1)
	if req.Body == nil || req.Body == http.NoBody {
		// RFC 9114 §4.1: a server may answer before the request ends and
		// stop reading it, and "Clients MUST NOT discard complete responses
		// as a result of having their request terminated abruptly": a Close
		// refused after the server's STOP_SENDING (quic-go: "close called
		// for canceled stream") is no error; a broken connection shows in
		// the response's read.
		st.Close()
		bodyErr <- nil
	} else {
		go func() { bodyErr <- cc.sendBody(st, req) }()
	}

	fr := newFrameReader(st)
	var resp *http.Response
	for {
		fields, err := readHeaders(fr, st, cc.lim, false)
		if err == io.EOF {
			err = streamError(ErrCodeMessageError, "stream ended before the response")
		}
		if err != nil {
			var he *Error
			if errors.As(err, &he) && !he.Stream && !he.Remote {
				cc.h.fail(he)
			}
			return fail(err)
		}
		if resp, err = responseFromFields(fields); err != nil {
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		// Interim (1xx) responses are skipped.
	}
	select {
	case err := <-bodyErr:
		if err != nil && ctx.Err() == nil {
			if _, _, ok := streamResetCode(err); !ok { // a server that stops reading the body early is fine
				return fail(err)
			}
		}
	default:
	}
	resp.Request = req
	cs := cc.h.c.ConnectionState().TLS
	resp.TLS = &cs
	noBody := req.Method == http.MethodHead || !bodyAllowed(resp.StatusCode)
	b := &body{st: st, fr: fr, lim: cc.lim, contentLength: resp.ContentLength,
		fail: func(err error) {
			var he *Error
			switch {
			case errors.As(err, &he) && !he.Stream:
				cc.h.fail(he)
			case he != nil:
				st.CancelRead(uint64(he.Code))
				st.CancelWrite(uint64(he.Code))
			default:
				cancel()
			}
		},
		onEnd: func() { stop(); finish() },
	}
	if noBody {
		b.contentLength = -1
	}
	b.setTrailer = func(h http.Header) {
		if resp.Trailer == nil {
			resp.Trailer = make(http.Header)
		}
		for k, vs := range h {
			resp.Trailer[k] = vs
		}
	}
	resp.Body = b
	if noBody {
		resp.Body = http.NoBody
		b.closeWith(ErrCodeNoError)
	}
	return resp, nil
}

// requestHeaders encodes the request's HEADERS frame (RFC 9114 §4.3.1).
func (cc *clientConn) requestHeaders(req *http.Request) ([]byte, error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !httpguts.ValidHostHeader(host) {
		return nil, fmt.Errorf("h3: invalid host %q", host)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	e := newEncoder()
	e.field(":method", method)
	e.field(":scheme", "https")
	e.field(":authority", host)
	e.field(":path", req.URL.RequestURI())
	e.header(req.Header, func(k string) bool { return k == "Host" || k == "Content-Length" || k == "Trailer" })
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength > 0 {
		e.field("content-length", strconv.FormatInt(req.ContentLength, 10))
	}
	if len(req.Trailer) > 0 {
		keys := make([]string, 0, len(req.Trailer))
		for k := range req.Trailer {
			keys = append(keys, strings.ToLower(k))
		}
		e.field("trailer", strings.Join(keys, ", "))
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		e.field("user-agent", "mpqsched-h3")
	}
	frame := e.frame()
	// RFC 9114 §4.2.2: "An implementation that has received this parameter
	// SHOULD NOT send an HTTP message header that exceeds the indicated
	// size" (approximated by the encoded size, which is smaller).
	if m := cc.h.peerMaxField(); m > 0 && uint64(len(frame)) > m {
		return nil, fmt.Errorf("h3: request header of %d bytes exceeds the server's limit of %d", len(frame), m)
	}
	return frame, nil
}

// sendBody copies the request body into DATA frames, then the trailers,
// and closes the send side.
func (cc *clientConn) sendBody(st Stream, req *http.Request) error {
	defer req.Body.Close()
	buf := make([]byte, writeBufSize)
	var sent int64
	for {
		n, rerr := req.Body.Read(buf)
		if n > 0 {
			sent += int64(n)
			var hdr [16]byte
			st.SetWriteDeadline(time.Now().Add(cc.lim.writeTimeout))
			if _, err := st.Write(appendFrameHeader(hdr[:0], frameData, uint64(n))); err != nil {
				return err
			}
			if _, err := st.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			st.CancelWrite(uint64(ErrCodeRequestCancelled))
			return rerr
		}
	}
	if req.ContentLength > 0 && sent != req.ContentLength {
		st.CancelWrite(uint64(ErrCodeRequestCancelled))
		return fmt.Errorf("h3: request body of %d bytes, ContentLength %d", sent, req.ContentLength)
	}
	if len(req.Trailer) > 0 {
		e := newEncoder()
		e.header(req.Trailer, nil)
		st.SetWriteDeadline(time.Now().Add(cc.lim.writeTimeout))
		if _, err := st.Write(e.frame()); err != nil {
			return err
		}
	}
	st.Close() // refused only after the server's STOP_SENDING: see roundTrip
	return nil
}
