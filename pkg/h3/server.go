package h3

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"
)

// Server serves HTTP/3 requests (RFC 9114) to an http.Handler, on any
// Conn: a multipath session (FromSession, SessionListener) or a quic-go
// connection (FromQUIC, QUICListener).
//
// Each request runs its handler on its own goroutine; how many run at once
// per connection is bounded by the transport's stream credit (the session's
// Config.MaxStreams, quic-go's MaxIncomingStreams), which the peer cannot
// raise. The limit fields bound what a peer can make the server hold; zero
// means the Default… constant. Set the fields before the first Serve or
// ServeConn and leave them alone after; the methods are safe for
// concurrent use.
type Server struct {
	// Handler serves every request; nil means http.NotFoundHandler.
	Handler http.Handler

	MaxHeaderBytes      int           // largest request field section (bytes), announced in SETTINGS; see DefaultMaxHeaderBytes
	MaxHeaderCount      int           // most fields in a request section; see DefaultMaxHeaderCount
	MaxRequestBodyBytes int64         // longest request body (bytes); see DefaultMaxRequestBodyBytes; negative: no limit
	HeaderTimeout       time.Duration // wait for a request's HEADERS after its stream opened; see DefaultHeaderTimeout
	ReadTimeout         time.Duration // each wait of a request body Read; see DefaultReadTimeout
	WriteTimeout        time.Duration // each wait of a response Write for the peer's credit; see DefaultWriteTimeout

	// MaxConcurrentRequests bounds the handlers running at once on one
	// connection; see DefaultMaxConcurrentRequests. The transport's stream
	// credit bounds the streams a peer has open, but a peer that resets its
	// streams gets that credit back while handlers that ignore their
	// request's context still run: past this bound the server accepts no
	// further stream until a handler returns (the peer waits for credit).
	MaxConcurrentRequests int

	// IdleTimeout closes a connection (H3_NO_ERROR, "idle") on which no
	// request has run for this long; see DefaultIdleTimeout; negative: never.
	// Only requests count: QUIC keep-alives and control frames do not, so a
	// client that connects and never asks holds the server's connection for
	// IdleTimeout at most. A response its handler wrote whole but the
	// transport still delivers keeps the connection while its delivery
	// progresses (on a session; a quic-go connection cannot tell): a client
	// that stops reading holds it 2·IdleTimeout at most.
	IdleTimeout time.Duration

	// ErrorLog receives handler panics and connection errors; nil: none.
	ErrorLog func(format string, args ...any)

	mu        sync.Mutex
	conns     map[*serverConn]struct{}
	listeners map[Listener]struct{}
	closing   bool          // Shutdown or Close called
	allGone   chan struct{} // closed when conns is empty while closing
}

// ErrServerClosed is returned by Serve and ServeConn after Shutdown or
// Close.
var ErrServerClosed = errors.New("h3: server closed")

func (s *Server) limits() *limits {
	return &limits{
		maxHeaderBytes: orInt(s.MaxHeaderBytes, DefaultMaxHeaderBytes),
		maxHeaderCount: orInt(s.MaxHeaderCount, DefaultMaxHeaderCount),
		maxBody:        orInt64(s.MaxRequestBodyBytes, DefaultMaxRequestBodyBytes),
		headerTimeout:  orDur(s.HeaderTimeout, DefaultHeaderTimeout),
		readTimeout:    orDur(s.ReadTimeout, DefaultReadTimeout),
		writeTimeout:   orDur(s.WriteTimeout, DefaultWriteTimeout),
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog(format, args...)
	}
}

// Serve accepts connections from ln and serves each on its own goroutine
// until ln fails or the server shuts down (then it returns
// ErrServerClosed). Shutdown and Close close ln.
func (s *Server) Serve(ln Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if s.listeners == nil {
		s.listeners = make(map[Listener]struct{})
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()
	for {
		c, err := ln.Accept(context.Background())
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			return err
		}
		go s.ServeConn(c)
	}
}

