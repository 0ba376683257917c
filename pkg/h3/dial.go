package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// SessionDialer returns a Transport.Dial that opens a multipath session to
// the authority: with no local address, session.DialAddr (one path from an
// ephemeral socket); otherwise one path per local address ("192.0.2.7" or
// "192.0.2.7:0"; the port defaults to 0), the first dialled and the others
// joined with AddPath. A path that fails to join is left out (the session
// then has fewer paths) unless it is the first. tlsConf is the session's
// (its NextProtos are set by the session); cfg may be nil. The returned
// function is safe for concurrent use; each session owns its sockets.
func SessionDialer(tlsConf *tls.Config, cfg *session.Config, localAddrs ...string) func(ctx context.Context, authority string) (Conn, error) {
	return func(ctx context.Context, authority string) (Conn, error) {
		if len(localAddrs) == 0 {
			s, err := session.DialAddr(ctx, authority, tlsConf, cfg)
			if err != nil {
				return nil, err
			}
			return FromSession(s), nil
		}
		raddr, err := net.ResolveUDPAddr("udp", authority)
		if err != nil {
			return nil, err
		}
		var s *session.Session
		var joinErrs []error
		for i, la := range localAddrs {
			if _, _, err := net.SplitHostPort(la); err != nil {
				la = net.JoinHostPort(la, "0")
			}
			laddr, err := net.ResolveUDPAddr("udp", la)
			if err != nil {
				if s != nil {
					s.Close()
				}
				return nil, fmt.Errorf("h3: local address %q: %w", la, err)
			}
			pc, err := net.ListenUDP("udp", laddr)
			if err != nil {
				if i == 0 {
					return nil, err
				}
				joinErrs = append(joinErrs, err)
				continue
			}
			if i == 0 {
				if s, err = session.Dial(ctx, pc, raddr, tlsConf, cfg); err != nil {
					pc.Close()
					return nil, err
				}
				continue
			}
			if _, err := s.AddPath(ctx, pc, raddr, session.PathOptions{}); err != nil {
				joinErrs = append(joinErrs, fmt.Errorf("path from %s: %w", la, err))
			}
		}
		if ctx.Err() != nil {
			s.Close()
			return nil, errors.Join(append(joinErrs, ctx.Err())...)
		}
		return FromSession(s), nil
	}
}
