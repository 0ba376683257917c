package h3

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// The fallback costs no round trip: against quic-go's http3.Server over an
// emulated path of 50 ms RTT, in virtual time, this package's Transport on
// session.DialAny gets its first response byte as soon as quic-go's own
// http3.Transport does, each after one handshake. RFC 9000 §7: "the
// cryptographic handshake ... [is] combined with the transport handshake
// to minimize latency"; a plain server's answer to the session's ALPN
// offer is that handshake, not another.
func TestFallbackRoundTripsMatchQuicGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const oneWay = 25 * time.Millisecond
		link := emu.LinkConfig{RateBps: 100e6, Delay: oneWay}
		topo, err := emu.NewTopology(1, emu.PathSpec{Up: link, Down: link}, emu.PathSpec{Up: link, Down: link})
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		p, err := certs.SelfSigned("localhost")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := quic.ListenEarly(topo.Server, http3.ConfigureTLSConfig(p.Server), quicConf)
		if err != nil {
			t.Fatal(err)
		}
		cl := &countingListener{EarlyListener: ln}
		srv := &http3.Server{Handler: newTestHandler()}
		go srv.ServeListener(cl)
		defer srv.Close()

		// firstByte is the time from the request to its first body byte.
		firstByte := func(c *http.Client) (time.Duration, *http.Response) {
			start := time.Now()
			resp, err := c.Get("https://localhost/big?n=100000")
			if err != nil {
				t.Fatal(err)
			}
			var b [1]byte
			if _, err := io.ReadFull(resp.Body, b[:]); err != nil {
				t.Fatal(err)
			}
			d := time.Since(start)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return d, resp
		}

		ours := &Transport{Dial: func(ctx context.Context, _ string) (Conn, error) {
			s, plain, err := session.DialAny(ctx, topo.Clients[0], topo.Server.LocalAddr(), p.Client,
				&session.Config{PlainALPNs: []string{NextProtoH3}}, session.PathOptions{})
			if err != nil {
				return nil, err
			}
			if s != nil {
				s.Close()
				t.Fatal("a session with quic-go's http3.Server")
			}
			return FromQUIC(plain), nil
		}}
		oursTTFB, resp := firstByte(&http.Client{Transport: ours})
		if resp.TLS.NegotiatedProtocol != NextProtoH3 {
			t.Fatalf("mode %q, want h3", resp.TLS.NegotiatedProtocol)
		}
		if n := cl.n.Load(); n != 1 {
			t.Fatalf("%d handshakes for the fallback, want 1", n)
		}
		ours.Close()

		qtr := &http3.Transport{TLSClientConfig: p.Client, QUICConfig: quicConf,
			Dial: func(ctx context.Context, _ string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
				tr := &quic.Transport{Conn: topo.Clients[1]}
				return tr.DialEarly(ctx, topo.Server.LocalAddr(), tc, qc)
			}}
		quicGoTTFB, _ := firstByte(&http.Client{Transport: qtr})
		qtr.Close()
		if n := cl.n.Load(); n != 2 {
			t.Fatalf("%d handshakes in all, want 2 (one each)", n)
		}
		rtt := 2 * oneWay
		t.Logf("first byte after %v (fallback) and %v (quic-go's http3.Transport); RTT %v", oursTTFB, quicGoTTFB, rtt)
		// One round trip for the handshake, one for the request.
		if oursTTFB > quicGoTTFB+rtt/2 || oursTTFB >= 5*rtt/2 {
			t.Fatalf("the fallback's first byte after %v, quic-go's after %v: an extra round trip (RTT %v)", oursTTFB, quicGoTTFB, rtt)
		}
	})
}