// serverConn is one connection being served.
type serverConn struct {
	s   *Server
	h   *conn
	lim *limits

	mu      sync.Mutex
	streams map[uint64]Stream   // open request streams, for PRIORITY_UPDATE (at most the stream credit)
	pending map[uint64]Priority // PRIORITY_UPDATEs for streams not yet open (at most maxPendingPriorities)
	nextID  uint64              // one past the highest request stream ID accepted
	goAway  bool                // GOAWAY sent: later streams are refused
	active  int                 // handlers running
	slots   chan struct{}       // one per running handler (Server.MaxConcurrentRequests)
	idle    *time.Timer         // closes the connection after IdleTimeout with no handler running; nil: never
	idleFor time.Duration       // Server.IdleTimeout with its default
	idleAt  uint64              // the transport's delivery progress when the idle timer was armed
}

// noProgress marks serverConn.idleAt as not read since the last request
// ended: the first expiry after it re-arms if data is still pending.
const noProgress = ^uint64(0)

// deliveryReporter is what a transport may tell of the data it still
// delivers (the session adapter does): whether some is pending, and a
// counter that grows while data moves.
type deliveryReporter interface {
	DeliveryState() (pending bool, progress uint64)
}

// ServeConn serves HTTP/3 on c until the connection ends; it returns
// ErrServerClosed if the server shut down, else the connection's error.
// Safe for concurrent use with other ServeConn calls.
func (s *Server) ServeConn(c Conn) error {
	lim := s.limits()
	sc := &serverConn{s: s, lim: lim, h: newConn(c, true, lim.maxHeaderBytes),
		streams: make(map[uint64]Stream), pending: make(map[uint64]Priority)}
	sc.h.onPriority = sc.priorityUpdated
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		c.CloseWithError(uint64(ErrCodeNoError), "server closed")
		return ErrServerClosed
	}
	if s.conns == nil {
		s.conns = make(map[*serverConn]struct{})
	}
	s.conns[sc] = struct{}{}
	s.mu.Unlock()
	defer s.forget(sc)

	if err := sc.h.start(); err != nil {
		c.CloseWithError(uint64(ErrCodeInternalError), "control stream")
		return err
	}
	ctx, cancel := context.WithCancel(c.Context())
	defer cancel()
	if sc.idleFor = s.IdleTimeout; sc.idleFor == 0 {
		sc.idleFor = DefaultIdleTimeout
	}
	if sc.idleFor > 0 {
		sc.mu.Lock()
		sc.idle = time.AfterFunc(sc.idleFor, sc.idleExpired)
		sc.mu.Unlock()
		defer sc.idle.Stop()
	}
	sc.slots = make(chan struct{}, orInt(s.MaxConcurrentRequests, DefaultMaxConcurrentRequests))
	for {
		select {
		case sc.slots <- struct{}{}:
		case <-c.Context().Done():
			return translate(context.Cause(c.Context()))
		}
		st, err := c.AcceptStream(c.Context())
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			return translate(err)
		}
		sc.mu.Lock()
		refused := sc.goAway
		if !refused {
			sc.nextID = max(sc.nextID, st.ID()+4)
			sc.streams[st.ID()] = st
			sc.active++
			if sc.idle != nil {
				sc.idle.Stop()
			}
		}
		sc.mu.Unlock()
		if refused {
			<-sc.slots
			// RFC 9114 §5.2: requests at or past the GOAWAY ID are not
			// processed; "servers SHOULD use the H3_REQUEST_REJECTED error
			// code" so the client may retry them elsewhere.
			st.CancelRead(uint64(ErrCodeRequestRejected))
			st.CancelWrite(uint64(ErrCodeRequestRejected))
			continue
		}
		go sc.serve(ctx, st)
	}
}

func (s *Server) forget(sc *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, sc)
	if s.closing && len(s.conns) == 0 && s.allGone != nil {
		select {
		case <-s.allGone:
		default:
			close(s.allGone)
		}
	}
}

// priorityUpdated applies a PRIORITY_UPDATE (RFC 9218 §7) to its stream,
// or keeps it (bounded) for a stream not yet accepted.
func (sc *serverConn) priorityUpdated(id uint64, p Priority) {
	sc.mu.Lock()
	st, ok := sc.streams[id]
	if !ok && id >= sc.nextID && len(sc.pending) < maxPendingPriorities {
		sc.pending[id] = p
	}
	sc.mu.Unlock()
	if ok {
		applyPriority(st, p)
	}
}

