package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// testServer runs mpquic-server's HTTP/3 server on a multipath listener
// (which serves plain HTTP/3 on the same port) and the single-path
// baseline on loopback
// with a fresh certificate written to cert.pem; it serves a 1 MiB file "f".
type testServer struct {
	addr, h3Addr string
	ca           string // path of the pinned certificate
	dir          string
	data         []byte
	pair         *certs.Pair // the server's certificate
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	dir := t.TempDir()
	ts := &testServer{dir: dir, data: bytes.Repeat([]byte("multipath "), 100<<10)}
	if err := os.WriteFile(filepath.Join(dir, "f"), ts.data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>mpquic</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	ts.pair = pair
	ts.ca = filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(ts.ca, pair.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	lo := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	pc, err := net.ListenUDP("udp4", lo)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenOnePort(pc, pair.Server, &session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := &mpfile.Files{Dir: dir}
	var lim serverLimits
	hs := newH3Server(serverHandler(srv, nil), lim, nil)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(&h3sessionListener{ln: ln}) }()
	hpc, err := net.ListenUDP("udp4", lo)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := serveSinglePath(hpc, pair.Server, fileHandler(srv, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sp.Close()
		hpc.Close()
		hs.Close()
		<-done
		pc.Close()
	})
	ts.addr, ts.h3Addr = pc.LocalAddr().String(), hpc.LocalAddr().String()
	return ts
}

// runClient runs the client with args and returns its exit status, the
// Results it printed and its stderr.
func runClient(t *testing.T, args ...string) (int, []metrics.Result, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := clientRun(context.Background(), args, &stdout, &stderr)
	var rs []metrics.Result
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if strings.HasPrefix(l, "{") {
			var r metrics.Result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("bad JSON line %q: %v", l, err)
			}
			rs = append(rs, r)
		}
	}
	return code, rs, stderr.String()
}

func TestGetAndHTTPGet(t *testing.T) {
	ts := startServer(t)
	out := filepath.Join(t.TempDir(), "out")
	for _, cmd := range []string{"get", "http-get"} {
		code, rs, stderr := runClient(t, "-addr", ts.addr, "-ca", ts.ca, "-paths", "127.0.0.1,127.0.0.1",
			"-scenario", "loop", "-seed", "7", "-capacity-bps", "1e9", cmd, "f", "-o", out)
		if code != 0 || len(rs) != 1 {
			t.Fatalf("%s: exit %d, %d results, stderr %s", cmd, code, len(rs), stderr)
		}
		r := rs[0]
		if !r.SHA256OK || r.Bytes != uint64(len(ts.data)) || r.Scenario != "loop" || r.Seed != 7 || r.CapacityBps != 1e9 || r.Scheduler != "minrtt" {
			t.Errorf("%s: result %+v", cmd, r)
		}
		if len(r.PerPathBytes) != 2 {
			t.Errorf("%s: per-path bytes %v, want 2 paths", cmd, r.PerPathBytes)
		}
		if r.MaxStallSec <= 0 || r.MaxStallSec > r.FCTSeconds {
			t.Errorf("%s: max stall %.4f s, want in (0, FCT %.4f s]", cmd, r.MaxStallSec, r.FCTSeconds)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, ts.data) {
			t.Errorf("%s: output file differs", cmd)
		}
	}
}

func TestCompare(t *testing.T) {
	ts := startServer(t)
	code, rs, stderr := runClient(t, "-addr", ts.addr, "-h3-addr", ts.h3Addr, "-ca", ts.ca, "-paths", "127.0.0.1,lo", "compare", "/f", "-o", filepath.Join(t.TempDir(), "f"))
	if code != 0 || len(rs) != 3 {
		t.Fatalf("exit %d, %d results, stderr %s", code, len(rs), stderr)
	}
	for i, want := range []string{"minrtt", "single-path-1", "single-path-2"} {
		if rs[i].Scheduler != want || !rs[i].SHA256OK {
			t.Errorf("result %d: %s ok %v, want %s", i, rs[i].Scheduler, rs[i].SHA256OK, want)
		}
	}
	if !strings.Contains(stderr, "best single path") {
		t.Errorf("no summary on stderr: %s", stderr)
	}
}

