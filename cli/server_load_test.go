package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/cmd/mpq-attack/attack"
	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/pathmgr"
)

// The load test of issue 10, on loopback: legitimate 2-path downloads and
// hostile sessions at once against mpquic-server (serverRun, in this test
// process); the clients and attackers run in a child process (this test
// binary again), so the RSS, goroutines and file descriptors measured here
// are the server's alone.
const (
	loadDownloads   = 200      // concurrent legitimate 2-path sessions, one download each
	loadFileBytes   = 10 << 20 // bytes per download
	loadConnecting  = 32       // sessions in handshake at once while the clients connect
	loadChildBudget = 170 * time.Second
	// loadRSSBound is the server's VmRSS bound, bytes: 64 MiB of process
	// base plus, for each legitimate session, the data pkg/session keeps
	// for it (at most the client's 4 MiB window unacknowledged, and the
	// stream's 1 MiB send buffer), counted twice for the segment copies
	// and quic-go's own buffers: 64 MiB + 200 × 2 × 5 MiB = 2064 MiB. The
	// hostile sessions run with -max-unacked 4 MiB (2 forged windows:
	// ≤ 2 × 2 × 4 MiB more) and the overlap attack is refused at once.
	loadRSSBound = 64<<20 + loadDownloads*2*5<<20 + 2*2*4<<20
	loadSlack    = 8 // goroutines and file descriptors allowed above the baseline afterwards
	// The server runs with its default write (30 s) and ack (60 s)
	// timeouts: 3 s and then 10 s cut 10-30% of the legitimate downloads on
	// the shared 2 cores (load average 9), whose sessions went that long
	// without progress.
	// loadIdleTimeout is the server's -idle-timeout: the idle attackers are
	// ended while the downloads run; 5 s also ended legitimate sessions
	// whose first request took that long to arrive under this load, and
	// so did 15 s once, with the HTTP/3 attacks beside (downloads 54 s,
	// load average 3-9 from other work); 15 s also cut a download whose
	// handler had returned 15 s before its tail was delivered (the idle
	// timer of pkg/h3 counts from the handler's end:
	// TestIdleTimeoutSparesUndeliveredResponse). 25 s still ends the first
	// idle attackers within loadMinAttack.
	loadIdleTimeout = 25 * time.Second
	loadMinAttack   = defaultWriteTimeout + 5*time.Second // the attacks last at least this long
	loadCancelled   = 10000                               // HTTP/3 requests opened and cancelled at once on one session (issue 21 item 7)
)

// loadChildEnv carries the child's job: "ADDR|CA|DIR".
const loadChildEnv = "MPQ_LOAD_CHILD"

// lineWriter collects a server's stderr and reports its listening address.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
}

