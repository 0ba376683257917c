package cli

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

// The single-path baseline of mpquic-server -h3-addr and mpquic-client
// compare: plain HTTP/3 over one path with quic-go's own http3 package,
// kept to measure that implementation rather than pkg/h3.
const (
	singlePathALPN   = http3.NextProtoH3 // TLS application protocol
	singlePathScheme = "https"           // URL scheme of requests to it
	singlePathProto  = "HTTP/3 over one plain QUIC connection"
)

// singlePathServer serves an http.Handler over HTTP/3 on one UDP socket.
type singlePathServer struct {
	srv  *http3.Server
	pc   net.PacketConn
	done chan struct{}
}

// serveSinglePath starts serving h on pc (which the caller closes after
// Close). With the environment variable QLOGDIR set, it writes one qlog
// file per connection there, as quic-go's own tools do
// (qlog.DefaultConnectionTracer; unset, no tracer runs).
func serveSinglePath(pc net.PacketConn, tlsConf *tls.Config, h http.Handler) (*singlePathServer, error) {
	sp := &singlePathServer{
		srv: &http3.Server{Handler: h, TLSConfig: http3.ConfigureTLSConfig(tlsConf.Clone()),
			QUICConfig: &quic.Config{MaxIdleTimeout: 30 * time.Second, Tracer: qlog.DefaultConnectionTracer}},
		pc:   pc,
		done: make(chan struct{}),
	}
	go func() { defer close(sp.done); sp.srv.Serve(pc) }()
	return sp, nil
}

// Addr is the UDP address served.
func (sp *singlePathServer) Addr() net.Addr { return sp.pc.LocalAddr() }

// Close stops serving and waits for the server.
func (sp *singlePathServer) Close() error {
	err := sp.srv.Close()
	<-sp.done
	return err
}

// singlePathClient is an HTTP/3 client bound to one local socket.
type singlePathClient struct {
	tr   *quic.Transport
	h3   *http3.Transport
	mu   sync.Mutex
	conn *quic.Conn
	// HTTP is an http.Client whose requests go over HTTP/3 on pc.
	HTTP *http.Client
}

// dialSinglePath prepares an HTTP/3 client over pc to remote; connections
// are dialed within timeout.
func dialSinglePath(ctx context.Context, pc net.PacketConn, remote net.Addr, tlsConf *tls.Config, timeout time.Duration) (*singlePathClient, error) {
	sc := &singlePathClient{tr: &quic.Transport{Conn: pc}}
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
func (sc *singlePathClient) Stats() quic.ConnectionStats {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.conn == nil {
		return quic.ConnectionStats{}
	}
	return sc.conn.ConnectionStats()
}

// Close closes the connection (the caller closes pc).
func (sc *singlePathClient) Close() error {
	return errors.Join(sc.h3.Close(), sc.tr.Close())
}
