// Package netns holds the root-only end-to-end test over real network
// namespaces: the two-path topology of the "real networks" issue, checked
// for RTT and rate, then 20 MB downloads over kernel MPTCP (reno) and, once
// cmd/mpquic-server and cmd/mpquic-client exist, over multipath QUIC.
//
// Run it with (as root):
//
//	MPQ_NETNS=1 go test -count=1 -v -timeout 15m ./test/netns/
//
// Without MPQ_NETNS=1, without root or without network namespaces it skips
// and says why.
package netns

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/netem"
)

// fileSize is the download size, bytes.
const fileSize = 20 << 20

// env is one topology that is up, with the project binaries built.
type env struct {
	spec    netem.Spec
	opts    netem.Options
	bin     string // directory of the built binaries
	dataDir string // directory served by the servers; holds the file "payload"
}

func requireNetns(t *testing.T) {
	t.Helper()
	if os.Getenv("MPQ_NETNS") != "1" {
		t.Skip("set MPQ_NETNS=1 to run the namespace test (needs root, iproute2, iptables, ethtool, ping)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: it creates network namespaces")
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		t.Skip("no network namespace support: " + err.Error())
	}
	for _, tool := range []string{"ip", "tc", "iptables", "ethtool", "ping"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (make net-deps)", tool)
		}
	}
}