var servingRE = regexp.MustCompile(` on (127\.0\.0\.1:\d+) \(multipath`)

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := servingRE.FindSubmatch(p); m != nil {
		select {
		case w.addr <- string(m[1]):
		default:
		}
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// serveInProcess runs mpquic-server with args until ctx ends, and returns the
// address it serves on, its stderr, and its exit code once it exits.
func serveInProcess(t *testing.T, ctx context.Context, args ...string) (string, *lineWriter, <-chan int) {
	t.Helper()
	logw := &lineWriter{addr: make(chan string, 1)}
	exited := make(chan int, 1)
	go func() { exited <- serverRun(ctx, args, io.Discard, logw) }()
	select {
	case addr := <-logw.addr:
		return addr, logw, exited
	case code := <-exited:
		t.Fatalf("server exited %d: %s", code, logw.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("server did not start: %s", logw.String())
	}
	return "", nil, nil
}

// TestLoadHostile: 200 concurrent 2-path downloads of 10 MiB each while 20
// hostile sessions attack (overlapping segments, ack requests against a
// fragmented buffer, forged windows, idle sessions, forged and replayed
// joins, never-reading downloaders, half-sent requests; and, of issue 21
// item 7, a second HTTP/3 control stream, DATA before HEADERS, a header
// section past the server's limit and 10,000 cancelled requests, each
// answered as RFC 9114 says) and a flood of Initials hits the port. Every
// download's SHA-256 must match, the server's
// VmRSS (/proc/self/status, sampled every 100 ms) stays under loadRSSBound,
// and its goroutines and file descriptors return to their idle baseline.
func TestLoadHostile(t *testing.T) {
	if job := os.Getenv(loadChildEnv); job != "" {
		loadChild(t, job)
		return
	}
	if testing.Short() {
		t.Skip("short mode: the load test takes a few minutes")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: " + err.Error())
	}
	dir, certDir := t.TempDir(), t.TempDir()
	writeRandom(t, filepath.Join(dir, "f10"), loadFileBytes)
	writeRandom(t, filepath.Join(dir, "big"), 64<<20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runtime.GC()
	g0, fd0 := runtime.NumGoroutine(), countFDs()
	addr, logw, exited := serveInProcess(t, ctx, "-dir", dir, "-addr", "127.0.0.1:0", "-dev-cert", certDir,
		"-max-sessions-per-ip", "4096", // every client is on 127.0.0.1
		"-idle-timeout", loadIdleTimeout.String(), "-request-timeout", "3s",
		"-max-unacked", strconv.Itoa(4<<20))
	time.Sleep(500 * time.Millisecond)
	gIdle, fdIdle := runtime.NumGoroutine(), countFDs()

	sampler := attack.Sample(0, 100*time.Millisecond)
	start := time.Now()
	cctx, ccancel := context.WithTimeout(ctx, loadChildBudget+10*time.Second)
	defer ccancel()
	cmd := exec.CommandContext(cctx, os.Args[0], "-test.run", "^TestLoadHostile$", "-test.v", "-test.timeout", "10m")
	cmd.Env = append(os.Environ(), loadChildEnv+"="+strings.Join([]string{addr, filepath.Join(certDir, devCertFile), dir}, "|"))
	out, err := cmd.CombinedOutput()
	el := time.Since(start)
	use := sampler.Stop()
	t.Logf("child (%v):\n%s", el.Round(time.Millisecond), tail(string(out), 60))
	if err != nil {
		t.Errorf("clients and attackers: %v", err)
	}
	t.Logf("server: peak VmRSS %.0f MiB (bound %.0f MiB), %.1f s of CPU in %.1f s, peak %d goroutines, %d threads",
		float64(use.PeakRSS)/(1<<20), float64(loadRSSBound)/(1<<20), use.CPUSeconds, use.Seconds, use.PeakGoroutines, use.PeakThreads)
	if use.PeakRSS > loadRSSBound {
		t.Errorf("server VmRSS reached %d bytes, bound %d", use.PeakRSS, loadRSSBound)
	}
	// Idle again: every session ended (the hostile ones by the server's
	// timeouts), so goroutines and descriptors come back to the idle level.
	g := settleCount(runtime.NumGoroutine, gIdle+loadSlack, 30*time.Second)
	fd := settleCount(countFDs, fdIdle+loadSlack, 10*time.Second)
	t.Logf("idle server: %d goroutines and %d fds before the load, %d and %d after", gIdle, fdIdle, g, fd)
	if g > gIdle+loadSlack || fd > fdIdle+loadSlack {
		buf := make([]byte, 1<<20)
		t.Errorf("after the load: %d goroutines (idle %d), %d fds (idle %d)\n%s", g, gIdle, fd, fdIdle, buf[:runtime.Stack(buf, true)][:min(8000, runtime.Stack(buf, true))])
	}
	if lines := strings.Count(logw.String(), "\n"); lines > 200 {
		t.Errorf("the server logged %d lines under attack; limits should be logged once per interval", lines)
	}
	cancel()
	if code := <-exited; code != exitOK {
		t.Errorf("server exit %d", code)
	}
	g = settleCount(runtime.NumGoroutine, g0+loadSlack, 10*time.Second)
	fd = settleCount(countFDs, fd0+loadSlack, 10*time.Second)
	if g > g0+loadSlack || fd > fd0+loadSlack {
		t.Errorf("after the server stopped: %d goroutines (%d before it started), %d fds (%d)", g, g0, fd, fd0)
	}
	t.Logf("server log:\n%s", tail(logw.String(), 30))
}

// writeRandom writes n pseudo-random bytes to path.
func writeRandom(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := uint64(i)*0x9e3779b97f4a7c15 ^ uint64(i>>13)
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// countFDs counts this process's open file descriptors.
func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// settleCount waits until f() ≤ want or d passed, and returns f().
func settleCount(f func() int, want int, d time.Duration) int {
	end := time.Now().Add(d)
	n := f()
	for n > want && time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
		n = f()
	}
	return n
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// loadChild is the child's side: the downloads and the attacks at once.
func loadChild(t *testing.T, job string) {
	parts := strings.Split(job, "|")
	if len(parts) != 3 {
		t.Fatalf("bad job %q", job)
	}
	ua, err := net.ResolveUDPAddr("udp", parts[0])
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := certs.ClientPinned(parts[1], "localhost")
	if err != nil {
		t.Fatal(err)
	}
	want, err := fileSum(filepath.Join(parts[2], "f10"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadChildBudget)
	defer cancel()
	start := time.Now()

	// The legitimate clients connect (at most loadConnecting at a time),
	// then all download at once.
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	sem := make(chan struct{}, loadConnecting)
	errs := make(chan error, loadDownloads)
	var goodMu sync.Mutex
	var slowest time.Duration
	for i := range loadDownloads {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			el, err := loadDownload(ctx, ua, tlsConf, want, &ready, sem, gate)
			if err != nil {
				errs <- fmt.Errorf("download %d: %w", i, err)
			}
			goodMu.Lock()
			slowest = max(slowest, el)
			goodMu.Unlock()
		}()
	}
	ready.Wait()
	connected := time.Since(start)

	// The attacks start with the downloads and stop when they are done.
	actx, acancel := context.WithCancel(ctx)
	o := attack.Options{Addr: ua, TLS: tlsConf, Duration: loadChildBudget, MaxBytes: 64 << 20, File: "big", Rate: 1000}
	with := func(n int) attack.Options { o := o; o.Sessions = n; return o }
	var awg sync.WaitGroup
	results := make(chan attack.Result, 16)
	launch := func(f func() attack.Result) {
		awg.Add(1)
		go func() { defer awg.Done(); results <- f() }()
	}
	launch(func() attack.Result { return attack.Overlap(actx, with(2)) })      // (a)
	launch(func() attack.Result { return attack.AckReqs(actx, with(2)) })      // (b)
	launch(func() attack.Result { return attack.Window(actx, with(2)) })       // (c)
	launch(func() attack.Result { return attack.Idle(actx, with(4)) })         // (d)
	launch(func() attack.Result { return neverReading(actx, ua, tlsConf, 4) }) // (f)
	launch(func() attack.Result { return halfSent(actx, ua, tlsConf, 2, 8) })  // (g)
	// HTTP/3 violations on raw sessions (issue 21 item 7), one round each.
	// They end on their own (ctx, not actx), so that the 10,000 cancelled
	// requests all go out even when the downloads end first (under a load
	// average of 9 only 7,296 had when the downloads took 46 s; the rest
	// then takes a second).
	launch(func() attack.Result { return attack.H3SecondControl(ctx, with(2)) }) // (i)
	launch(func() attack.Result { return attack.H3DataFirst(ctx, with(2)) })     // (j)
	launch(func() attack.Result { return attack.H3BigHeaders(ctx, with(2)) })    // (k)
	launch(func() attack.Result {                                                // (l)
		co := with(1)
		co.Requests = loadCancelled
		return attack.H3Cancel(ctx, co)
	})
	var joins attack.Result
	var joinErr error
	awg.Add(1)
	go func() { // (e)
		defer awg.Done()
		joins, joinErr = attack.Joins(actx, with(1), 20)
	}()
	awg.Add(1)
	go func() { // (h)
		defer awg.Done()
		fo := with(32)
		fo.Duration = 3 * time.Second
		ini, err := attack.CaptureInitials(actx, fo, 5000)
		if err == nil {
			var r attack.Result
			r, err = attack.Initials(actx, fo, ini, 5000)
			results <- r
		}
		if err != nil {
			t.Errorf("initials: %v", err)
		}
	}()
	close(gate)
	done.Wait()
	downloads := time.Since(start) - connected
	// Keep attacking long enough for every timeout to strike.
	select {
	case <-time.After(max(0, loadMinAttack-downloads)):
	case <-ctx.Done():
	}
	acancel()
	awg.Wait()
	close(results)
	close(errs)
	var failed []string
	for err := range errs {
		failed = append(failed, err.Error())
	}
	t.Logf("%d downloads of %d MiB over 2 paths: connected in %v, downloaded in %v (slowest %v); %d failed",
		loadDownloads, loadFileBytes>>20, connected.Round(time.Millisecond), downloads.Round(time.Millisecond), slowest.Round(time.Millisecond), len(failed))
	if len(failed) > 0 {
		t.Errorf("%d downloads failed:\n%s", len(failed), strings.Join(failed[:min(10, len(failed))], "\n"))
	}
	seen := map[string]bool{}
	for r := range results {
		b, _ := json.Marshal(r)
		t.Logf("attack %s", b)
		seen[r.Attack] = true
		switch r.Attack {
		case "idle":
			if r.Ended < 4 {
				t.Errorf("idle: the server ended %d of the idle sessions, want all 4 (idle timeout %v)", r.Ended, loadIdleTimeout)
			}
		case "never-reading":
			if r.Ended != r.Sessions || r.Sessions == 0 {
				t.Errorf("never-reading: %d of %d downloads reset with the write-timeout code", r.Ended, r.Sessions)
			}
		case "half-sent":
			if r.Ended != r.Frames || r.Frames == 0 {
				t.Errorf("half-sent: %d of %d requests cut by the server", r.Ended, r.Frames)
			}
		case "overlap":
			if r.Sessions > 0 && r.Ended == 0 {
				t.Errorf("overlap: no overlapping session was ended")
			}
		case "h3-second-control", "h3-data-first", "h3-big-headers":
			// RFC 9114 §6.2.1: "Receipt of a second stream claiming to be
			// a control stream MUST be treated as a connection error of
			// type H3_STREAM_CREATION_ERROR"; §4.1: "Receipt of an invalid
			// sequence of frames MUST be treated as a connection error of
			// type H3_FRAME_UNEXPECTED"; §4.2.2: a field section past the
			// limit may get "an HTTP 431 (Request Header Fields Too
			// Large)", which pkg/h3 sends, then STOP_SENDING with
			// H3_EXCESSIVE_LOAD.
			want := map[string][]string{
				"h3-second-control": {"close 0x103"},
				"h3-data-first":     {"close 0x105"},
				"h3-big-headers":    {"status 431", "stop 0x107"},
			}[r.Attack]
			for _, a := range want {
				if r.Sessions != 2 || r.Answers[a] != r.Sessions {
					t.Errorf("%s: answers %v on %d sessions, want %q on each of 2", r.Attack, r.Answers, r.Sessions, a)
				}
			}
		case "h3-cancel":
			// Every request cancelled; the server's stream credit kept
			// coming back (its initial credit is 256), and it answered a
			// request on the same session afterwards.
			if r.Sessions != 1 || r.Frames != loadCancelled || r.Credit <= loadCancelled || r.Answers["status 200"] != 1 || r.Ended != 0 {
				t.Errorf("h3-cancel: %d of %d requests cancelled on %d sessions (%d ended by the server), credit %d, answers %v; want all on 1, credit above %d and one status 200 after",
					r.Frames, loadCancelled, r.Sessions, r.Ended, r.Credit, r.Answers, loadCancelled)
			}
		}
	}
	for _, a := range []string{"overlap", "ackreq", "window", "idle", "never-reading", "half-sent", "initials",
		"h3-second-control", "h3-data-first", "h3-big-headers", "h3-cancel"} {
		if !seen[a] {
			t.Errorf("the %s attack did not run to its end", a)
		}
	}
	b, _ := json.Marshal(joins)
	t.Logf("attack %s", b)
	// None may be accepted, and the replay must be refused (Joins returns
	// an error otherwise). Under this load some join handshakes may get no
	// answer in time, and quic-go refuses connections while its accept
	// queue is full (CONNECTION_REFUSED; the Initials flood fills it):
	// such a join was refused before it was read (Answers["limit"]). Most
	// forged joins must get a refusal of one kind or the other.
	if refused := joins.Refused + joins.Answers["limit"]; joinErr != nil || joins.Accepted != 0 || refused < 11 {
		t.Errorf("joins: %v; %d forged or replayed joins accepted, %d refused (%v), want 0 and at least 11 of 21", joinErr, joins.Accepted, refused, joins.Answers)
	}
}

// fileSum is the SHA-256 of a file.
func fileSum(path string) ([sha256.Size]byte, error) {
	b, err := os.ReadFile(path)
	return sha256.Sum256(b), err
}

// loadDownload connects a 2-path session, waits for gate, downloads f10
// and checks it against want; it returns the download's duration.
func loadDownload(ctx context.Context, ua *net.UDPAddr, tlsConf *tls.Config, want [sha256.Size]byte, ready *sync.WaitGroup, sem chan struct{}, gate chan struct{}) (time.Duration, error) {
	signal := sync.OnceFunc(ready.Done)
	defer signal()
	var pcs []net.PacketConn
	defer func() {
		for _, c := range pcs {
			c.Close()
		}
	}()
	for range 2 {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return 0, err
		}
		pcs = append(pcs, c)
	}
	sem <- struct{}{}
	s, err := connect(ctx, pcs, ua, tlsConf, nil, 30*time.Second)
	if err == nil {
		if n := pathmgr.JoinPaths(ctx, s, pcs[1:], ua, nil, 30*time.Second, nil); n != 1 {
			err = errors.New("the second path did not join")
		}
	}
	<-sem
	if err != nil {
		return 0, err
	}
	defer s.CloseWithError(0, "")
	signal()
	<-gate
	start := time.Now()
	h := sha256.New()
	d, err := h3Get(ctx, s, target{authority: ua.String(), path: "/f10"}, h, nil)
	el := time.Since(start)
	if err != nil {
		return el, err
	}
	if !d.SHA256OK || [sha256.Size]byte(h.Sum(nil)) != want || d.Received != loadFileBytes {
		return el, fmt.Errorf("%d bytes, SHA-256 ok %v, matches the file %v", d.Received, d.SHA256OK, [sha256.Size]byte(h.Sum(nil)) == want)
	}
	return el, s.Close()
}
