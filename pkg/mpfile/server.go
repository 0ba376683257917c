package mpfile

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
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

// requestTimeout bounds how long a new stream may take to send its first
// bytes.
const requestTimeout = 30 * time.Second

// ErrShutdown is the error sessions are closed with when the server stops.
var ErrShutdown = errors.New("mpfile: server shutting down")

// Server serves the files of Dir on every session of a session.Listener:
// one goroutine per session and one per stream; FILE requests are answered
// directly, every other stream goes to an HTTP server with the same files.
// The zero value with Dir set is ready to use.
type Server struct {
	Dir  string                           // directory served; file names are plain names inside it
	Logf func(format string, args ...any) // optional log

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
		ReadHeaderTimeout: requestTimeout,
		IdleTimeout:       60 * time.Second,
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
			s.CloseWithError(ErrShutdown)
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
	st.SetReadDeadline(time.Now().Add(requestTimeout))
	br := bufio.NewReaderSize(st, 4096)
	first, err := br.Peek(len(cmdFile))
	if err != nil {
		st.Close()
		st.CloseRead()
		return
	}
	if string(first) != cmdFile {
		st.SetReadDeadline(time.Time{})
		c := NewConn(s, st, br)
		if !sv.httpLn.push(c) {
			c.Close()
		}
		return
	}
	defer st.CloseRead()
	defer st.Close()
	line, err := readLine(br)
	if err != nil {
		return
	}
	st.SetReadDeadline(time.Time{})
	name := strings.TrimPrefix(line, cmdFile)
	start := time.Now()
	err = serveFile(st, br, sv.Dir, name, &sv.hc, func() ServerStats { return StatsOf(s.Stats()) })
	if err != nil {
		sv.logf("%v: FILE %q: %v", s.RemoteAddr(), name, err)
		return
	}
	sv.logf("%v: FILE %q sent in %.2f s", s.RemoteAddr(), name, time.Since(start).Seconds())
}

// Handler is the HTTP side: the files of Dir (net/http's FileServer) with a
// Repr-Digest header (SHA-256) on every regular file, and StatsPath.
func (sv *Server) Handler() http.Handler {
	files := http.FileServer(http.Dir(sv.Dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == StatsPath {
			s, _ := r.Context().Value(sessionKey{}).(*session.Session)
			if s == nil {
				http.Error(w, errNoSession.Error(), http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(StatsOf(s.Stats()))
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			p := filepath.Join(sv.Dir, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				if sum, err := sv.hc.sum(p, fi); err == nil {
					w.Header().Set(DigestHeader, "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":")
				}
			}
		}
		files.ServeHTTP(w, r)
	})
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
		s.CloseWithError(ErrShutdown)
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
