package netns

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/netem"
)

// The interface that appears mid-download in TestAutoPaths, and its
// address: path 3's client end under a new name and with a new address.
const (
	newDev  = "wl3"
	newAddr = "10.10.3.7"
)

// TestAutoPaths is the issue's "download with -paths auto during which an
// interface is deleted and a new one with a new address is added: SHA-256
// ok, and both events logged and visible in the per-path stats".
//
// Topology: three paths (20 Mbit/s/10 ms, 10 Mbit/s/30 ms, 10 Mbit/s/20
// ms). Before the client starts, path 3's client interface c3 is moved out
// of the client namespace (into its router's), so the client sees c1 and
// c2 only. 2 s into a 20 MiB minRTT download c2 is deleted (`ip link del`,
// a USB adapter pulled out); at 3.5 s the old c3 comes back into the client
// namespace as a new interface wl3 with a new address 10.10.3.7 (and its
// route), as a hot-plugged adapter would after DHCP.
func TestAutoPaths(t *testing.T) {
	requireNetns(t)
	bin, data, certDir := prepare(t)
	spec := netem.Spec{
		Name:   "auto-paths",
		Prefix: "mpqpm",
		Paths: []netem.Path{
			{Name: "fast", Link: &netem.Link{RateMbit: 20, DelayMs: 10}},
			{Name: "slow", Link: &netem.Link{RateMbit: 10, DelayMs: 30}},
			{Name: "later", Link: &netem.Link{RateMbit: 10, DelayMs: 20}},
		},
	}
	e := up(t, spec, bin, data, certDir)
	cl, r3 := e.spec.ClientNS(), e.spec.RouterNS(3)
	ipCmd(t, "-n", cl, "link", "set", "dev", netem.ClientDev(3), "netns", r3)
	ipCmd(t, "-n", r3, "link", "set", "dev", netem.ClientDev(3), "name", newDev)

	var delAt, addAt time.Duration
	var delWall, addWall time.Time
	res, stderr, err := e.autoDownload(t, func(start time.Time) {
		time.Sleep(2 * time.Second)
		delAt, delWall = time.Since(start), time.Now()
		ipCmd(t, "-n", cl, "link", "del", "dev", netem.ClientDev(2))
		time.Sleep(1500 * time.Millisecond)
		addAt, addWall = time.Since(start), time.Now()
		ipCmd(t, "-n", r3, "link", "set", "dev", newDev, "netns", cl)
		ipCmd(t, "-n", cl, "link", "set", "dev", newDev, "up")
		ipCmd(t, "-n", cl, "route", "add", "default", "via", "10.10.3.1", "dev", newDev, "onlink", "table", "103")
		ipCmd(t, "-n", cl, "rule", "add", "from", newAddr, "table", "103", "priority", "110")
		ipCmd(t, "-n", cl, "addr", "add", newAddr+"/24", "dev", newDev) // the address last: usable from here
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("client stderr:\n%s", stderr)
	if !res.SHA256OK || res.Bytes != fileSize {
		t.Errorf("transfer incomplete or corrupt: %+v", res)
	}
	if res.FCTSeconds < addAt.Seconds()+1 {
		t.Errorf("the download ended at %.2f s, less than 1 s after %s came (%.2f s): nothing tested", res.FCTSeconds, newDev, addAt.Seconds())
	}

	// Both events, one line each.
	removedRe := regexp.MustCompile(`path event at ([0-9.]+) s: removed path (\d+) on c2 10\.10\.2\.2: link deleted`)
	joinedRe := regexp.MustCompile(`path event at ([0-9.]+) s: joined path (\d+) on ` + newDev + ` ` + regexp.QuoteMeta(newAddr) + `\n`)
	rm, jm := removedRe.FindStringSubmatch(stderr), joinedRe.FindStringSubmatch(stderr)
	if rm == nil || jm == nil {
		t.Fatalf("event lines missing: removal of c2 %v, join of %s %v", rm != nil, newDev, jm != nil)
	}
	// The same events in the -v log, stamped with the wall clock: the
	// client's own clock starts after its process did (0.6 s late measured
	// under load), so only wall times compare with the test's actions.
	rmWall := logTime(t, stderr, `pathmgr: removed path \d+ on c2 `, delWall)
	jnWall := logTime(t, stderr, `pathmgr: joined path \d+ on `+newDev+` `, addWall)

	// The per-path stats at the end: c2 removed with its reason, wl3 joined
	// and carrying data to the end.
	rowRe := func(dev, addr, left string) *regexp.Regexp {
		return regexp.MustCompile(`path (\d+) ` + dev + ` ` + regexp.QuoteMeta(addr) + `: joined at ([0-9.]+) s, ` + left + `, received (\d+) B`)
	}
	c2row := rowRe("c2", netem.ClientAddr(2), `removed at [0-9.]+ s \(link deleted\)`).FindStringSubmatch(stderr)
	wlrow := rowRe(newDev, newAddr, "to the end").FindStringSubmatch(stderr)
	c1row := rowRe("c1", netem.ClientAddr(1), "to the end").FindStringSubmatch(stderr)
	if c1row == nil || c2row == nil || wlrow == nil {
		t.Fatalf("per-path stats lack a row: c1 %v, c2 %v, %s %v", c1row != nil, c2row != nil, newDev, wlrow != nil)
	}
	c2got, _ := strconv.ParseUint(c2row[3], 10, 64)
	wlgot, _ := strconv.ParseUint(wlrow[3], 10, 64)
	if c2got < fileSize/50 || wlgot < fileSize/50 {
		t.Errorf("received on c2 %d B, on %s %d B: want each at least %d B (2%%)", c2got, newDev, wlgot, fileSize/50)
	}
	wlID, _ := strconv.Atoi(wlrow[1])
	if wlID >= len(res.PathNames) || res.PathNames[wlID] != newDev {
		t.Errorf("result path_names %q: want %s at path %d", res.PathNames, newDev, wlID)
	}
	if res.Extra["path_joins"] != 3 || res.Extra["path_removals"] != 1 {
		t.Errorf("result extra %v: want path_joins 3, path_removals 1", res.Extra)
	}
	// The manager's own latency: a deleted link is removed at once, a new
	// address joins after the 200 ms debounce plus one handshake (RTT 40 ms).
	rmLag, jnLag := rmWall.Sub(delWall), jnWall.Sub(addWall)
	if rmLag < 0 || rmLag > time.Second {
		t.Errorf("c2 removed %v after its deletion, want within 1 s", rmLag)
	}
	if jnLag < 200*time.Millisecond || jnLag > 2*time.Second {
		t.Errorf("%s joined %v after its address came, want 0.2 s (debounce) to 2 s", newDev, jnLag)
	}
	t.Logf("RESULT -paths auto: %d B in %.2f s, goodput %.2f Mbit/s, sha256_ok %v; c2 deleted %.3f s after the client started, removed %.1f ms later; %s added at %.3f s, joined %.1f ms later (client clock: removal at %s s, join at %s s); received on c1 %s B, c2 %d B, %s %d B; server per path %v B",
		res.Bytes, res.FCTSeconds, res.GoodputBps/1e6, res.SHA256OK, delAt.Seconds(), rmLag.Seconds()*1e3, newDev, addAt.Seconds(), jnLag.Seconds()*1e3, rm[1], jm[1], c1row[3], c2got, newDev, wlgot, res.PerPathBytes)
}

// logTime returns the wall time of the first -v log line of the client
// (log.Lmicroseconds: "15:04:05.000000") matching re, on the day of near.
func logTime(t *testing.T, stderr, re string, near time.Time) time.Time {
	t.Helper()
	m := regexp.MustCompile(`(\d\d:\d\d:\d\d\.\d{6}) ` + re).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no -v log line matching %q", re)
	}
	tod, err := time.ParseInLocation("15:04:05.000000", m[1], near.Location())
	if err != nil {
		t.Fatal(err)
	}
	y, mo, d := near.Date()
	at := time.Date(y, mo, d, tod.Hour(), tod.Minute(), tod.Second(), tod.Nanosecond(), near.Location())
	if at.Sub(near) < -12*time.Hour { // midnight passed in between
		at = at.AddDate(0, 0, 1)
	}
	return at
}

// ipCmd runs ip with args, failing the test on an error.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// syncBuffer is a strings.Builder safe for a process's output and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// autoDownload runs mpquic-server (minRTT) and then mpquic-client -paths
// auto in the client namespace for the payload, runs during (given the
// client's start time) alongside, and returns the client's Result and its
// stderr. The server is ready when it logs that it serves (up to 10 s).
func (e *env) autoDownload(t *testing.T, during func(start time.Time)) (metrics.Result, string, error) {
	t.Helper()
	addr := netem.ServerAddr + ":" + mpquicPort
	nice := []string{"nice", "-n", niceness()}
	srvArgs := []string{filepath.Join(e.bin, "mpquic-server"), "-dir", e.dataDir, "-addr", addr, "-scheduler", "minrtt",
		"-cert", filepath.Join(e.certDir, "cert.pem"), "-key", filepath.Join(e.certDir, "key.pem"), "-name", certName, "-v"}
	srv := exec.Command("ip", append(append([]string{"netns", "exec", e.spec.ServerNS()}, nice...), srvArgs...)...)
	var srvLog syncBuffer
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	if err := srv.Start(); err != nil {
		return metrics.Result{}, "", err
	}
	defer func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		t.Logf("server log:\n%s", srvLog.String())
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(srvLog.String(), "serving "); {
		if time.Now().After(deadline) {
			return metrics.Result{}, "", fmt.Errorf("server not serving within 10 s: %s", srvLog.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	clArgs := []string{filepath.Join(e.bin, "mpquic-client"), "-addr", addr, "-ca", filepath.Join(e.certDir, "cert.pem"), "-server-name", certName,
		"-paths", "auto", "-scheduler", "minrtt", "-scenario", e.spec.Name, "-capacity-bps", fmt.Sprint(e.spec.CapacityDownBps()),
		"-timeout", "3m", "-v", "get", e.payload(), "-o", "/dev/null"} // no -q: the events and the table go to stderr; -v: the same with wall times
	cl := exec.Command("ip", append(append([]string{"netns", "exec", e.spec.ClientNS()}, nice...), clArgs...)...)
	var stdout, stderr syncBuffer
	cl.Stdout, cl.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cl.Start(); err != nil {
		return metrics.Result{}, "", err
	}
	done := make(chan struct{})
	go func() { defer close(done); during(start) }()
	err := cl.Wait()
	<-done
	var res metrics.Result
	var last string
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "{") {
			last = l
		}
	}
	if last == "" {
		return res, stderr.String(), fmt.Errorf("client printed no result (err %v): stderr %q", err, stderr.String())
	}
	if jerr := json.Unmarshal([]byte(last), &res); jerr != nil {
		return res, stderr.String(), fmt.Errorf("client result %q: %v", last, jerr)
	}
	if err != nil {
		return res, stderr.String(), fmt.Errorf("client failed: %v: %s (stderr %q)", err, res.Error, stderr.String())
	}
	return res, stderr.String(), nil
}
