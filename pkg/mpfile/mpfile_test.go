package mpfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// writeFile puts n pseudo-random bytes into dir/name and returns them.
func writeFile(t testing.TB, dir, name string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(n), byte(n >> 8)})
	r.Read(b)
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func udp(t testing.TB) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// loopServer serves dir on a loopback UDP socket until the test ends.
type loopServer struct {
	srv  *Server
	ln   *session.Listener
	pc   *net.UDPConn
	pair *certs.Pair
	done chan error
}

func startLoop(t testing.TB, dir string, cfg *session.Config) *loopServer {
	t.Helper()
	pair, err := certs.SelfSigned("mpfile.test")
	if err != nil {
		t.Fatal(err)
	}
	ls := &loopServer{srv: &Server{Dir: dir}, pc: udp(t), pair: pair, done: make(chan error, 1)}
	if ls.ln, err = session.Listen(ls.pc, pair.Server, cfg); err != nil {
		t.Fatal(err)
	}
	go func() { ls.done <- ls.srv.Serve(ls.ln) }()
	t.Cleanup(ls.stop)
	return ls
}

func (ls *loopServer) stop() {
	ls.srv.Close()
	<-ls.done
	ls.pc.Close()
	ls.done <- nil // later stops return at once
}

// dialLoop connects a session with n loopback paths; the sockets close at
// the end of the test.
func dialLoop(t testing.TB, ls *loopServer, n int, tlsConf *tls.Config) (*session.Session, error) {
	t.Helper()
	var pcs []net.PacketConn
	for i := 0; i < n; i++ {
		c := udp(t)
		t.Cleanup(func() { c.Close() })
		pcs = append(pcs, c)
	}
	ctx := context.Background()
	s, err := Connect(ctx, pcs, ls.ln.Addr(), tlsConf, nil, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if got := JoinPaths(ctx, s, pcs[1:], ls.ln.Addr(), nil, 5*time.Second, t.Logf); got != n-1 {
		t.Errorf("%d of %d extra paths joined", got, n-1)
	}
	return s, nil
}

func TestGetTwoPaths(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "f", 3<<20)
	ls := startLoop(t, dir, nil)
	s, err := dialLoop(t, ls, 2, ls.pair.Client)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	var calls int
	d, err := Get(context.Background(), s, "f", &got, func(n, size int64) { calls++ })
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
	r := NewResult(Meta{Scheduler: "minrtt", Scenario: "loop", CapacityBps: 1e9}, d, time.Second, s.Stats(), s.Series(), nil)
	if !r.SHA256OK || r.Bytes != uint64(len(want)) || r.GoodputBps != float64(len(want))*8 || r.SentBytes != d.Server.SentBytes {
		t.Errorf("result %+v", r)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// The server answers an error for a file it does not have; the client
// returns it, wrapping ErrServer.
func TestGetNoSuchFile(t *testing.T) {
	ls := startLoop(t, t.TempDir(), nil)
	s, err := dialLoop(t, ls, 1, ls.pair.Client)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"missing", "../etc/passwd", ".hidden"} {
		_, err := Get(context.Background(), s, name, io.Discard, nil)
		if !errors.Is(err, ErrServer) {
			t.Errorf("%q: err %v, want a server error", name, err)
		}
	}
	_, err = Get(context.Background(), s, "missing", io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "no such file: missing") {
		t.Errorf("err %v, want the server's message", err)
	}
}

// A client that pins another certificate fails the handshake with a
// verification error, quickly.
func TestWrongCertificate(t *testing.T) {
	ls := startLoop(t, t.TempDir(), nil)
	other, err := certs.SelfSigned("mpfile.test")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = dialLoop(t, ls, 1, other.Client)
	if err == nil {
		t.Fatal("connected to a server with an unpinned certificate")
	}
	if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("err %v, want a certificate verification error", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v to fail", el)
	}
	t.Logf("wrong certificate: %v after %v", err, time.Since(start).Round(time.Millisecond))
}

// Nobody listens: Connect gives up with a clear error within its timeout.
func TestUnreachable(t *testing.T) {
	dead := udp(t)
	addr := dead.LocalAddr()
	dead.Close() // the port is now closed: nothing answers
	pc := udp(t)
	defer pc.Close()
	pair, _ := certs.SelfSigned("mpfile.test")
	start := time.Now()
	_, err := Connect(context.Background(), []net.PacketConn{pc}, addr, pair.Client, nil, time.Second)
	el := time.Since(start)
	if err == nil {
		t.Fatal("connected to nobody")
	}
	if el > 3*time.Second {
		t.Errorf("took %v, want about the 1 s timeout", el)
	}
	t.Logf("unreachable: %v after %v", err, el.Round(time.Millisecond))
}

// HTTP over session streams: net/http's client and server, SHA-256 checked
// through Repr-Digest, and the stats endpoint answers for the session.
func TestHTTPOverSession(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "page.bin", 1<<20)
	ls := startLoop(t, dir, nil)
	s, err := dialLoop(t, ls, 2, ls.pair.Client)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hc := &http.Client{Transport: Transport(s)}
	defer hc.CloseIdleConnections()
	ctx := context.Background()
	for i := 0; i < 3; i++ { // keep-alive: later requests reuse the stream
		var got bytes.Buffer
		d, err := HTTPGet(ctx, hc, "http://mpquic/page.bin", &got, nil)
		if err != nil || !bytes.Equal(got.Bytes(), want) || !d.SHA256OK {
			t.Fatalf("request %d: %v, %d bytes, ok %v", i, err, got.Len(), d.SHA256OK)
		}
	}
	if _, err := HTTPGet(ctx, hc, "http://mpquic/nothing", io.Discard, nil); !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing file: %v, want a 404 server error", err)
	}
	ss, err := HTTPStats(ctx, hc, "http://mpquic")
	if err != nil || ss.SentBytes < 3<<20 {
		t.Errorf("stats %+v, %v", ss, err)
	}
}

