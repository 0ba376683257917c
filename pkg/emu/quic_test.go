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

// quicTransfer sends size bytes on one quic-go stream from the client of a
// one-path topology to its server, inside the current synctest bubble, and
// returns the goodput (bits/s, from the first Write to the server's last
// read) and the link's counters.
func quicTransfer(t *testing.T, size int, path PathSpec) (goodput float64, up, down LinkStats) {
	t.Helper()
	topo, err := NewTopology(1, path)
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
	defer conn.CloseWithError(0, "")
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
	if r.err != nil || r.n != int64(size) {
		t.Fatalf("server read %d bytes, err %v; want %d", r.n, r.err, size)
	}
	el := r.done.Sub(start)
	goodput = float64(size*8) / el.Seconds()
	up, down = topo.Links[0].Stats()
	t.Logf("%d bytes in %v of virtual time: goodput %.2f Mbit/s", size, el, goodput/1e6)
	t.Logf("up   %+v", up)
	t.Logf("down %+v", down)
	return goodput, up, down
}

// Real quic-go moves 5 MB over a 10 Mbit/s, 20 ms link at >= 85% of the
// rate, in virtual time.
func TestQUICTransfer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond}
		goodput, _, _ := quicTransfer(t, 5<<20, PathSpec{Up: link, Down: link})
		within(t, "goodput (bit/s)", goodput, 0.85*10e6, 10e6)
	})
}

// quic-go survives loss, jitter and a 2 s outage on the emulator: the
// transfer completes and the link counters show each impairment at work.
func TestQUICTransferImpaired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.005,
			Outages: []Window{{2 * time.Second, 4 * time.Second}}}
		down := LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond,
			Outages: []Window{{2 * time.Second, 4 * time.Second}}}
		goodput, ab, _ := quicTransfer(t, 3<<20, PathSpec{Up: up, Down: down})
		if ab.DroppedLoss == 0 || ab.DroppedOutage == 0 {
			t.Errorf("up link dropped %d by loss and %d by outage, want both > 0", ab.DroppedLoss, ab.DroppedOutage)
		}
		within(t, "goodput (bit/s)", goodput, 1e6, 10e6)
	})
}
