package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
)

// NextProtoH3 is the ALPN of plain HTTP/3 (RFC 9114 §3.1), the protocol a
// Dialer falls back to and a Listener with session.Config.PlainALPNs
// {NextProtoH3} serves besides sessions.
const NextProtoH3 = "h3"

// Dialer makes Transport's connections: a multipath session to the
// authority, or, when the server speaks only plain HTTP/3, that plain
// connection. Its first path's TLS handshake offers both ALPNs, the
// session's first (session.DialAny): a server that picks "h3" is spoken to
// in plain single-path HTTP/3 on the connection that handshake made, with
// no extra round trip. The response tells which ran:
// resp.TLS.NegotiatedProtocol is session.ALPN ("mpqsched/1") on a session,
// NextProtoH3 ("h3") on a plain connection.
//
// A Dialer is safe for concurrent use once its fields are set; each
// connection owns its sockets.
type Dialer struct {
	// TLSConfig is cloned for each connection. Its ServerName, if empty, is
	// the authority's host, as in net/http, so that one Transport serves
	// many hosts; its NextProtos are set by the session.
	TLSConfig *tls.Config
	// Config is the sessions' configuration (nil: defaults). Its
	// PlainALPNs, if empty, are {NextProtoH3}.
	Config *session.Config
	// LocalAddrs are the local addresses of the paths ("192.0.2.7" or
	// "192.0.2.7:0"; the port defaults to 0), the first dialled and the
	// others joined with AddPath; none: one path from an ephemeral socket.
	// A plain connection runs on the first and migrates to the next when
	// its path fails (session.Migrate: RFC 9000 connection migration).
	LocalAddrs []string
	// NoFallback offers the session's ALPN alone: a plain HTTP/3 server
	// then refuses the handshake.
	NoFallback bool
	// OnPath, if set, is called once for each of LocalAddrs (or the one
	// ephemeral path), in order, when it joined or failed to: a path that
	// fails to join is left out of the session, and this is how the caller
	// learns it. It runs on the dialling goroutine.
	OnPath func(PathEvent)
	// OnSession, if set, is called with each session dialled, once its
	// paths joined, before the Transport uses it: for its PathEvents
	// (later failures, recoveries and joins again) and Stats. It runs on
	// the dialling goroutine and must not close the session.
	OnSession func(*session.Session)
}

// PathEvent is what became of one path a Dialer tried.
type PathEvent struct {
	Authority string       // the connection's authority
	Index     int          // position in LocalAddrs, from 1 (the first path carries the handshake), as mpquic-client's -backup counts
	Local     string       // the local address asked for ("" for an ephemeral one)
	Path      sched.PathID // the session's number of the path, when it joined
	Mode      string       // session.ALPN or NextProtoH3: the protocol of the connection it belongs to
	Err       error        // why it is not in use; nil: it is
}

// String is the event as one log line.
func (e PathEvent) String() string {
	local := e.Local
	if local == "" {
		local = "an ephemeral address"
	}
	switch {
	case e.Err != nil:
		return fmt.Sprintf("path %d (from %s) to %s: not used: %v", e.Index, local, e.Authority, e.Err)
	case e.Mode != session.ALPN:
		return fmt.Sprintf("path %d (from %s) to %s: plain %s, single path", e.Index, local, e.Authority, e.Mode)
	}
	return fmt.Sprintf("path %d (from %s) to %s: joined as session path %d", e.Index, local, e.Authority, e.Path)
}

// SessionDialer returns a Transport.Dial: (&Dialer{TLSConfig: tlsConf,
// Config: cfg, LocalAddrs: localAddrs}).Dial. It falls back to plain HTTP/3
// as Dialer does. The returned function is safe for concurrent use; each
// connection owns its sockets.
func SessionDialer(tlsConf *tls.Config, cfg *session.Config, localAddrs ...string) func(ctx context.Context, authority string) (Conn, error) {
	d := &Dialer{TLSConfig: tlsConf, Config: cfg, LocalAddrs: localAddrs}
	return d.Dial
}

// Dial makes the connection for authority ("host:port"), as a
// Transport.Dial.
func (d *Dialer) Dial(ctx context.Context, authority string) (Conn, error) {
	host, _, err := net.SplitHostPort(authority)
	if err != nil {
		return nil, fmt.Errorf("h3: authority %q: %w", authority, err)
	}
	raddr, err := net.ResolveUDPAddr("udp", authority)
	if err != nil {
		return nil, err
	}
	tlsConf := &tls.Config{}
	if d.TLSConfig != nil {
		tlsConf = d.TLSConfig.Clone()
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = strings.Trim(host, "[]")
	}
	var cfg session.Config
	if d.Config != nil {
		cfg = *d.Config
	}
	switch {
	case d.NoFallback:
		cfg.PlainALPNs = nil
	case len(cfg.PlainALPNs) == 0:
		cfg.PlainALPNs = []string{NextProtoH3}
	}
	locals := d.LocalAddrs
	if len(locals) == 0 {
		locals = []string{""}
	}
	event := func(e PathEvent) {
		if d.OnPath != nil {
			e.Authority = authority
			d.OnPath(e)
		}
	}
	var s *session.Session
	for i, la := range locals {
		pc, err := listenLocal(la)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			event(PathEvent{Index: i + 1, Local: la, Mode: session.ALPN, Err: err})
			continue
		}
		if i == 0 {
			sess, plain, err := session.DialAny(ctx, pc, raddr, tlsConf, &cfg, session.PathOptions{})
			if err != nil {
				pc.Close()
				return nil, err
			}
			if plain != nil {
				d.plain(plain, la, locals[1:], event)
				return FromQUIC(plain), nil
			}
			s = sess
			event(PathEvent{Index: 1, Local: la, Mode: session.ALPN, Path: s.Paths()[0]})
			continue
		}
		id, err := s.AddPath(ctx, pc, raddr, session.PathOptions{})
		if err != nil {
			err = fmt.Errorf("join: %w", err)
		}
		event(PathEvent{Index: i + 1, Local: la, Mode: session.ALPN, Path: id, Err: err})
	}
	if ctx.Err() != nil {
		s.Close()
		return nil, ctx.Err()
	}
	if d.OnSession != nil {
		d.OnSession(s)
	}
	return FromSession(s), nil
}

// plain reports the paths of a plain connection made from first, and
// keeps the sockets of the others as spares it migrates to when its
// current path fails (session.Migrate).
func (d *Dialer) plain(c *quic.Conn, first string, others []string, event func(PathEvent)) {
	mode := c.ConnectionState().TLS.NegotiatedProtocol
	event(PathEvent{Index: 1, Local: first, Mode: mode})
	var spares []net.PacketConn
	for j, la := range others {
		pc, err := listenLocal(la)
		if err == nil {
			spares = append(spares, pc)
			err = errors.New("the server speaks plain HTTP/3: a spare the connection migrates to if its path fails")
		}
		event(PathEvent{Index: j + 2, Local: la, Mode: mode, Err: err})
	}
	if len(spares) > 0 {
		session.Migrate(c, spares, nil)
	}
}

// listenLocal opens a path's UDP socket on la ("" for any address).
func listenLocal(la string) (*net.UDPConn, error) {
	if la == "" {
		return net.ListenUDP("udp", nil)
	}
	if _, _, err := net.SplitHostPort(la); err != nil {
		la = net.JoinHostPort(la, "0")
	}
	laddr, err := net.ResolveUDPAddr("udp", la)
	if err != nil {
		return nil, fmt.Errorf("h3: local address %q: %w", la, err)
	}
	return net.ListenUDP("udp", laddr)
}
