package mpfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// StatsPath is the HTTP path that answers the requesting session's
// ServerStats as JSON.
const StatsPath = "/.mpq/stats"

// DigestHeader carries a file's SHA-256 in HTTP responses (RFC 9530).
const DigestHeader = "Repr-Digest"

// ErrShutdown is the error sessions are closed with when the server stops.
var ErrShutdown = errors.New("mpfile: server shutting down")

// Server serves the files of Dir on every session of a session.Listener:
// one goroutine per session and one per stream; FILE requests are answered
// directly, every other stream goes to an HTTP server with the same files.
// The zero value with Dir set is ready to use; set the other fields before
// Serve.
//
// Timeouts bound what a client can pin: a stream must complete its request
// within RequestTimeout; a response that makes no write progress for
// WriteTimeout (a client that stopped reading) is reset with
// CodeWriteTimeout (session.Stream.CancelWrite), which releases the stream's
// send buffer at once; the session and its other streams go on, since each
// stream has its own send buffer and flow control. Each such event goes to
// Limits, at most one line per kind per interval.
type Server struct {
	Dir  string                           // directory served; names are slash paths inside it, checked by checkPath
	Logf func(format string, args ...any) // optional log of every session and request

	RequestTimeout time.Duration // a request (FILE line, HTTP header, STATS line) must be complete within this; 0: DefaultRequestTimeout
	WriteTimeout   time.Duration // longest time a response may make no progress before the session is dropped; 0: DefaultWriteTimeout
	IdleTimeout    time.Duration // longest wait for the next request on an HTTP keep-alive stream; 0: DefaultIdleTimeout
	Listing        bool          // HTTP serves a listing for a directory without index.html (default: 404)
	Limits         *RateLog      // where reached limits are logged, rate-limited; nil: not logged

	mu       sync.Mutex
	ln       *session.Listener
	ctx      context.Context
	cancel   context.CancelFunc
	sessions map[*session.Session]struct{}
	wg       sync.WaitGroup
	closed   bool
	hc       hashCache
	httpLn   *connListener
	httpSrv  *http.Server
	httpDone chan struct{}
}

func (sv *Server) logf(format string, args ...any) {
	if sv.Logf != nil {
		sv.Logf(format, args...)
	}
}

// init starts the HTTP server; sv.mu is held.
func (sv *Server) initLocked() {
	if sv.ctx != nil {
		return
	}
	sv.ctx, sv.cancel = context.WithCancel(context.Background())
	sv.sessions = map[*session.Session]struct{}{}
	sv.httpLn = newConnListener()
	sv.httpSrv = &http.Server{
		Handler:           sv.Handler(),
		ReadHeaderTimeout: orDefault(sv.RequestTimeout, DefaultRequestTimeout),
		ReadTimeout:       orDefault(sv.RequestTimeout, DefaultRequestTimeout), // GET and HEAD only: a request is its header
		IdleTimeout:       orDefault(sv.IdleTimeout, DefaultIdleTimeout),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if mc, ok := c.(*Conn); ok {
				return context.WithValue(ctx, sessionKey{}, mc.Session())
			}
			return ctx
		},
		ErrorLog: nil,
	}
	sv.httpDone = make(chan struct{})
	go func() {
		defer close(sv.httpDone)
		sv.httpSrv.Serve(sv.httpLn)
	}()
}

type sessionKey struct{}

// Serve accepts sessions from ln until Close (or until ln is closed), and
// serves each on its own goroutine. It returns nil after Close.
func (sv *Server) Serve(ln *session.Listener) error {
	sv.mu.Lock()
	if sv.closed {
		sv.mu.Unlock()
		return ErrShutdown
	}
	sv.initLocked()
	sv.ln = ln
	ctx := sv.ctx
	sv.mu.Unlock()
	for {
		s, err := ln.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, session.ErrClosed) {
				return nil
			}
			return err
		}
		sv.mu.Lock()
		if sv.closed {
			sv.mu.Unlock()
			s.CloseWithError(0, ErrShutdown.Error())
			return nil
		}
		sv.sessions[s] = struct{}{}
		sv.wg.Add(1)
		sv.mu.Unlock()
		go sv.serveSession(ctx, s)
	}
}

// Sessions is the number of sessions being served.
func (sv *Server) Sessions() int {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return len(sv.sessions)
}