// A file the server does not have: exit 1 with the server's message, not
// prefixed with the scheduler's name.
// h3-get is compare's single-path part alone: one plain QUIC download on
// the first of -paths, verified, with no multipath session (-addr not
// needed).
func TestH3Get(t *testing.T) {
	ts := startServer(t)
	out := filepath.Join(t.TempDir(), "f")
	code, rs, stderr := runClient(t, "-h3-addr", ts.h3Addr, "-ca", ts.ca, "-paths", "127.0.0.1,lo", "h3-get", "/f", "-o", out)
	if code != exitOK || len(rs) != 1 {
		t.Fatalf("exit %d, %d results, stderr %s", code, len(rs), stderr)
	}
	if r := rs[0]; !r.SHA256OK || r.Bytes != uint64(len(ts.data)) || r.Scheduler != "single-path-1" || r.Extra["path"] != 1 {
		t.Errorf("result %+v", r)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, ts.data) {
		t.Error("output file differs")
	}
}

func TestNoSuchFile(t *testing.T) {
	ts := startServer(t)
	out := filepath.Join(t.TempDir(), "out")
	code, rs, stderr := runClient(t, "-addr", ts.addr, "-ca", ts.ca, "get", "nothing", "-o", out)
	if code != exitFail || len(rs) != 1 || !strings.Contains(rs[0].Error, "404 Not Found") {
		t.Errorf("exit %d, results %+v, stderr %s", code, rs, stderr)
	}
	if want := "mpquic-client: server: 404 Not Found: 404 page not found\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	code, _, stderr = runClient(t, "-addr", ts.addr, "-ca", ts.ca, "-q", "http-get", "/.hidden-secret", "-o", out)
	if code != exitFail || !strings.HasPrefix(stderr, "mpquic-client: server: 404 Not Found") {
		t.Errorf("http-get of a hidden file: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the output of a failed download was left behind")
	}
}

// The README's own example, http-get /index.html, and the directory URLs
// that redirect or serve the index page: exit 0, SHA-256 checked.
func TestHTTPGetIndex(t *testing.T) {
	ts := startServer(t)
	for _, p := range []string{"/index.html", "/", "index.html"} {
		out := filepath.Join(t.TempDir(), "out")
		code, rs, stderr := runClient(t, "-addr", ts.addr, "-ca", ts.ca, "-q", "http-get", p, "-o", out)
		if code != exitOK || len(rs) != 1 || !rs[0].SHA256OK {
			t.Errorf("http-get %s: exit %d, results %+v, stderr %s", p, code, rs, stderr)
		}
		if b, _ := os.ReadFile(out); string(b) != "<h1>mpquic</h1>\n" {
			t.Errorf("http-get %s wrote %q", p, b)
		}
	}
}

// -paths takes IP:port: the path's socket is bound to that port.
func TestPathsHostPort(t *testing.T) {
	ts := startServer(t)
	free, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := free.LocalAddr().(*net.UDPAddr).Port
	free.Close()
	code, rs, stderr := runClient(t, "-addr", ts.addr, "-ca", ts.ca, "-q", "-paths", fmt.Sprintf("127.0.0.1:%d,127.0.0.1", port), "get", "f", "-o", os.DevNull)
	if code != exitOK || len(rs) != 1 || !rs[0].SHA256OK {
		t.Errorf("exit %d, results %+v, stderr %s", code, rs, stderr)
	}
}

