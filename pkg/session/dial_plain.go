package session

// The client's side of one port for sessions and plain QUIC: DialAny
// offers ALPN and then Config.PlainALPNs in the first path's handshake, and
// when the server picks a plain protocol (a server that does not speak
// sessions), the QUIC connection that handshake made is the result: no
// second handshake, no extra round trip. RFC 10069 falls back the same way
// in spirit: "If either of the endpoints does not advertise the
// initial_max_path_id transport parameter, then the endpoints MUST NOT
// use any frame or mechanism defined in this document" (§2), and the
// connection goes on as plain RFC 9000 QUIC.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"github.com/quic-go/quic-go"
)

// errPlainChosen ends a first path's dial whose server chose a plain
// protocol.
var errPlainChosen = errors.New("session: server chose a plain protocol")

// plainOfferKey is the context key of a first path's *plainOffer.
type plainOfferKey struct{}

// plainOffer is what DialAny offers besides ALPN, and what it got.
type plainOffer struct {
	protos []string        // Config.PlainALPNs
	conn   *quic.Conn      // the connection, if the server chose one of protos
	tr     *quic.Transport // its transport, which the connection owns
}

// tls is the first path's TLS configuration: c, offering protos after
// ALPN (a nil offer: c).
func (o *plainOffer) tls(c *tls.Config) *tls.Config {
	if o == nil {
		return c
	}
	c = c.Clone()
	c.NextProtos = append([]string{ALPN}, o.protos...)
	return c
}

// chose reports whether the server chose a plain protocol on conn, and
// keeps conn if so.
func (o *plainOffer) chose(conn *quic.Conn) bool {
	if o == nil || conn.ConnectionState().TLS.NegotiatedProtocol == ALPN {
		return false
	}
	o.conn = conn
	return true
}

// handOver gives tr from the session to the plain connection of ctx's
// offer: the session no longer closes it.
func (s *Session) handOver(ctx context.Context, tr *quic.Transport) {
	s.mu.Lock()
	delete(s.life.owned, tr)
	s.mu.Unlock()
	if o, _ := ctx.Value(plainOfferKey{}).(*plainOffer); o != nil {
		o.tr = tr
	}
}

// DialAny is DialPath offering cfg.PlainALPNs too, after ALPN, in the
// first path's TLS handshake (the server picks; see listener_plain.go).
// If the server picks ALPN, it returns the session and plain is nil. If it
// picks one of PlainALPNs, as a plain HTTP/3 server picks "h3", it returns
// that QUIC connection instead (s is nil): the application speaks the
// protocol plain.ConnectionState().TLS.NegotiatedProtocol names on it,
// over one path, with no further handshake. The plain connection owns pc
// from then on: pc closes when it ends. With no PlainALPNs, DialAny is
// DialPath.
func DialAny(ctx context.Context, pc net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *Config, opts PathOptions) (s *Session, plain *quic.Conn, err error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if err := checkPlainALPNs(c.PlainALPNs); err != nil {
		return nil, nil, err
	}
	if len(c.PlainALPNs) == 0 {
		s, err := DialPath(ctx, pc, remote, tlsConf, cfg, opts)
		return s, nil, err
	}
	if s, err = newSession(c, true, withTickets(withALPN(tlsConf))); err != nil {
		return nil, nil, err
	}
	offer := &plainOffer{protos: c.PlainALPNs}
	p, err := s.dialPath(context.WithValue(ctx, plainOfferKey{}, offer), pc, remote, nil, opts)
	if errors.Is(err, errPlainChosen) {
		tr := offer.tr
		context.AfterFunc(offer.conn.Context(), func() { closeTransport(tr) })
		return nil, offer.conn, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := s.attach(p); err != nil {
		closeConn(p.conn, codeInternal, err.Error())
		s.disown(p.qtr)
		return nil, nil, err
	}
	s.run()
	return s, nil, nil
}