func (sv *Server) serveSession(ctx context.Context, s *session.Session) {
	defer sv.wg.Done()
	remote := s.RemoteAddr()
	sv.logf("session from %v (scheduler %s)", remote, s.Scheduler())
	var wg sync.WaitGroup
	for {
		st, err := s.AcceptStream(ctx)
		if err != nil {
			break
		}
		wg.Add(1)
		go func() { defer wg.Done(); sv.serveStream(s, st) }()
	}
	wg.Wait()
	err := s.Close() // already ended: this only waits for its goroutines
	if err == nil {
		err = s.Err()
	}
	stats := s.Stats()
	sv.logf("session from %v ended after %.2f s: %d B delivered to it, %d B sent on %d paths (%v)",
		remote, stats.Elapsed.Seconds(), stats.DeliveredBytes, stats.SentBytes, len(stats.Paths), errOrOK(err))
	sv.mu.Lock()
	delete(sv.sessions, s)
	sv.mu.Unlock()
}

func errOrOK(err error) any {
	if err == nil {
		return "ok"
	}
	return err
}

// serveStream dispatches one stream: FILE request or HTTP connection.
func (sv *Server) serveStream(s *session.Session, st *session.Stream) {
	reqTO := orDefault(sv.RequestTimeout, DefaultRequestTimeout)
	st.SetReadDeadline(time.Now().Add(reqTO))
	br := bufio.NewReaderSize(st, 4096)
	first, err := br.Peek(len(cmdFile))
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			sv.Limits.Event(time.Now(), "request timeout", fmt.Sprintf("a stream of %v sent no request within %v", s.RemoteAddr(), reqTO))
		}
		closeStream(st)
		return
	}
	if string(first) != cmdFile {
		st.SetReadDeadline(time.Time{}) // net/http sets its own
		c := NewConn(s, st, br)
		c.writeTimeout = orDefault(sv.WriteTimeout, DefaultWriteTimeout)
		c.stalled = func() { sv.resetStalled(s, st, c.writeTimeout) }
		if !sv.httpLn.push(c) {
			c.Close()
		}
		return
	}
	defer closeStream(st)
	line, err := readLine(br)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			sv.Limits.Event(time.Now(), "request timeout", fmt.Sprintf("a FILE request of %v was not complete within %v", s.RemoteAddr(), reqTO))
		}
		return
	}
	st.SetReadDeadline(time.Time{})
	name := strings.TrimPrefix(line, cmdFile)
	start := time.Now()
	lim := fileLimits{request: reqTO, write: orDefault(sv.WriteTimeout, DefaultWriteTimeout), now: time.Now}
	err = serveFile(st, br, sv.Dir, name, &sv.hc, lim, func() ServerStats { return StatsOf(s.Stats()) })
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			sv.resetStalled(s, st, lim.write)
		}
		sv.logf("%v: FILE %q: %v", s.RemoteAddr(), name, err)
		return
	}
	sv.logf("%v: FILE %q sent in %.2f s", s.RemoteAddr(), name, time.Since(start).Seconds())
}

// resetStalled resets st, a stream of s whose response writes made no
// progress for d, with CodeWriteTimeout.
func (sv *Server) resetStalled(s *session.Session, st *session.Stream, d time.Duration) {
	sv.Limits.Event(time.Now(), "write timeout", fmt.Sprintf("reset a response stream of %v: no write progress for %v (a client that stopped reading)", s.RemoteAddr(), d))
	st.CancelWrite(CodeWriteTimeout)
}

// Close stops accepting sessions, aborts the sessions being served, stops
// the HTTP side, closes the listener given to Serve and waits for every
// goroutine of the server.
func (sv *Server) Close() error {
	sv.mu.Lock()
	if sv.closed {
		sv.mu.Unlock()
		return nil
	}
	sv.closed = true
	sv.initLocked()
	sv.cancel()
	ss := make([]*session.Session, 0, len(sv.sessions))
	for s := range sv.sessions {
		ss = append(ss, s)
	}
	ln := sv.ln
	sv.mu.Unlock()
	for _, s := range ss {
		s.CloseWithError(0, ErrShutdown.Error())
	}
	sv.httpLn.Close()
	sv.httpSrv.Close()
	<-sv.httpDone
	var err error
	if ln != nil {
		err = ln.Close()
	}
	sv.wg.Wait()
	return err
}
