package h3

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/mpqsched/mpqsched/pkg/certs"
)

// Interop over plain quic-go connections on loopback UDP: this package's
// client against quic-go's http3.Server, and quic-go's http3.Transport
// against this package's server (issue 21, item 5).

func tlsPair(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	p, err := certs.SelfSigned("example.test")
	if err != nil {
		t.Fatal(err)
	}
	server, client = p.Server.Clone(), p.Client.Clone()
	server.NextProtos = []string{http3.NextProtoH3}
	client.NextProtos = []string{http3.NextProtoH3}
	return server, client
}

var quicConf = &quic.Config{MaxIdleTimeout: 30 * time.Second, MaxIncomingStreams: 200}

func udpListen(t testing.TB) net.PacketConn {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// ourServerOverQUIC starts this package's Server on a quic-go listener.
func ourServerOverQUIC(t testing.TB, h http.Handler, tlsConf *tls.Config) (*Server, string) {
	pc := udpListen(t)
	ln, err := quic.Listen(pc, tlsConf, quicConf)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Handler: h}
	go srv.Serve(QUICListener(ln))
	t.Cleanup(func() { srv.Close(); ln.Close() })
	return srv, "https://" + pc.LocalAddr().String()
}

// ourClientOverQUIC is this package's Transport dialling quic-go.
func ourClientOverQUIC(t testing.TB, tlsConf *tls.Config) *http.Client {
	tr := &Transport{Dial: func(ctx context.Context, authority string) (Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c, err := quic.DialAddr(ctx, authority, tlsConf, quicConf)
		if err != nil {
			return nil, err
		}
		return FromQUIC(c), nil
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

func TestInteropOurClientQuicGoServer(t *testing.T) {
	srvTLS, cliTLS := tlsPair(t)
	h := newTestHandler()
	pc := udpListen(t)
	srv := &http3.Server{Handler: h, TLSConfig: srvTLS, QUICConfig: quicConf}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close() })
	e := &testEnv{client: ourClientOverQUIC(t, cliTLS), base: "https://" + pc.LocalAddr().String(),
		handler: h, shutdown: srv.Shutdown, ourClient: true}
	for _, tc := range matrix {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}
}

func TestInteropQuicGoClientOurServer(t *testing.T) {
	srvTLS, cliTLS := tlsPair(t)
	h := newTestHandler()
	srv, base := ourServerOverQUIC(t, h, srvTLS)
	tr := &http3.Transport{TLSClientConfig: cliTLS, QUICConfig: quicConf}
	t.Cleanup(func() { tr.Close() })
	e := &testEnv{client: &http.Client{Transport: tr, Timeout: 60 * time.Second}, base: base,
		handler: h, shutdown: srv.Shutdown}
	for _, tc := range matrix {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}
}