// -h and help print the help on stdout and exit 0; bad command lines exit
// 2 with a message that says what is wrong.
func TestClientCommandLine(t *testing.T) {
	for _, h := range [][]string{{"-h"}, {"-help"}, {"help"}, {"-addr", "x", "get", "-h"}} {
		var stdout, stderr bytes.Buffer
		code := clientRun(context.Background(), h, &stdout, &stderr)
		if code != exitOK || !strings.Contains(stdout.String(), "usage: mpquic-client") || !strings.Contains(stdout.String(), "-connect-timeout") || !strings.Contains(stdout.String(), "-coupling") || !strings.Contains(stdout.String(), "-reno-friendly") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", h, code, stdout.String(), stderr.String())
		}
	}
	ok := []string{"-addr", "127.0.0.1:1", "-ca", "x"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"get"}, "want a command and its target"},
		{append(ok, "fetch", "f"), `unknown command "fetch" (commands: get, http-get, compare, h3-get, help)`},
		{append(ok, "h3-get", "/f"), "h3-get needs -h3-addr"},
		{[]string{"get", "f"}, "-addr (or an https URL) and -ca (the server's -dev-cert writes DIR/cert.pem) are required"},
		{[]string{"-addr", "127.0.0.1:1", "get", "f"}, "mpquic-client: -ca (the server's -dev-cert writes DIR/cert.pem) is required\n"},
		{[]string{"-ca", "x", "get", "f"}, "mpquic-client: -addr (or an https URL) is required\n"},
		{append(ok, "-paths", "127.0.0.1,nosuch0", "get", "f"), `-paths: path "nosuch0" is not a local IP address, IP:port or interface name (interfaces here: lo`},
		{append(ok, "-paths", "127.0.0.1:99999", "get", "f"), `bad port "99999"`},
		{append(ok, "compare", "/f"), "compare needs -h3-addr"},
		{append(ok, "-h3-addr", "127.0.0.1:2", "get", "f"), "-h3-addr is only used by compare"},
		{append(ok, "-timeout", "-1s", "get", "f"), "want positive durations"},
		{append(ok, "-recv-window", "-5", "get", "f"), "-recv-window -5"},
		{append(ok, "-backup", "1", "get", "f"), "path 1 carries the session's handshake"},
		{append(ok, "-coupling", "cubic", "get", "f"), `-coupling: cc: unknown coupling "cubic" (known: balia, lia, none, olia, reno-friendly)`},
	} {
		code, _, stderr := runClient(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "mpquic-client -h") {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// Unknown scheduler: exit 2 listing the registered ones.
func TestBadScheduler(t *testing.T) {
	code, _, stderr := runClient(t, "-addr", "127.0.0.1:1", "-ca", "x", "-scheduler", "fastest", "get", "f")
	if code != exitUsage || !strings.Contains(stderr, `unknown scheduler "fastest"`) || !strings.Contains(stderr, "minrtt") || !strings.Contains(stderr, "redundant") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// Nobody listens: a clear error within -connect-timeout.
func TestUnreachable(t *testing.T) {
	ts := startServer(t) // only for its certificate
	dead, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	addr := dead.LocalAddr().String()
	dead.Close()
	start := time.Now()
	code, rs, stderr := runClient(t, "-addr", addr, "-ca", ts.ca, "-connect-timeout", "1s", "-q", "get", "f", "-o", os.DevNull)
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("took %v", el)
	}
	if code != exitFail || len(rs) != 1 || rs[0].Error == "" {
		t.Errorf("exit %d, results %+v, stderr %s", code, rs, stderr)
	}
	t.Logf("stderr: %s", strings.TrimSpace(stderr))
}

// A certificate other than the server's: a verification error, not a hang.
func TestWrongCertificate(t *testing.T) {
	ts := startServer(t)
	other, _ := certs.SelfSigned("localhost")
	ca := filepath.Join(t.TempDir(), "other.pem")
	os.WriteFile(ca, other.CertPEM, 0o644)
	start := time.Now()
	code, rs, stderr := runClient(t, "-addr", ts.addr, "-ca", ca, "-q", "get", "f", "-o", os.DevNull)
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("took %v", el)
	}
	if code != exitFail || len(rs) != 1 || !strings.Contains(rs[0].Error, "certificate") {
		t.Errorf("exit %d, results %+v, stderr %s", code, rs, stderr)
	}
	// The right certificate under another name fails too.
	code, rs, _ = runClient(t, "-addr", ts.addr, "-ca", ts.ca, "-server-name", "example.org", "-q", "get", "f", "-o", os.DevNull)
	if code != exitFail || len(rs) != 1 || !strings.Contains(rs[0].Error, "certificate") {
		t.Errorf("wrong name: exit %d, results %+v", code, rs)
	}
}

func TestParseBackup(t *testing.T) {
	got, err := parseBackup("2, 4")
	if err != nil || len(got) != 4 || got[0] || !got[1] || got[2] || !got[3] {
		t.Errorf("parseBackup: %v %v", got, err)
	}
	for _, bad := range []string{"1", "0", "x", "99"} {
		if _, err := parseBackup(bad); err == nil {
			t.Errorf("parseBackup(%q) accepted", bad)
		}
	}
}
