//go:build !http3

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
)

// The single-path baseline in the default build: HTTP/1.1, one request
// connection per QUIC stream, over one plain quic-go connection (no
// multipath layer). Build with -tags http3 for HTTP/3 instead (single_h3.go;
// it needs the go.sum entries of github.com/quic-go/qpack).
const (
	SinglePathALPN   = "mpqsched-h1" // TLS application protocol
	SinglePathScheme = "http"        // URL scheme of requests to it
	SinglePathProto  = "HTTP/1.1 over one plain QUIC connection"
)

// quicConn is a quic-go stream seen as a net.Conn.
type quicConn struct {
	*quic.Stream
	c    *quic.Conn
	once sync.Once
}

func (q *quicConn) LocalAddr() net.Addr  { return q.c.LocalAddr() }
func (q *quicConn) RemoteAddr() net.Addr { return q.c.RemoteAddr() }
func (q *quicConn) Close() error {
	q.once.Do(func() {
		q.Stream.CancelRead(0)
		q.Stream.Close()
	})
	return nil
}

// SinglePathServer serves an http.Handler over plain single-path quic-go
// (SinglePathALPN), the baseline that `mpquic-client compare` sets against
// the multipath session.
type SinglePathServer struct {
	tr   *quic.Transport
	ln   *quic.Listener
	hl   *connListener
	srv  *http.Server
	wg   sync.WaitGroup
	ctx  context.Context
	stop context.CancelFunc
}

// ServeSinglePath starts serving h on pc (which the caller closes after
// Close).
func ServeSinglePath(pc net.PacketConn, tlsConf *tls.Config, h http.Handler) (*SinglePathServer, error) {
	tc := tlsConf.Clone()
	tc.NextProtos = []string{SinglePathALPN}
	sp := &SinglePathServer{tr: &quic.Transport{Conn: pc}, hl: newConnListener()}
	var err error
	if sp.ln, err = sp.tr.Listen(tc, &quic.Config{MaxIdleTimeout: 30 * time.Second}); err != nil {
		sp.tr.Close()
		return nil, err
	}
	sp.ctx, sp.stop = context.WithCancel(context.Background())
	sp.srv = &http.Server{Handler: h, ReadHeaderTimeout: requestTimeout}
	sp.wg.Add(2)
	go func() { defer sp.wg.Done(); sp.srv.Serve(sp.hl) }()
	go func() { defer sp.wg.Done(); sp.acceptLoop() }()
	return sp, nil
}

// Addr is the UDP address served.
func (sp *SinglePathServer) Addr() net.Addr { return sp.ln.Addr() }

func (sp *SinglePathServer) acceptLoop() {
	for {
		c, err := sp.ln.Accept(sp.ctx)
		if err != nil {
			return
		}
		sp.wg.Add(1)
		go func() {
			defer sp.wg.Done()
			defer c.CloseWithError(0, "")
			for {
				st, err := c.AcceptStream(sp.ctx)
				if err != nil {
					return
				}
				qc := &quicConn{Stream: st, c: c}
				if !sp.hl.push(qc) {
					qc.Close()
					return
				}
			}
		}()
	}
}

// Close stops serving and waits for the server's goroutines.
func (sp *SinglePathServer) Close() error {
	sp.stop()
	sp.hl.Close()
	sp.srv.Close()
	sp.ln.Close()
	err := sp.tr.Close()
	sp.wg.Wait()
	return err
}

// SinglePathClient is one plain quic-go connection carrying HTTP/1.1.
type SinglePathClient struct {
	tr   *quic.Transport
	conn *quic.Conn
	// HTTP is an http.Client whose connections are streams of the QUIC
	// connection.
	HTTP *http.Client
}

// DialSinglePath connects over pc to remote within timeout.
func DialSinglePath(ctx context.Context, pc net.PacketConn, remote net.Addr, tlsConf *tls.Config, timeout time.Duration) (*SinglePathClient, error) {
	tc := tlsConf.Clone()
	tc.NextProtos = []string{SinglePathALPN}
	tr := &quic.Transport{Conn: pc}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := tr.Dial(dctx, remote, tc, &quic.Config{MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: 5 * time.Second})
	if err != nil {
		tr.Close()
		return nil, err
	}
	sc := &SinglePathClient{tr: tr, conn: c}
	sc.HTTP = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			st, err := c.OpenStreamSync(ctx)
			if err != nil {
				return nil, err
			}
			return &quicConn{Stream: st, c: c}, nil
		},
		DisableCompression: true,
	}}
	return sc, nil
}

// Stats returns the QUIC connection's counters.
func (sc *SinglePathClient) Stats() quic.ConnectionStats { return sc.conn.ConnectionStats() }

// Close closes the connection (the caller closes pc).
func (sc *SinglePathClient) Close() error {
	sc.HTTP.CloseIdleConnections()
	err := sc.conn.CloseWithError(0, "")
	return errors.Join(err, sc.tr.Close())
}
