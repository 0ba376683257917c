package emu

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"
)

// testTLS returns a server and a client TLS config around a self-signed
// certificate valid from 1990 to 2100 (the synctest clock starts in 2000).
func testTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:     time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames:     []string{"emu.test"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"emu-test"}}
	client = &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"emu-test"}, ServerName: "emu.test"}
	return server, client
}

// Real quic-go moves 5 MB over a 10 Mbit/s, 20 ms link at >= 85% of the
// rate, in virtual time.
func TestQUICTransfer(t *testing.T) {
	const size, rate = 5 << 20, 10e6
	synctest.Test(t, func(t *testing.T) {
		link := LinkConfig{RateBps: rate, Delay: 20 * time.Millisecond}
		topo, err := NewTopology(1, PathSpec{Up: link, Down: link})
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		srvTLS, cliTLS := testTLS(t)
		srvTr := &quic.Transport{Conn: topo.Server}
		defer srvTr.Close()
		cliTr := &quic.Transport{Conn: topo.Clients[0]}
		defer cliTr.Close()
		ln, err := srvTr.Listen(srvTLS, &quic.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()

		type result struct {
			n    int64
			done time.Time
			err  error
		}
		got := make(chan result, 1)
		go func() {
			ctx := context.Background()
			conn, err := ln.Accept(ctx)
			if err != nil {
				got <- result{err: err}
				return
			}
			defer conn.CloseWithError(0, "")
			str, err := conn.AcceptStream(ctx)
			if err != nil {
				got <- result{err: err}
				return
			}
			n, err := io.Copy(io.Discard, str)
			got <- result{n, time.Now(), err}
			<-conn.Context().Done() // the client closes
		}()

		ctx := context.Background()
		conn, err := cliTr.Dial(ctx, net.UDPAddrFromAddrPort(topo.ServerAddr), cliTLS, &quic.Config{})
		if err != nil {
			t.Fatal(err)
		}
		str, err := conn.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := str.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		str.Close()
		r := <-got
		conn.CloseWithError(0, "")
		if r.err != nil || r.n != size {
			t.Fatalf("server read %d bytes, err %v; want %d", r.n, r.err, size)
		}
		el := r.done.Sub(start)
		goodput := float64(size*8) / el.Seconds()
		t.Logf("5 MB in %v of virtual time: goodput %.2f Mbit/s", el, goodput/1e6)
		within(t, "goodput (bit/s)", goodput, 0.85*rate, rate)
		up, down := topo.Links[0].Stats()
		t.Logf("up %+v", up)
		t.Logf("down %+v", down)
	})
}
