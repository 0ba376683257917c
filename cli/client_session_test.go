package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/pathmgr"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// The session-level download tests of pkg/mpfile, which ran over its
// retired FILE protocol, here over HTTP/3 (mpquic-server's handler on a
// session listener, h3Get on the client). Its TestWrongCertificate and
// TestUnreachable are client_test.go's, through the command.

// loopUDP is a socket on 127.0.0.1.
func loopUDP(t testing.TB) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serveH3 serves dir on ln over HTTP/3 as mpquic-server does, until the
// returned function is called.
func serveH3(ln *session.Listener, dir string) (stop func()) {
	hs := newH3Server(fileHandler(&mpfile.Files{Dir: dir}, nil), serverLimits{}, nil)
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(&h3sessionListener{ln: ln}) }()
	return func() { hs.Close(); <-done }
}

// startH3Loop serves dir on loopback until the test ends; it returns the
// address and the certificate pair.
func startH3Loop(t *testing.T, dir string) (*net.UDPAddr, *certs.Pair) {
	t.Helper()
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	pc := loopUDP(t)
	ln, err := session.Listen(pc, pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := serveH3(ln, dir)
	t.Cleanup(func() { stop(); pc.Close() })
	return pc.LocalAddr().(*net.UDPAddr), pair
}

// connect dials a session to remote over conns[0] within timeout; the
// remaining sockets are joined by pathmgr.JoinPaths. The session takes the sockets
// over but never closes them: close conns after the session has ended.
func connect(ctx context.Context, conns []net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *session.Config, timeout time.Duration) (*session.Session, error) {
	if len(conns) == 0 {
		return nil, errors.New("no path")
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	s, err := session.Dial(dctx, conns[0], remote, tlsConf, cfg)
	timedOut := dctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil {
		if timedOut {
			err = fmt.Errorf("no answer from %v within %v: %w", remote, timeout, err)
		}
		return nil, err
	}
	return s, nil
}

// dialLoop connects a session of n paths to ua.
func dialLoop(t *testing.T, ua *net.UDPAddr, n int, tlsConf *tls.Config) (*session.Session, error) {
	t.Helper()
	var pcs []net.PacketConn
	for range n {
		c := loopUDP(t)
		t.Cleanup(func() { c.Close() })
		pcs = append(pcs, c)
	}
	ctx := context.Background()
	s, err := connect(ctx, pcs, ua, tlsConf, nil, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if got := pathmgr.JoinPaths(ctx, s, pcs[1:], ua, nil, 5*time.Second, t.Logf); got != n-1 {
		t.Errorf("%d of %d extra paths joined", got, n-1)
	}
	return s, nil
}

// A download over two paths: verified, with progress, the server's
// counters, and its metrics.Result.
func TestGetTwoPaths(t *testing.T) {
	dir := t.TempDir()
	writeRandom(t, filepath.Join(dir, "f"), 3<<20)
	want, _ := os.ReadFile(filepath.Join(dir, "f"))
	ua, pair := startH3Loop(t, dir)
	s, err := dialLoop(t, ua, 2, pair.Client)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	var calls int
	d, err := h3Get(context.Background(), s, target{authority: ua.String(), path: "/f"}, &got, func(n, size int64) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) || !d.SHA256OK || d.Size != int64(len(want)) {
		t.Fatalf("got %d bytes (ok %v, size %d), want %d", got.Len(), d.SHA256OK, d.Size, len(want))
	}
	if calls == 0 {
		t.Error("progress never called")
	}
	if d.Server == nil || d.Server.Scheduler != "minrtt" || d.Server.SentBytes < uint64(len(want)) {
		t.Errorf("server stats %+v", d.Server)
	}
	r := mpfile.NewResult(mpfile.Meta{Scheduler: "minrtt", Scenario: "loop", CapacityBps: 1e9}, d, time.Second, s.Stats(), s.Series(), nil)
	if !r.SHA256OK || r.Bytes != uint64(len(want)) || r.GoodputBps != float64(len(want))*8 || r.SentBytes != d.Server.SentBytes {
		t.Errorf("result %+v", r)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// The single-path baseline serves the same handler over plain quic-go.
func TestSinglePath(t *testing.T) {
	dir := t.TempDir()
	writeRandom(t, filepath.Join(dir, "f"), 1<<20)
	want, _ := os.ReadFile(filepath.Join(dir, "f"))
	pair, _ := certs.SelfSigned("localhost")
	spc := loopUDP(t)
	defer spc.Close()
	sp, err := serveSinglePath(spc, pair.Server, fileHandler(&mpfile.Files{Dir: dir}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	pc := loopUDP(t)
	defer pc.Close()
	sc, err := dialSinglePath(context.Background(), pc, sp.Addr(), pair.Client, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	h := sha256.New()
	d, err := mpfile.HTTPGet(context.Background(), sc.HTTP, singlePathScheme+"://single/f", h, nil)
	if err != nil || !d.SHA256OK || [32]byte(h.Sum(nil)) != sha256.Sum256(want) {
		t.Fatalf("%v %+v", err, d)
	}
}

// In the emulator: path 2 goes down (Link.SetDown) a third of the way into
// a download; it completes over path 1, verified.
func TestPathDownInProcess(t *testing.T) {
	dir := t.TempDir()
	const size = 4 << 20
	writeRandom(t, filepath.Join(dir, "f"), size)
	want, _ := os.ReadFile(filepath.Join(dir, "f"))
	synctest.Test(t, func(t *testing.T) {
		l := emu.LinkConfig{RateBps: 20e6, Delay: 10 * time.Millisecond}
		topo, err := emu.NewTopology(1, emu.PathSpec{Up: l, Down: l}, emu.PathSpec{Up: l, Down: l})
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		pair, _ := certs.SelfSigned("localhost")
		ln, err := session.Listen(topo.Server, pair.Server, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer serveH3(ln, dir)()
		ctx := context.Background()
		remote := net.UDPAddrFromAddrPort(topo.ServerAddr)
		s, err := connect(ctx, []net.PacketConn{topo.Clients[0]}, remote, pair.Client, nil, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer s.CloseWithError(0, "")
		if n := pathmgr.JoinPaths(ctx, s, []net.PacketConn{topo.Clients[1]}, remote, nil, 5*time.Second, t.Logf); n != 1 {
			t.Fatalf("%d paths joined", n)
		}
		var got bytes.Buffer
		downAt := int64(-1)
		d, err := h3Get(ctx, s, target{authority: "localhost:443", path: "/f"}, &got, func(n, _ int64) {
			if downAt < 0 && n >= size/3 {
				downAt = n
				topo.Links[1].SetDown(true)
			}
		})
		if err != nil {
			t.Fatalf("after path 2 went down at %d bytes: %v", downAt, err)
		}
		if !d.SHA256OK || !bytes.Equal(got.Bytes(), want) {
			t.Fatal("data differs")
		}
		st := d.Server
		if st == nil {
			t.Fatal("no server counters")
		}
		t.Logf("path 2 down at %d B; server per path %v B, reinjected %d, path failures %d", downAt, st.PerPathBytes, st.ReinjectedSegs, st.PathFailures)
		if len(st.PerPathBytes) < 2 || st.PerPathBytes[1] == 0 {
			t.Errorf("path 2 carried nothing before it went down: %v", st.PerPathBytes)
		}
		s.Close()
	})
}
