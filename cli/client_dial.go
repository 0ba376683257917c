package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// connectAny dials a session to remote over conns[0] within timeout,
// its first handshake also offering plain HTTP/3 (session.DialAny with
// PlainALPNs {h3.NextProtoH3}): against a server
// that speaks only plain HTTP/3 it returns that connection (s nil), made
// by the same handshake. The session takes conns[0] over but never
// closes it (close it after the session has ended); a plain connection
// closes it when it ends. The remaining sockets are joined by
// pathmgr.JoinPaths.
func connectAny(ctx context.Context, conns []net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *session.Config, timeout time.Duration) (s *session.Session, plain *quic.Conn, err error) {
	if len(conns) == 0 {
		return nil, nil, errors.New("no path")
	}
	var c session.Config
	if cfg != nil {
		c = *cfg
	}
	c.PlainALPNs = []string{h3.NextProtoH3}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	s, plain, err = session.DialAny(dctx, conns[0], remote, tlsConf, &c, session.PathOptions{})
	timedOut := dctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil && timedOut {
		err = fmt.Errorf("no answer from %v within %v: %w", remote, timeout, err)
	}
	return s, plain, err
}
