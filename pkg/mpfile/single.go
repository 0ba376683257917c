package mpfile

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlog"
)

// The single-path baseline: plain HTTP/3 (quic-go's
// http3 package) over one path.
const (
	SinglePathALPN   = http3.NextProtoH3 // TLS application protocol
	SinglePathScheme = "https"           // URL scheme of requests to it
	SinglePathProto  = "HTTP/3 over one plain QUIC connection"
)

// SinglePathServer serves an http.Handler over HTTP/3 on one UDP socket.
type SinglePathServer struct {
	srv  *http3.Server
	pc   net.PacketConn
	done chan struct{}
}

// ServeSinglePath starts serving h on pc (which the caller closes after
// Close). With the environment variable QLOGDIR set, it writes one qlog
// file per connection there, as quic-go's own tools do
// (qlog.DefaultConnectionTracer; unset, no tracer runs).
func ServeSinglePath(pc net.PacketConn, tlsConf *tls.Config, h http.Handler) (*SinglePathServer, error) {
	sp := &SinglePathServer{
		srv: &http3.Server{Handler: h, TLSConfig: http3.ConfigureTLSConfig(tlsConf.Clone()),
			QUICConfig: &quic.Config{MaxIdleTimeout: 30 * time.Second, Tracer: qlog.DefaultConnectionTracer}},
		pc:   pc,
		done: make(chan struct{}),
	}
	go func() { defer close(sp.done); sp.srv.Serve(pc) }()
	return sp, nil
}

// Addr is the UDP address served.
func (sp *SinglePathServer) Addr() net.Addr { return sp.pc.LocalAddr() }

// Close stops serving and waits for the server.
func (sp *SinglePathServer) Close() error {
	err := sp.srv.Close()
	<-sp.done
	return err
}

// SinglePathClient is an HTTP/3 client bound to one local socket.
type SinglePathClient struct {
	tr   *quic.Transport
	h3   *http3.Transport
	mu   sync.Mutex
	conn *quic.Conn
	// HTTP is an http.Client whose requests go over HTTP/3 on pc.
	HTTP *http.Client
}

// DialSinglePath prepares an HTTP/3 client over pc to remote; connections
// are dialed within timeout.
func DialSinglePath(ctx context.Context, pc net.PacketConn, remote net.Addr, tlsConf *tls.Config, timeout time.Duration) (*SinglePathClient, error) {
	sc := &SinglePathClient{tr: &quic.Transport{Conn: pc}}
	sc.h3 = &http3.Transport{
		TLSClientConfig: tlsConf.Clone(),
		QUICConfig:      &quic.Config{MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: 5 * time.Second},
		Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
			dctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			c, err := sc.tr.Dial(dctx, remote, tlsCfg, cfg)
			if err == nil {
				sc.mu.Lock()
				sc.conn = c
				sc.mu.Unlock()
			}
			return c, err
		},
	}
	sc.HTTP = &http.Client{Transport: sc.h3}
	return sc, nil
}

// Stats returns the QUIC connection's counters (zero before the first
// request).
func (sc *SinglePathClient) Stats() quic.ConnectionStats {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.conn == nil {
		return quic.ConnectionStats{}
	}
	return sc.conn.ConnectionStats()
}

// Close closes the connection (the caller closes pc).
func (sc *SinglePathClient) Close() error {
	return errors.Join(sc.h3.Close(), sc.tr.Close())
}
