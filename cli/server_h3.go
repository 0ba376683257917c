package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// sessionCtxKey is the request-context key of the session a request came
// on (h3sessionListener puts it there), read by the stats handler.
type sessionCtxKey struct{}

// h3sessionListener adapts the multipath listener to h3.Listener. Each
// session's context carries the session itself, so that the handler of
// mpfile.StatsPath can report the counters of the session it runs on.
// Sessions counts the sessions accepted and not yet ended; logf, if not
// nil, logs each session's start and end.
type h3sessionListener struct {
	ln       *session.Listener
	sessions atomic.Int64
	logf     func(string, ...any)
}

// sessionConn is h3.FromSession whose Context carries the session.
type sessionConn struct {
	h3.Conn
	ctx context.Context
}

func (c sessionConn) Context() context.Context { return c.ctx }

// Accept waits for the next session until ctx is done.
func (l *h3sessionListener) Accept(ctx context.Context) (h3.Conn, error) {
	s, err := l.ln.Accept(ctx)
	if err != nil {
		return nil, err
	}
	l.sessions.Add(1)
	if l.logf != nil {
		l.logf("session from %v (scheduler %s)", s.RemoteAddr(), s.Scheduler())
	}
	context.AfterFunc(s.Context(), func() {
		l.sessions.Add(-1)
		if l.logf != nil {
			st := s.Stats()
			l.logf("session from %v ended after %.2f s: %d B sent on %d paths (%v)",
				s.RemoteAddr(), st.Elapsed.Seconds(), st.SentBytes, len(st.Paths), context.Cause(s.Context()))
		}
	})
	c := h3.FromSession(s)
	return sessionConn{Conn: c, ctx: context.WithValue(c.Context(), sessionCtxKey{}, s)}, nil
}

// Close closes the multipath listener, which ends its sessions.
func (l *h3sessionListener) Close() error { return l.ln.Close() }

// fileHandler is mpquic-server's HTTP/3 handler: GET and HEAD of the files
// of fs.Dir with Range, conditional requests and the Repr-Digest header on
// every 200 (mpfile.Server.Handler), plus mpfile.StatsPath answered with
// the sender counters of the session the request came on. logf, if not
// nil, logs every request.
func fileHandler(fs *mpfile.Server, logf func(string, ...any)) http.Handler {
	files := fs.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if logf != nil {
			logf("%v: %s %s", r.RemoteAddr, r.Method, r.URL.Path)
		}
		if r.URL.Path != mpfile.StatsPath {
			files.ServeHTTP(w, r)
			return
		}
		s, _ := r.Context().Value(sessionCtxKey{}).(*session.Session)
		if s == nil {
			http.NotFound(w, r) // the single-path baseline has no session
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(mpfile.StatsOf(s.Stats()))
	})
}

// newH3Server is the HTTP/3 server of the multipath listener: handler
// h with the request limits of l; protocol errors of hostile peers go
// to limits (rate-limited).
func newH3Server(h http.Handler, l serverLimits, limits *mpfile.RateLog) *h3.Server {
	idle := l.sessionIdle // -idle-timeout: HTTP/3's control streams keep a session's own idle timer from firing
	if idle == 0 {
		idle = -1 // off
	}
	return &h3.Server{
		Handler:       h,
		HeaderTimeout: l.requestTimeout,
		WriteTimeout:  l.writeTimeout,
		IdleTimeout:   idle,
		ErrorLog: func(format string, args ...any) {
			limits.Event(time.Now(), "http3", fmt.Sprintf(format, args...))
		},
	}
}