// done ends a handler's bookkeeping.
func (sc *serverConn) done(id uint64) {
	sc.mu.Lock()
	delete(sc.streams, id)
	sc.active--
	if sc.active == 0 && sc.idle != nil {
		// The progress is read when the timer fires (idleExpired); here
		// only a marker that no reading was taken since the last request.
		sc.idleAt = noProgress
		sc.idle.Reset(sc.idleFor)
	}
	sc.mu.Unlock()
	<-sc.slots
}

// idleExpired closes the connection if still no handler runs (a request
// accepted while the timer fired keeps it).
//
// A response still being delivered, with progress since the timer was
// armed, re-arms it instead: the handler returned, but the request is not
// over for the client.
func (sc *serverConn) idleExpired() {
	var pending bool
	var progress uint64
	d, reports := sc.h.c.(deliveryReporter)
	if reports {
		pending, progress = d.DeliveryState() // outside sc.mu: it takes the session's lock
	}
	sc.mu.Lock()
	idle := sc.active == 0
	if idle && pending && (sc.idleAt == noProgress || progress != sc.idleAt) {
		sc.idleAt, idle = progress, false
		sc.idle.Reset(sc.idleFor)
	}
	sc.mu.Unlock()
	if idle {
		sc.h.c.CloseWithError(uint64(ErrCodeNoError), "idle")
	}
}

// serve runs one request.
func (sc *serverConn) serve(connCtx context.Context, st Stream) {
	defer sc.done(st.ID())
	defer sc.recoverServe(st)
	fr := newFrameReader(st)
	fields, err := readHeaders(fr, st, sc.lim, true)
	if err != nil {
		sc.requestFailed(st, err)
		return
	}
	req, err := requestFromFields(fields)
	if err != nil {
		sc.requestFailed(st, err)
		return
	}
	// Priority: the request's header (RFC 9218 §5), overridden by a
	// PRIORITY_UPDATE that came first (§7: "the most recently received").
	prio := ParsePriority(req.Header.Get("Priority"), DefaultPriority)
	sc.mu.Lock()
	if p, ok := sc.pending[st.ID()]; ok {
		prio = p
		delete(sc.pending, st.ID())
	}
	sc.mu.Unlock()
	// Always: without a signal the response gets RFC 9218's defaults
	// (urgency 3, not incremental), which a session stream does not start
	// with (it starts round-robin, as quic-go's streams are served).
	applyPriority(st, prio)

	// The request's context ends with the connection, or when the client
	// cancels (its STOP_SENDING ends our send side, RFC 9114 §4.1.1).
	ctx, cancel := context.WithCancel(context.WithValue(connCtx, http.LocalAddrContextKey, sc.h.c.LocalAddr()))
	defer cancel()
	stop := context.AfterFunc(st.Context(), cancel)
	defer stop()
	req = req.WithContext(ctx)
	req.RemoteAddr = addrString(sc.h.c.RemoteAddr())
	cs := sc.h.c.ConnectionState().TLS
	req.TLS = &cs

	b := &body{st: st, fr: fr, lim: sc.lim, isServer: true, maxBody: sc.lim.maxBody,
		contentLength: req.ContentLength,
		fail:          func(err error) { sc.requestFailed(st, err) }}
	if req.Trailer != nil {
		b.setTrailer = func(h http.Header) {
			for k, vs := range h {
				req.Trailer[k] = vs
			}
		}
	}
	req.Body = b
	if req.ContentLength == 0 {
		req.Body = http.NoBody
	}
	if sc.lim.maxBody > 0 && req.ContentLength > sc.lim.maxBody {
		sc.requestFailed(st, streamError(ErrCodeExcessiveLoad, "content-length %d past the limit", req.ContentLength))
		return
	}
	w := newResponseWriter(st, sc.h, sc.lim, req.Method == http.MethodHead)
	h := sc.s.Handler
	if h == nil {
		h = http.NotFoundHandler()
	}
	if !sc.runHandler(h, w, req, st) {
		return
	}
	if err := w.finish(); err != nil {
		st.CancelWrite(uint64(ErrCodeInternalError))
		st.CancelRead(uint64(ErrCodeRequestCancelled))
		return
	}
	// RFC 9114 §4.1.1: once the response is complete, a server may abort
	// reading the rest of the request with H3_NO_ERROR.
	b.closeWith(ErrCodeNoError)
}

