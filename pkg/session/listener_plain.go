package session

// One UDP port for sessions and for plain QUIC clients, chosen by ALPN.
//
// RFC 7301 §3.2: "the server SHALL select the first protocol in the
// server's list that is also in the client's list" (crypto/tls honours the
// server's order), so a Listener offering ALPN first and then
// Config.PlainALPNs starts a session with every client that offers ALPN,
// and serves any other client that offers a plain protocol, such as "h3",
// on a plain connection (AcceptAny). A client offering none of them is
// refused by TLS (no_application_protocol), which the Listener logs.

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"time"

	"github.com/quic-go/quic-go"
)

// plainQueueLen bounds the plain connections waiting for AcceptAny; more
// are refused.
const plainQueueLen = 64

// checkPlainALPNs validates Config.PlainALPNs.
func checkPlainALPNs(protos []string) error {
	for _, p := range protos {
		if p == "" || len(p) > 255 || p == ALPN {
			return fmt.Errorf("session: Config.PlainALPNs: %q: want 1 to 255 bytes, not %q", p, ALPN)
		}
	}
	return nil
}

// listenTLS is the Listener's TLS configuration: ALPN first, then the
// plain protocols, and a hook that reports a client offering none of them.
func (l *Listener) listenTLS(c *tls.Config, plain []string) *tls.Config {
	c = c.Clone()
	c.NextProtos = append([]string{ALPN}, plain...)
	protos := c.NextProtos
	orig := c.GetConfigForClient
	c.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		if !slices.ContainsFunc(hi.SupportedProtos, func(p string) bool { return slices.Contains(protos, p) }) {
			l.refusedALPN(hi)
		}
		if orig == nil {
			return nil, nil
		}
		cc, err := orig(hi)
		if cc != nil {
			cc = cc.Clone()
			cc.NextProtos = protos
		}
		return cc, err
	}
	return c
}

// refusedALPN logs a client that offered none of the listener's
// protocols (its handshake fails in TLS), at most once per
// limitLogInterval with a count of the others.
func (l *Listener) refusedALPN(hi *tls.ClientHelloInfo) {
	from := "?"
	if hi.Conn != nil {
		from = hi.Conn.RemoteAddr().String()
	}
	now := time.Now()
	l.mu.Lock()
	l.refusedTLS++
	l.alpnLog.n++
	if now.Sub(l.alpnLog.last) < limitLogInterval {
		l.mu.Unlock()
		return
	}
	extra := ""
	if n := l.alpnLog.n - 1; n > 0 {
		extra = fmt.Sprintf(" (and %d more since the last report)", n)
	}
	l.alpnLog.last, l.alpnLog.n = now, 0
	l.mu.Unlock()
	l.log.printf("session: refused a handshake from %s: it offered ALPN %q, this listener %q%s",
		from, hi.SupportedProtos, append([]string{ALPN}, l.cfg.PlainALPNs...), extra)
}

// RefusedHandshakes counts the TLS handshakes the listener refused because
// the client offered none of its application protocols.
func (l *Listener) RefusedHandshakes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refusedTLS
}

// acceptPlain queues a connection that chose one of Config.PlainALPNs for
// AcceptAny, within MaxSessions and MaxSessionsPerIP (a plain connection
// counts as a session).
func (l *Listener) acceptPlain(conn *quic.Conn) {
	ip := sourceIP(conn.RemoteAddr())
	l.mu.Lock()
	var why string
	switch {
	case len(l.sessions)+l.plain >= l.cfg.MaxSessions:
		why = fmt.Sprintf("%d sessions", l.cfg.MaxSessions)
	case l.perIP[ip] >= l.cfg.MaxSessionsPerIP:
		why = fmt.Sprintf("%d sessions from %s", l.cfg.MaxSessionsPerIP, ip)
	default:
		l.plain++
		l.perIP[ip]++
	}
	l.mu.Unlock()
	if why != "" {
		l.refuse(conn, "sessions", why)
		return
	}
	context.AfterFunc(conn.Context(), func() {
		l.mu.Lock()
		l.plain--
		if l.perIP[ip]--; l.perIP[ip] <= 0 {
			delete(l.perIP, ip)
		}
		l.mu.Unlock()
	})
	select {
	case l.plainQ <- conn:
	default:
		l.refuse(conn, "plain", fmt.Sprintf("%d plain connections waiting for AcceptAny", plainQueueLen))
	}
}

// AcceptAny waits for a new session or, on a Listener with
// Config.PlainALPNs, a plain QUIC connection whose client chose one of
// them (its protocol is plain.ConnectionState().TLS.NegotiatedProtocol).
// Exactly one of s and plain is non-nil when err is nil. The caller owns
// a plain connection; Close ends it with the Listener's socket. Accept
// returns sessions only: with PlainALPNs set, call AcceptAny, or plain
// connections beyond 64 waiting are refused.
func (l *Listener) AcceptAny(ctx context.Context) (s *Session, plain *quic.Conn, err error) {
	select {
	case s := <-l.acceptQ:
		return s, nil, nil
	case c := <-l.plainQ:
		return nil, c, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-l.done:
		return nil, nil, ErrClosed
	}
}
