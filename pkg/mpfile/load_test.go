package mpfile

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Load: concurrent clients, paths per client, file size per download.
const (
	loadSessions = 100
	loadPaths    = 2
	loadBytes    = 32 << 10
	loadTimeout  = 90 * time.Second // the whole test, on a loaded 2-core machine
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd: " + err.Error())
	}
	return len(ents)
}

// settle waits until f() ≤ want or the deadline passes, and returns the
// last value.
func settle(f func() int, want int, d time.Duration) int {
	end := time.Now().Add(d)
	n := f()
	for n > want && time.Now().Before(end) {
		time.Sleep(50 * time.Millisecond)
		n = f()
	}
	return n
}

// TestLoad100 has the server handle 100 concurrent two-path sessions on
// loopback, each downloading a small file, then shuts it down: no goroutine
// or file descriptor may be left behind.
func TestLoad100(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	dir := t.TempDir()
	want := writeFile(t, dir, "small", loadBytes)
	pair, err := certs.SelfSigned("mpfile.test")
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	g0, fd0 := runtime.NumGoroutine(), openFDs(t)

	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := session.Listen(pc, pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Dir: dir}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	start := time.Now()
	// Every session is connected first, and all download at once.
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	errs := make(chan error, loadSessions)
	var peak int
	var peakMu sync.Mutex
	for i := 0; i < loadSessions; i++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			err := loadClient(ctx, ln.Addr(), pair, want, &ready, gate, func() {
				peakMu.Lock()
				peak = max(peak, srv.Sessions())
				peakMu.Unlock()
			})
			if err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		}()
	}
	ready.Wait()
	connected := time.Since(start)
	close(gate)
	done.Wait()
	close(errs)
	var failed []string
	for err := range errs {
		failed = append(failed, err.Error())
	}
	t.Logf("%d sessions × %d paths: connected in %v, all done in %v; at most %d served at once; %d failed",
		loadSessions, loadPaths, connected.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), peak, len(failed))
	if len(failed) > 0 {
		t.Errorf("%d downloads failed:\n%s", len(failed), strings.Join(failed[:min(len(failed), 10)], "\n"))
	}
	if peak < loadSessions/2 {
		t.Errorf("at most %d sessions were served at once, want most of %d", peak, loadSessions)
	}

	if err := srv.Close(); err != nil {
		t.Errorf("server close: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	pc.Close()
	if n := settle(runtime.NumGoroutine, g0, 10*time.Second); n > g0 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines left, %d before:\n%s", n, g0, buf[:min(len(buf), 8000)])
	}
	if n := settle(func() int { return openFDs(t) }, fd0, 5*time.Second); n > fd0 {
		t.Errorf("%d file descriptors open, %d before", n, fd0)
	}
}

// loadClient connects a two-path session, waits for gate, downloads the
// file and closes everything it opened.
func loadClient(ctx context.Context, remote net.Addr, pair *certs.Pair, want []byte, ready *sync.WaitGroup, gate chan struct{}, connected func()) error {
	signal := sync.OnceFunc(ready.Done)
	defer signal()
	var pcs []net.PacketConn
	defer func() {
		for _, c := range pcs {
			c.Close()
		}
	}()
	for i := 0; i < loadPaths; i++ {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return err
		}
		pcs = append(pcs, c)
	}
	s, err := Connect(ctx, pcs, remote, pair.Client, nil, 30*time.Second)
	if err != nil {
		return err
	}
	defer s.CloseWithError(0, "")
	var joinErr string
	if n := JoinPaths(ctx, s, pcs[1:], remote, nil, 30*time.Second, func(f string, a ...any) { joinErr = fmt.Sprintf(f, a...) }); n != loadPaths-1 {
		return fmt.Errorf("%d of %d extra paths joined: %s", n, loadPaths-1, joinErr)
	}
	connected()
	signal()
	<-gate
	var got bytes.Buffer
	if _, err := Get(ctx, s, "small", &got, nil); err != nil {
		return err
	}
	if !bytes.Equal(got.Bytes(), want) {
		return fmt.Errorf("data differs")
	}
	return s.Close()
}
