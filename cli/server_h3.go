package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// sessionCtxKey is the request-context key of the session a request came
// on (h3sessionListener puts it there), read by the stats handler.
type sessionCtxKey struct{}

// h3sessionListener adapts the multipath listener to h3.Listener: its
// sessions, and the plain HTTP/3 connections of its port. Each
// session's context carries the session itself, so that the handler of
// mpfile.StatsPath can report the counters of the session it runs on.
// Sessions counts the sessions (and plain connections) accepted and not
// yet ended; logf, if not
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

// Accept waits for the next session, or plain HTTP/3 connection (ALPN
// "h3" on the same port), until ctx is done.
func (l *h3sessionListener) Accept(ctx context.Context) (h3.Conn, error) {
	for {
		s, plain, err := l.ln.AcceptAny(ctx)
		if err != nil {
			return nil, err
		}
		if plain == nil {
			return l.session(s), nil
		}
		from := plain.RemoteAddr()
		if p := plain.ConnectionState().TLS.NegotiatedProtocol; p != h3.NextProtoH3 {
			plain.CloseWithError(quic.ApplicationErrorCode(h3.ErrCodeVersionFallback), "not HTTP/3")
			continue
		}
		l.sessions.Add(1)
		if l.logf != nil {
			l.logf("plain HTTP/3 connection from %v (single path)", from)
		}
		context.AfterFunc(plain.Context(), func() {
			l.sessions.Add(-1)
			if l.logf != nil {
				l.logf("plain HTTP/3 connection from %v ended (%v)", from, context.Cause(plain.Context()))
			}
		})
		return h3.FromQUIC(plain), nil
	}
}

// session counts and logs s, and adapts it for the h3 server. Its address
// is read once, at the start: a session whose paths all ended has none.
func (l *h3sessionListener) session(s *session.Session) h3.Conn {
	from := s.RemoteAddr()
	l.sessions.Add(1)
	if l.logf != nil {
		l.logf("session from %v (scheduler %s)", from, s.Scheduler())
	}
	context.AfterFunc(s.Context(), func() {
		l.sessions.Add(-1)
		if l.logf != nil {
			st := s.Stats()
			l.logf("session from %v ended after %.2f s: %d B sent on %d paths (%v)",
				from, st.Elapsed.Seconds(), st.SentBytes, len(st.Paths), context.Cause(s.Context()))
		}
	})
	c := h3.FromSession(s)
	return sessionConn{Conn: c, ctx: context.WithValue(c.Context(), sessionCtxKey{}, s)}
}

// Close closes the multipath listener, which ends its sessions.
func (l *h3sessionListener) Close() error { return l.ln.Close() }

// listenOnePort is mpquic-server's listener on pc: one port for every
// HTTP/3 client (issue 31), sessions and plain HTTP/3 (ALPN "h3") alike,
// served by one h3.Server with the same handler and limits
// (h3sessionListener).
func listenOnePort(pc net.PacketConn, tlsConf *tls.Config, cfg *session.Config) (*session.Listener, error) {
	c := *cfg
	c.PlainALPNs = []string{h3.NextProtoH3}
	return session.Listen(pc, tlsConf, &c)
}

// serverHandler is fileHandler with the multipath advertisement (Alt-Svc)
// on the responses to plain HTTP/3 clients.
func serverHandler(fs *mpfile.Files, logf func(string, ...any)) http.Handler {
	return h3.AdvertiseMultipath(fileHandler(fs, logf))
}

// fileHandler is mpquic-server's HTTP/3 handler: GET and HEAD of the files
// of fs.Dir with Range, conditional requests and the Repr-Digest header on
// every 200 (mpfile.Files), plus mpfile.StatsPath answered with
// the sender counters of the session the request came on. logf, if not
// nil, logs every request.
func fileHandler(fs *mpfile.Files, logf func(string, ...any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if logf != nil {
			logf("%v: %s %s", r.RemoteAddr, r.Method, r.URL.Path)
		}
		if r.URL.Path != mpfile.StatsPath {
			fs.ServeHTTP(w, r)
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
func newH3Server(h http.Handler, l serverLimits, limits *rateLog) *h3.Server {
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