// The single-path baseline serves the same handler over plain quic-go.
func TestSinglePath(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "f", 1<<20)
	pair, _ := certs.SelfSigned("mpfile.test")
	spc := udp(t)
	defer spc.Close()
	sp, err := ServeSinglePath(spc, pair.Server, (&Server{Dir: dir}).Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	pc := udp(t)
	defer pc.Close()
	sc, err := DialSinglePath(context.Background(), pc, sp.Addr(), pair.Client, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	h := sha256.New()
	d, err := HTTPGet(context.Background(), sc.HTTP, SinglePathScheme+"://single/f", h, nil)
	if err != nil || !d.SHA256OK || [32]byte(h.Sum(nil)) != sha256.Sum256(want) {
		t.Fatalf("%v %+v", err, d)
	}
}

// In the emulator: path 2 goes down (Link.SetDown) a third of the way into
// a download; it completes over path 1, verified.
func TestPathDownInProcess(t *testing.T) {
	dir := t.TempDir()
	const size = 4 << 20
	want := writeFile(t, dir, "f", size)
	synctest.Test(t, func(t *testing.T) {
		l := emu.LinkConfig{RateBps: 20e6, Delay: 10 * time.Millisecond}
		topo, err := emu.NewTopology(1, emu.PathSpec{Up: l, Down: l}, emu.PathSpec{Up: l, Down: l})
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		pair, _ := certs.SelfSigned("mpfile.test")
		ln, err := session.Listen(topo.Server, pair.Server, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := &Server{Dir: dir}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		defer func() { srv.Close(); <-served }()
		ctx := context.Background()
		remote := net.UDPAddrFromAddrPort(topo.ServerAddr)
		s, err := Connect(ctx, []net.PacketConn{topo.Clients[0]}, remote, pair.Client, nil, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer s.CloseWithError(0, "")
		if n := JoinPaths(ctx, s, []net.PacketConn{topo.Clients[1]}, remote, nil, 5*time.Second, t.Logf); n != 1 {
			t.Fatalf("%d paths joined", n)
		}
		var got bytes.Buffer
		downAt := int64(-1)
		d, err := Get(ctx, s, "f", &got, func(n, _ int64) {
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
		t.Logf("path 2 down at %d B; server per path %v B, reinjected %d, path failures %d", downAt, st.PerPathBytes, st.ReinjectedSegs, st.PathFailures)
		if len(st.PerPathBytes) < 2 || st.PerPathBytes[1] == 0 {
			t.Errorf("path 2 carried nothing before it went down: %v", st.PerPathBytes)
		}
		s.Close()
	})
}
