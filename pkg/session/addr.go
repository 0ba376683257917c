package session

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/quic-go/quic-go"
)

// DialAddr is Dial to the server at addr ("host:port"), over a UDP socket
// of its own on an unspecified local address and an ephemeral port. The
// session owns the socket: it is closed when the session ends, or when
// DialAddr fails. More paths join with AddPath. A tlsConf without a
// ServerName checks the certificate against addr's host, as quic-go's
// DialAddr and net/http do (not against the address it resolves to).
func DialAddr(ctx context.Context, addr string, tlsConf *tls.Config, cfg *Config) (*Session, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && tlsConf != nil && tlsConf.ServerName == "" {
		tlsConf = tlsConf.Clone()
		tlsConf.ServerName = host
	}
	pc, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	s, err := Dial(ctx, pc, raddr, tlsConf, cfg)
	if err != nil {
		pc.Close() // Dial may have closed it already; a second Close is harmless
		return nil, err
	}
	return s, nil
}

// ListenAddr is Listen on a UDP socket of its own bound to addr
// ("host:port"; port 0 picks one, see Listener.Addr). The Listener owns the
// socket and closes it in Close, or when ListenAddr fails.
func ListenAddr(addr string, tlsConf *tls.Config, cfg *Config) (*Listener, error) {
	laddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, err
	}
	l, err := Listen(pc, tlsConf, cfg)
	if err != nil {
		pc.Close()
		return nil, err
	}
	return l, nil
}

// ConnectionState is the QUIC and TLS state of the session's first path:
// the one Dial created or that brought the session to Accept. That path's
// TLS handshake authenticated the peer (PeerCertificates, the negotiated
// ALPN, the ServerName) and keyed every later join, so its state holds for
// the whole session, even after the path itself is gone; later paths run
// their own handshakes with the same configuration. Safe for concurrent
// use.
func (s *Session) ConnectionState() quic.ConnectionState {
	s.mu.Lock()
	c := s.firstConn
	s.mu.Unlock()
	if c == nil {
		return quic.ConnectionState{}
	}
	return c.ConnectionState()
}