// build compiles the named commands of this module into dir.
func build(t *testing.T, dir string, cmds ...string) {
	t.Helper()
	args := []string{"build", "-o", dir + "/"}
	for _, c := range cmds {
		args = append(args, "../../cmd/"+c)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestTwoPath(t *testing.T) {
	requireNetns(t)
	bin := t.TempDir()
	build(t, bin, "mpq-delayd", "mpq-netns", "mptcp-baseline")
	data := t.TempDir()
	if out, err := exec.Command(filepath.Join(bin, "mptcp-baseline"), "mkfile", "-o", filepath.Join(data, "payload"), "-size", fmt.Sprint(fileSize)).CombinedOutput(); err != nil {
		t.Fatalf("mkfile: %v %s", err, out)
	}
	for _, lossPct := range []float64{0, 0.5} {
		name := fmt.Sprintf("loss%.1f", lossPct)
		t.Run(name, func(t *testing.T) {
			s := netem.Spec{
				Name:   "two-path-" + name,
				Prefix: "mpqci",
				Paths: []netem.Path{
					{Name: "fast", Link: &netem.Link{RateMbit: 20, DelayMs: 10, LossPct: lossPct}},
					{Name: "slow", Link: &netem.Link{RateMbit: 10, DelayMs: 30, LossPct: lossPct}},
				},
			}
			e := up(t, s, bin, data)
			checks, err := netem.Verify(e.spec, e.opts, netem.VerifyOptions{})
			t.Logf("backend %s, verify:\n%s", e.spec.Backend, netem.FormatChecks(checks))
			if err != nil {
				t.Fatal(err)
			}
			if err := netem.MPTCPSetup(e.spec, e.opts); err != nil {
				t.Fatal(err)
			}
			res := e.kernelMPTCP(t)
			minFrac := 0.80 // lossless: reno over two paths fills most of the capacity
			if lossPct > 0 {
				minFrac = 0.25 // 0.5% random loss: reno's Mathis limit is about 13 of 30 Mbit/s
			}
			frac := res.GoodputBps / res.CapacityBps
			t.Logf("RESULT kernel-mptcp %s: %d B in %.2f s, goodput %.2f Mbit/s = %.1f%% of %.0f Mbit/s capacity, per path %v B, retrans %d pkts, ooo %d, sha256_ok %v",
				name, res.Bytes, res.FCTSeconds, res.GoodputBps/1e6, 100*frac, res.CapacityBps/1e6, res.PerPathBytes, res.RetransPackets, res.OOOSegments, res.SHA256OK)
			if !res.SHA256OK || res.Bytes != fileSize {
				t.Errorf("transfer incomplete or corrupt: %+v", res)
			}
			if res.Extra["mptcp"] != 1 || res.Extra["subflows"] < 2 {
				t.Errorf("MPTCP not in use on both paths: extra %v", res.Extra)
			}
			for i, b := range res.PerPathBytes {
				if b < fileSize/20 {
					t.Errorf("path %d carried only %d bytes", i+1, b)
				}
			}
			if frac < minFrac {
				t.Errorf("goodput %.1f%% of capacity, want at least %.0f%%", 100*frac, 100*minFrac)
			}

			// HOOK (multipath QUIC): once cmd/mpquic-server and
			// cmd/mpquic-client exist, download the same file with the
			// minRTT and redundant schedulers through runDownload. Only the
			// argument lists below need filling in.
			for _, sched := range []string{"minrtt", "redundant"} {
				t.Run("mpquic-"+sched, func(t *testing.T) {
					e.multipathQUIC(t, sched)
				})
			}
		})
	}
}

// up builds s and registers its teardown.
func up(t *testing.T, s netem.Spec, bin, data string) *env {
	t.Helper()
	o := netem.Options{
		StateDir:   t.TempDir(),
		DelaydPath: filepath.Join(bin, "mpq-delayd"),
		ToolPath:   filepath.Join(bin, "mpq-netns"),
	}
	if testing.Verbose() {
		o.Log = logWriter{t}
	}
	_ = netem.Down(s, o) // leftovers of an interrupted run
	built, err := netem.Up(s, o)
	t.Cleanup(func() {
		if err := netem.Down(built, netem.Options{StateDir: o.StateDir}); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{spec: built, opts: o, bin: bin, dataDir: data}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// kernelMPTCP downloads the payload over kernel MPTCP.
func (e *env) kernelMPTCP(t *testing.T) metrics.Result {
	t.Helper()
	bl := filepath.Join(e.bin, "mptcp-baseline")
	addr := netem.ServerAddr + ":4433"
	var pathAddrs []string
	for p := 1; p <= len(e.spec.Paths); p++ {
		pathAddrs = append(pathAddrs, netem.ClientAddr(p))
	}
	res, err := runDownload(t, e,
		bl, []string{"serve", "-dir", e.dataDir, "-addr", addr},
		bl, []string{"get", "-addr", addr, "-file", "payload", "-o", "/dev/null", "-scenario", e.spec.Name,
			"-capacity-bps", fmt.Sprint(e.spec.CapacityDownBps()), "-path-addrs", strings.Join(pathAddrs, ","), "-require-subflows", "2"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// multipathQUIC is the marked hook for the multipath QUIC downloads.
func (e *env) multipathQUIC(t *testing.T, scheduler string) {
	server, client := filepath.Join("..", "..", "cmd", "mpquic-server"), filepath.Join("..", "..", "cmd", "mpquic-client")
	if _, err := os.Stat(server); err != nil {
		t.Skip("cmd/mpquic-server does not exist yet (multipath session in progress)")
	}
	if _, err := os.Stat(client); err != nil {
		t.Skip("cmd/mpquic-client does not exist yet (multipath session in progress)")
	}
	// TODO(session): build both, then fill in their flags, for example:
	//   build(t, e.bin, "mpquic-server", "mpquic-client")
	//   res, err := runDownload(t, e,
	//       filepath.Join(e.bin, "mpquic-server"), []string{"-dir", e.dataDir, "-addr", netem.ServerAddr + ":4443", "-scheduler", scheduler},
	//       filepath.Join(e.bin, "mpquic-client"), []string{"-addr", netem.ServerAddr + ":4443", "-file", "payload", "-o", "/dev/null",
	//           "-local", netem.ClientAddr(1) + "," + netem.ClientAddr(2), "-scheduler", scheduler, "-scenario", e.spec.Name,
	//           "-capacity-bps", fmt.Sprint(e.spec.CapacityDownBps())})
	//   then apply the same checks as for kernel MPTCP (SHA-256, both paths used,
	//   goodput ≥ 95% of the faster path for minRTT).
	t.Skipf("cmd/mpquic-* exist but the %s download is not wired yet: fill in multipathQUIC", scheduler)
}

// runDownload starts serverBin with serverArgs in the server namespace, waits
// 300 ms, runs clientBin with clientArgs in the client namespace and decodes
// the metrics.Result JSON line the client prints last on stdout. The server
// is stopped afterwards (and by Down in any case).
func runDownload(t *testing.T, e *env, serverBin string, serverArgs []string, clientBin string, clientArgs []string) (metrics.Result, error) {
	t.Helper()
	srv := exec.Command("ip", append([]string{"netns", "exec", e.spec.ServerNS(), serverBin}, serverArgs...)...)
	var srvLog strings.Builder
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	if err := srv.Start(); err != nil {
		return metrics.Result{}, err
	}
	defer func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		t.Logf("server log:\n%s", srvLog.String())
	}()
	time.Sleep(300 * time.Millisecond)
	cl := exec.Command("ip", append([]string{"netns", "exec", e.spec.ClientNS(), clientBin}, clientArgs...)...)
	var stderr strings.Builder
	cl.Stderr = &stderr
	out, err := cl.Output()
	var res metrics.Result
	var last string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "{") {
			last = l
		}
	}
	if last == "" {
		return res, fmt.Errorf("client printed no result (err %v): stdout %q stderr %q", err, out, stderr.String())
	}
	if jerr := json.Unmarshal([]byte(last), &res); jerr != nil {
		return res, fmt.Errorf("client result %q: %v", last, jerr)
	}
	t.Logf("client result: %s", last)
	if err != nil {
		return res, fmt.Errorf("client failed: %v: %s (stderr %q)", err, res.Error, stderr.String())
	}
	return res, nil
}