// runHandler calls the handler; a panic (other than http.ErrAbortHandler,
// which just aborts) resets the stream with H3_INTERNAL_ERROR.
func (sc *serverConn) runHandler(h http.Handler, w *responseWriter, req *http.Request, st Stream) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				sc.s.logf("h3: handler panic serving %s: %v", req.URL, p)
			}
			st.CancelWrite(uint64(ErrCodeInternalError))
			st.CancelRead(uint64(ErrCodeRequestCancelled))
			ok = false
		}
	}()
	h.ServeHTTP(w, req)
	return true
}

// requestFailed handles an error reading a request: a stream error resets
// the stream with its code, a connection error closes the connection, an
// oversized header gets 431.
func (sc *serverConn) requestFailed(st Stream, err error) {
	if errors.Is(err, errHeaderTooLarge) {
		// RFC 9110 §15.5.32 (431); then stop reading.
		w := newResponseWriter(st, sc.h, sc.lim, false)
		w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
		w.finish()
		st.CancelRead(uint64(ErrCodeExcessiveLoad))
		return
	}
	var he *Error
	switch {
	case errors.As(err, &he) && he.Stream && !he.Remote:
		st.CancelRead(uint64(he.Code))
		st.CancelWrite(uint64(he.Code))
	case errors.As(err, &he) && !he.Stream && !he.Remote:
		sc.s.logf("h3: connection error: %v", he)
		sc.h.fail(he)
	case err == io.EOF:
		// RFC 9114 §4.1.2: a stream that ends without a complete request
		// "MUST be treated as a stream error of type H3_REQUEST_INCOMPLETE".
		st.CancelWrite(uint64(ErrCodeRequestIncomplete))
	default: // the peer's reset, a timeout, or the connection's end
		st.CancelRead(uint64(ErrCodeRequestCancelled))
		st.CancelWrite(uint64(ErrCodeRequestCancelled))
	}
}

// sendGoAway sends GOAWAY naming the first stream not processed, once, and
// refuses later streams.
func (sc *serverConn) sendGoAway() {
	sc.mu.Lock()
	if sc.goAway {
		sc.mu.Unlock()
		return
	}
	sc.goAway = true
	id := sc.nextID
	sc.mu.Unlock()
	sc.h.sendGoAway(id)
}

// Shutdown stops the server gracefully: it sends GOAWAY on every
// connection (RFC 9114 §5.2) so that clients open no new requests there,
// refuses new connections, and waits until the clients closed their
// connections (they do once their requests are complete) or ctx is done.
// Then it closes the listeners (last, because closing a session listener
// ends the sessions it accepted) and any connection left, with H3_NO_ERROR,
// and returns ctx's error if it expired. Safe for concurrent use.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	if s.allGone == nil {
		s.allGone = make(chan struct{})
		if len(s.conns) == 0 {
			close(s.allGone)
		}
	}
	var conns []*serverConn
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, sc := range conns {
		sc.sendGoAway()
	}
	select {
	case <-s.allGone:
		s.Close()
		return nil
	case <-ctx.Done():
		s.Close()
		return ctx.Err()
	}
}

// Close closes the listeners and every connection at once with
// H3_NO_ERROR; running handlers see their request context cancelled.
// Safe for concurrent use.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing = true
	var lns []Listener
	for ln := range s.listeners {
		lns = append(lns, ln)
	}
	var conns []*serverConn
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, sc := range conns {
		sc.h.fail(&Error{Code: ErrCodeNoError, Reason: "server closed"})
	}
	return nil
}

// recoverServe ends a request whose serving panicked outside the handler
// (runHandler has its own) as net/http's connection goroutine does: the
// panic is logged with its stack and isolated to the request, whose stream
// is reset with H3_INTERNAL_ERROR; the server and the connection's other
// requests go on. A peer must never be able to take the process down.
func (sc *serverConn) recoverServe(st Stream) {
	p := recover()
	if p == nil {
		return
	}
	sc.s.logf("h3: panic serving stream %d: %v\n%s", st.ID(), p, debug.Stack())
	st.CancelWrite(uint64(ErrCodeInternalError))
	st.CancelRead(uint64(ErrCodeRequestCancelled))
}

// addrString is a's String, or "" for a nil address (a Conn of the
// application's own may have none; net/http leaves RemoteAddr empty then).
func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
