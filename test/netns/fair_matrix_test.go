package netns

import (
	"flag"
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

// The fairness matrix of issue 23: each flow against one TCP reno
// competitor through one drop-tail bottleneck (fair_topo_test.go), over
// start order × queue × RTT × scheduling class × paths.
//
// Durations, chosen so that one full pass takes under 2 hours on the
// shared 2-core machine: each run downloads fairSize per flow, the second
// flow fairStagger after the first; the measurement window runs from
// fairWarmup after the second start until the first flow ends (at most
// fairMaxWindow). Two 12 MiB downloads fill the 20 Mbit/s bottleneck for
// about 11 s, so a run takes about 12 s and its window 4-7 s. The flows
// whose figure cannot depend on the paths axis (TCP, plain quic-go: one
// path) run once per bottleneck cell, not once per path count. 20 Mbit/s
// is the rate: user-space QUIC fills it on one core at niceness 0
// when the machine is quiet (18.4-18.9 Mbit/s alone, measured).
const (
	fairFile      = "fair12"
	fairSize      = 12 << 20
	fairStagger   = 2 * time.Second
	fairWarmup    = time.Second
	fairMaxWindow = 12 * time.Second
	fairMinWindow = 2500 * time.Millisecond
)

// Session servers: one mpquic-server per coupling mode, each on its own
// port; the first also serves plain quic-go (-h3-addr).
const (
	fairSessionPort0 = 4443
	fairH3Port       = "4444"
)

// fairCell is one bottleneck condition.
type fairCell struct {
	queue float64 // drop-tail queue, BDPs of the competitor's path (fairBDPBytes)
	rttX  int     // the flow's RTT over the competitor's: 1 or 3, or fairRTTMixed
	class string  // "normal" (SCHED_OTHER, niceness 0) or "rt" (chrt -r 10, niceness -10)
}

// fairRTTMixed is the rttX of the issue's own topology (MPQ_FAIR_RTTS=mixed):
// the flow's first path at the competitor's RTT (20 ms), its second at 3×
// (60 ms). One-path flows run on the first, so they measure what they
// measure at rttX 1; only the two-path flows differ.
const fairRTTMixed = 0

func (c fairCell) String() string {
	if c.rttX == fairRTTMixed {
		return fmt.Sprintf("%s q%g rttmixed", c.class, c.queue)
	}
	return fmt.Sprintf("%s q%g rtt%dx", c.class, c.queue, c.rttX)
}

// rttLabel is the flow's RTT in reports: "20 ms", "60 ms", or "20+60 ms".
func (c fairCell) rttLabel() string {
	if c.rttX == fairRTTMixed {
		return fmt.Sprintf("%d+%d ms", fairCompRTTms, 3*fairCompRTTms)
	}
	return fmt.Sprintf("%d ms", fairCompRTTms*c.rttX)
}

// fairFlow is one kind of flow under test.
type fairFlow struct {
	kind     string // "tcp", "quic" (plain quic-go, h3-get), "mptcp" or "session"
	coupling string // session: -coupling (none, lia, olia, balia)
	rf       bool   // session: -reno-friendly
	paths    int    // 1 or 2
}

// name is the flow's label in reports: tcp, quic-go, mptcp/2, olia-rf/1, …
func (f fairFlow) name() string {
	switch f.kind {
	case "tcp":
		return "tcp"
	case "quic":
		return "quic-go"
	}
	n := f.kind
	if f.kind == "session" {
		n = f.mode()
	}
	return fmt.Sprintf("%s/%d", n, f.paths)
}

// mode is a session flow's coupling mode: none, olia, olia-rf, …
func (f fairFlow) mode() string {
	m := f.coupling
	if m == "" {
		m = "none"
	}
	if f.rf {
		m += "-rf"
	}
	return m
}

// flags are the session's -coupling and -reno-friendly flags.
func (f fairFlow) flags() []string {
	var fl []string
	if f.coupling != "" && f.coupling != "none" {
		fl = append(fl, "-coupling", f.coupling)
	}
	if f.rf {
		fl = append(fl, "-reno-friendly")
	}
	return fl
}

// fairModes are the session's coupling modes the matrix runs: uncoupled,
// OLIA, and OLIA with the TCP-friendly mode (the target);
// MPQ_FAIR_MODES (e.g. "none,olia,olia-rf,lia-rf,balia-rf") overrides.
func fairModes(t *testing.T) []fairFlow {
	t.Helper()
	s := os.Getenv("MPQ_FAIR_MODES")
	if s == "" {
		s = "none,olia,olia-rf"
	}
	var out []fairFlow
	for _, m := range strings.Split(s, ",") {
		base, rf := strings.CutSuffix(strings.TrimSpace(m), "-rf")
		switch base {
		case "none", "lia", "olia", "balia":
		default:
			t.Fatalf("MPQ_FAIR_MODES: unknown mode %q (want none, lia, olia, balia, each optionally -rf)", m)
		}
		out = append(out, fairFlow{kind: "session", coupling: base, rf: rf})
	}
	return out
}

// fairFlows are the flows of a cell: TCP and plain quic-go once, then per
// path count kernel MPTCP and every session mode.
func fairFlows(modes []fairFlow, paths []int) []fairFlow {
	fs := []fairFlow{{kind: "tcp", paths: 1}, {kind: "quic", paths: 1}}
	for _, n := range paths {
		fs = append(fs, fairFlow{kind: "mptcp", paths: n})
		for _, m := range modes {
			m.paths = n
			fs = append(fs, m)
		}
	}
	return fs
}

// fairRun is one run of a flow against the competitor.
type fairRun struct {
	cell      fairCell
	flow      fairFlow
	oursFirst bool
	n         int // run number in the matrix, from 1

	ours, comp         metrics.Result
	oursErr, compErr   error
	oursStart, oursEnd time.Time
	compStart, compEnd time.Time
	from, to           time.Time // the measurement window
	oursBps, compBps   float64   // L2 bits/s received in the window
	idle               float64   // the machine's idle CPU fraction just before the run
	idleWaited         time.Duration
	load               string // 1-minute load average after the run

	diag fairDiag
}

// ratio is ours/competitor in the window.
func (r *fairRun) ratio() float64 {
	if r.compBps == 0 {
		return 0
	}
	return r.oursBps / r.compBps
}

// fairMatrix is a matrix's extent; envFairMatrix reads it.
type fairMatrix struct {
	queues  []float64
	rtts    []int
	classes []string
	paths   []int
	flows   []string // flow names to run; empty: all
	runs    int      // per flow and cell, alternating the start order
}

// envFairMatrix reads MPQ_FAIR_QUEUES, _RTTS, _CLASSES, _PATHS, _FLOWS
// and _RUNS over the defaults in def.
func envFairMatrix(t *testing.T, def fairMatrix) fairMatrix {
	t.Helper()
	m := def
	list := func(k string) []string {
		if v := os.Getenv(k); v != "" {
			return strings.Split(v, ",")
		}
		return nil
	}
	if v := list("MPQ_FAIR_QUEUES"); v != nil {
		m.queues = nil
		for _, s := range v {
			q, err := strconv.ParseFloat(s, 64)
			if err != nil || q <= 0 || q > 20 {
				t.Fatalf("MPQ_FAIR_QUEUES: %q", s)
			}
			m.queues = append(m.queues, q)
		}
	}
	if v := list("MPQ_FAIR_RTTS"); v != nil {
		m.rtts = nil
		for _, s := range v {
			if s == "mixed" {
				m.rtts = append(m.rtts, fairRTTMixed)
				continue
			}
			if s != "1" && s != "3" {
				t.Fatalf("MPQ_FAIR_RTTS: %q, want 1, 3 or mixed", s)
			}
			x, _ := strconv.Atoi(s)
			m.rtts = append(m.rtts, x)
		}
	}
	if v := list("MPQ_FAIR_CLASSES"); v != nil {
		for _, s := range v {
			if s != "normal" && s != "rt" {
				t.Fatalf("MPQ_FAIR_CLASSES: %q, want normal or rt", s)
			}
		}
		m.classes = v
	}
	if v := list("MPQ_FAIR_PATHS"); v != nil {
		m.paths = nil
		for _, s := range v {
			if s != "1" && s != "2" {
				t.Fatalf("MPQ_FAIR_PATHS: %q, want 1 or 2", s)
			}
			x, _ := strconv.Atoi(s)
			m.paths = append(m.paths, x)
		}
	}
	if v := list("MPQ_FAIR_FLOWS"); v != nil {
		m.flows = v
	}
	if v := os.Getenv("MPQ_FAIR_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 50 {
			t.Fatalf("MPQ_FAIR_RUNS=%q: want 1..50", v)
		}
		m.runs = n
	}
	return m
}

// requireMatrix skips TestFairnessMatrix unless asked for: about 2 hours.
func requireMatrix(t *testing.T) {
	t.Helper()
	if os.Getenv("MPQ_FAIR_MATRIX") == "1" {
		return
	}
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "FairnessMatrix") {
		return
	}
	t.Skip("about 2 hours: run with -run FairnessMatrix (or MPQ_FAIR_MATRIX=1), as root: make fairness-matrix")
}

// TestFairnessMatrix is issue 23's matrix (make fairness-matrix): every
// flow against the same TCP reno competitor over start order (competitor
// first, flow first) × queue (0.5, 1, 2.5 BDP of the competitor's 20 ms
// path, drop-tail) × the flow's RTT (20 ms, the competitor's, and 60 ms;
// MPQ_FAIR_RTTS=mixed adds the issue's own pair, 20 and 60 ms)
// × scheduling class (normal on a quiet machine, real-time) × paths (1,
// 2), fairMatrix.runs runs per flow and cell, alternating the order. The
// flows: TCP reno, plain quic-go (one path), and per path count kernel
// MPTCP (reno) and the session (minRTT) in each coupling mode. Each run
// records, per flow, the loss at the queue, window reductions, the share
// of time in slow start, bursts (pacing) and ACK frequency
// (fair_diag_test.go). Normal-class runs wait for the machine to be
// quiet (fairIdleGate). It writes MPQ_FAIR_OUT (default
// results/fairness-matrix)/report.md and runs.jsonl.
//
// Asserted: the sanity checks of every run (fairCheckRun). The issue's
// target is reported per cell in the report, not asserted here:
// TestFairnessCI asserts it on a subset.
//
//	MPQ_NETNS=1 go test -count=1 -v -timeout 4h -run TestFairnessMatrix ./test/netns/
func TestFairnessMatrix(t *testing.T) {
	requireNetns(t)
	requireMatrix(t)
	m := envFairMatrix(t, fairMatrix{
		queues:  []float64{0.5, 1, 2.5},
		rtts:    []int{1, 3},
		classes: []string{"rt", "normal"},
		paths:   []int{1, 2},
		runs:    4,
	})
	runFairMatrix(t, m, nil)
}

// TestFairnessReport makes the report again from a matrix's runs.jsonl
// (MPQ_FAIR_IN), into MPQ_FAIR_OUT (default: again/ beside the input): to
// change the report without running the matrix again, or to report a
// matrix run in parts. No root needed.
//
//	MPQ_FAIR_IN=results/fairness-matrix/runs.jsonl go test -count=1 -run TestFairnessReport ./test/netns/
func TestFairnessReport(t *testing.T) {
	in := os.Getenv("MPQ_FAIR_IN")
	if in == "" {
		t.Skip("set MPQ_FAIR_IN to a matrix's runs.jsonl (several, comma-separated, are merged)")
	}
	var recs []fairRec
	for _, f := range strings.Split(in, ",") {
		rs, err := readFairRecs(f)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rs...)
	}
	out := os.Getenv("MPQ_FAIR_OUT")
	if out == "" {
		out = filepath.Join(filepath.Dir(strings.Split(in, ",")[0]), "again")
	}
	runs := 0
	for _, cf := range groupFair(recs) {
		runs = max(runs, cf.order[0].n+cf.order[1].n)
	}
	rep := fairReport(recs, runs, "Made again from "+in+".")
	if err := writeFairOut(out, rep, recs); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\nreport: %s", rep, filepath.Join(out, "report.md"))
}

// runFairMatrix builds the topology, runs m, reports, and hands the runs
// to judge (if not nil).
func runFairMatrix(t *testing.T, m fairMatrix, judge func(*testing.T, []fairRec)) {
	t.Helper()
	modes := fairModes(t)
	flows := fairFlows(modes, m.paths)
	if m.flows != nil {
		flows = slices.DeleteFunc(flows, func(f fairFlow) bool { return !slices.Contains(m.flows, f.name()) })
	}
	if len(flows) == 0 {
		t.Fatal("no flows selected")
	}
	out := fairOutDir(t)
	bin, data, certDir := prepare(t)
	fairDataFile(t, bin, data)
	fe := upFair(t, bin, data, certDir)
	fe.verify(t)
	fe.qlogRoot = t.TempDir()
	fe.capDir = t.TempDir()
	fe.modes = modes
	start, load0 := time.Now(), loadAvg()
	var runs []*fairRun
	n := 0
	for _, class := range m.classes {
		stop := fe.startClass(t, class)
		for _, q := range m.queues {
			fe.setQueue(t, q)
			for _, x := range m.rtts {
				cell := fairCell{queue: q, rttX: x, class: class}
				for i := 0; i < m.runs; i++ {
					for _, f := range flows {
						n++
						r := fe.runFair(t, cell, f, i%2 == 1, n)
						runs = append(runs, r)
						t.Logf("RUN %s", fairRunLine(r))
					}
				}
			}
		}
		stop()
	}
	elapsed := time.Since(start)
	recs := make([]fairRec, len(runs))
	for i, r := range runs {
		recs[i] = recOf(r)
	}
	rep := fairReport(recs, m.runs, fmt.Sprintf("Source: %s. Queue limited in %s. %v in all; load average at the start %s, at the end %s; normal-class runs waited %v in all for a quiet machine.",
		fairSource(), fairQueueMode(), elapsed.Round(time.Second), load0, loadAvg(), fe.idleWaited.Round(time.Second)))
	t.Logf("FAIRNESS MATRIX (%v):\n%s", elapsed.Round(time.Second), rep)
	if err := writeFairOut(out, rep, recs); err != nil {
		t.Errorf("writing %s: %v", out, err)
	} else {
		t.Logf("report: %s", filepath.Join(out, "report.md"))
	}
	if judge != nil && !t.Failed() {
		judge(t, recs)
	}
}

// fairOutDir is MPQ_FAIR_OUT, or results/fairness-matrix at the module
// root.
func fairOutDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("MPQ_FAIR_OUT"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..", "results", "fairness-matrix")
}

// startClass starts the servers of every flow in scheduling class class:
// the TCP servers of the flow under test and of the competitor, and one
// session server per mode (the first also plain quic-go's). The test
// process itself (the interface and socket samplers) runs in the rt
// class for the rt cells, as the flows do, and in the normal class
// otherwise (children inherit the parent's policy).
func (fe *fairEnv) startClass(t *testing.T, class string) (stop func()) {
	t.Helper()
	pid := strconv.Itoa(os.Getpid())
	if class == "rt" {
		t.Setenv("MPQ_RT", "10")
		t.Setenv("MPQ_NICE", "-10")
		if out, err := exec.Command("chrt", "-a", "-r", "-p", "10", pid).CombinedOutput(); err != nil {
			t.Fatalf("chrt: %v %s", err, out)
		}
	} else {
		t.Setenv("MPQ_RT", "0")
		t.Setenv("MPQ_NICE", "0")
		if out, err := exec.Command("chrt", "-a", "-o", "-p", "0", pid).CombinedOutput(); err != nil {
			t.Fatalf("chrt: %v %s", err, out)
		}
	}
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
		_ = exec.Command("chrt", "-a", "-o", "-p", "0", pid).Run()
	}
	bl := filepath.Join(fe.bin, "mptcp-baseline")
	for _, s := range []struct{ ns, addr string }{{fe.spec.ServerNS(), fairServerAddr}, {fairComp, fairCompAddr}} {
		stop, _, err := startIn(t, s.ns, bl, []string{"serve", "-dir", fe.dataDir, "-addr", s.addr + ":" + fairTCPPort})
		if err != nil {
			stopAll()
			t.Fatal(err)
		}
		stops = append(stops, stop)
	}
	fe.sessionPorts = map[string]int{}
	for i, m := range fe.modes {
		port := fairSessionPort0 + 2*i
		if i > 0 {
			port++ // 4444 is plain quic-go's
		}
		qdir := filepath.Join(fe.qlogRoot, m.mode())
		if err := os.MkdirAll(qdir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := []string{"-dir", fe.dataDir, "-addr", fmt.Sprintf("%s:%d", fairServerAddr, port), "-scheduler", "minrtt",
			"-cert", filepath.Join(fe.certDir, "cert.pem"), "-key", filepath.Join(fe.certDir, "key.pem"), "-name", certName}
		qlogOn := os.Getenv("MPQ_FAIR_QLOG") != "0"
		if qlogOn {
			args = append(args, "-qlog", qdir)
		}
		if i == 0 {
			args = append(args, "-h3-addr", fairServerAddr+":"+fairH3Port)
			if qlogOn { // plain quic-go's qlogs (qlog.DefaultConnectionTracer)
				os.Setenv("QLOGDIR", filepath.Join(fe.qlogRoot, "quic-go"))
			}
		}
		if seg := os.Getenv("MPQ_FAIR_SEGMENT"); seg != "" { // an investigation knob: the session's segment size
			args = append(args, "-segment-size", seg)
		}
		args = append(args, m.flags()...)
		stop, log, err := startIn(t, fe.spec.ServerNS(), filepath.Join(fe.bin, "mpquic-server"), args)
		os.Unsetenv("QLOGDIR")
		if err != nil {
			stopAll()
			t.Fatal(err)
		}
		stops = append(stops, stop)
		want := fmt.Sprintf("coupling %s, reno-friendly %v", cmpOr(m.coupling, "none"), m.rf)
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), "serving"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				stopAll()
				t.Fatalf("%s: mpquic-server did not start: %s", m.mode(), log.String())
			}
		}
		if !strings.Contains(log.String(), want) {
			stopAll()
			t.Fatalf("%s: the server's log lacks %q: %s", m.mode(), want, log.String())
		}
		fe.sessionPorts[m.mode()] = port
	}
	time.Sleep(300 * time.Millisecond)
	return stopAll
}

// fairSource names the code measured: the commit, and "+ changes" if the
// worktree differs from it.
func fairSource() string {
	rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown commit"
	}
	s := "commit " + strings.TrimSpace(string(rev))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		s += " + uncommitted changes"
	}
	return s
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runFair runs flow f against the competitor once in cell c.
func (fe *fairEnv) runFair(t *testing.T, c fairCell, f fairFlow, oursFirst bool, n int) *fairRun {
	t.Helper()
	r := &fairRun{cell: c, flow: f, oursFirst: oursFirst, n: n}
	ps := fairPaths(c.rttX)
	paths := ps[:f.paths]
	if f.kind == "mptcp" {
		fe.mptcpPaths(t, paths)
	}
	r.idle, r.idleWaited = fairIdleGate(c.class, &fe.idleWaited)
	var devs []string
	for p := 1; p <= 5; p++ {
		devs = append(devs, netem.ClientDev(p))
	}
	smp := startRxSampler(t, fe.spec.ClientNS(), devs)
	dg := fe.startDiag(t, n)
	ours := func(done chan<- struct{}) {
		defer close(done)
		r.oursStart = time.Now()
		r.ours, r.oursErr = fe.fairFlowRun(t, f, paths)
		r.oursEnd = time.Now()
	}
	comp := func(done chan<- struct{}) {
		defer close(done)
		r.compStart = time.Now()
		r.comp, r.compErr = fe.fairTCP(t, fairCompPath, fairCompAddr, nil)
		r.compEnd = time.Now()
	}
	first, second := comp, ours
	if oursFirst {
		first, second = ours, comp
	}
	d1, d2 := make(chan struct{}), make(chan struct{})
	go first(d1)
	time.Sleep(fairStagger)
	go second(d2)
	<-d1
	<-d2
	time.Sleep(200 * time.Millisecond) // the queue and the paths drain
	tr, err := smp.Stop()
	if err != nil {
		t.Errorf("run %d: sampling the client's interfaces: %v", n, err)
	}
	secondStart := r.compStart
	if oursFirst {
		secondStart = r.oursStart
	}
	r.from = secondStart.Add(fairWarmup)
	r.to = secondStart.Add(fairMaxWindow)
	for _, end := range []time.Time{r.oursEnd, r.compEnd} {
		if end.Before(r.to) {
			r.to = end
		}
	}
	if r.to.After(r.from) {
		for _, p := range paths {
			r.oursBps += tr.rate(p-1, r.from, r.to)
		}
		r.compBps = tr.rate(fairCompPath-1, r.from, r.to)
	}
	fe.finishDiag(t, dg, r, paths)
	r.load = loadAvg()
	fairCheckRun(t, r)
	return r
}

// fairFlowRun downloads fairFile as flow f on paths.
func (fe *fairEnv) fairFlowRun(t *testing.T, f fairFlow, paths []int) (metrics.Result, error) {
	t.Helper()
	var addrs []string
	for _, p := range paths {
		addrs = append(addrs, netem.ClientAddr(p))
	}
	ca := filepath.Join(fe.certDir, "cert.pem")
	switch f.kind {
	case "tcp":
		return fe.fairTCP(t, paths[0], fairServerAddr, nil)
	case "mptcp":
		res, _, err := clientIn(t, fe.spec.ClientNS(), filepath.Join(fe.bin, "mptcp-baseline"),
			[]string{"get", "-bind", addrs[0], "-addr", fairServerAddr + ":" + fairTCPPort, "-file", fairFile, "-o", "/dev/null",
				"-scenario", fe.spec.Name, "-path-addrs", strings.Join(addrs, ","), "-require-subflows", strconv.Itoa(len(paths))}, nil)
		return res, err
	case "quic":
		res, _, err := clientIn(t, fe.spec.ClientNS(), filepath.Join(fe.bin, "mpquic-client"),
			[]string{"-h3-addr", fairServerAddr + ":" + fairH3Port, "-ca", ca, "-server-name", certName,
				"-paths", addrs[0], "-scenario", fe.spec.Name, "-timeout", "2m", "-q", "h3-get", "/" + fairFile, "-o", "/dev/null"}, nil)
		return res, err
	}
	args := append(f.flags(), "-addr", fmt.Sprintf("%s:%d", fairServerAddr, fe.sessionPorts[f.mode()]), "-ca", ca, "-server-name", certName,
		"-paths", strings.Join(addrs, ","), "-scheduler", "minrtt", "-scenario", fe.spec.Name,
		"-timeout", "2m", "-q", "get", fairFile, "-o", "/dev/null")
	res, _, err := clientIn(t, fe.spec.ClientNS(), filepath.Join(fe.bin, "mpquic-client"), args, nil)
	return res, err
}

// fairTCP downloads fairFile over plain TCP (the namespace's reno) from
// path p's client address to server addr.
func (fe *fairEnv) fairTCP(t *testing.T, p int, addr string, during func()) (metrics.Result, error) {
	t.Helper()
	res, _, err := clientIn(t, fe.spec.ClientNS(), filepath.Join(fe.bin, "mptcp-baseline"),
		[]string{"get", "-tcp", "-bind", netem.ClientAddr(p), "-addr", addr + ":" + fairTCPPort, "-file", fairFile, "-o", "/dev/null", "-scenario", fe.spec.Name}, during)
	return res, err
}

// fairCheckRun applies the sanity checks of shared_test.go to a run.
func fairCheckRun(t *testing.T, r *fairRun) {
	t.Helper()
	name := fmt.Sprintf("run %d %s %s", r.n, r.cell, r.flow.name())
	for _, f := range []struct {
		who string
		res metrics.Result
		err error
	}{{"flow", r.ours, r.oursErr}, {"competitor", r.comp, r.compErr}} {
		if f.err != nil {
			t.Errorf("%s: %s: %v", name, f.who, f.err)
		}
		if !f.res.SHA256OK || f.res.Bytes != fairSize {
			t.Errorf("%s: %s incomplete or corrupt: %d of %d B, sha256_ok %v", name, f.who, f.res.Bytes, fairSize, f.res.SHA256OK)
		}
	}
	switch r.flow.kind {
	case "mptcp":
		if r.ours.Extra["mptcp"] != 1 || int(r.ours.Extra["subflows"]) < r.flow.paths {
			t.Errorf("%s: not MPTCP on %d subflows: %v", name, r.flow.paths, r.ours.Extra)
		}
	case "session":
		if r.ours.Scheduler != "minrtt" {
			t.Errorf("%s: server scheduled with %q", name, r.ours.Scheduler)
		}
		if len(r.ours.PerPathBytes) < r.flow.paths {
			t.Errorf("%s: %d paths carried data (%v), want %d", name, len(r.ours.PerPathBytes), r.ours.PerPathBytes, r.flow.paths)
		}
	}
	bneck := float64(fairRateMbit) * 1e6
	win := r.to.Sub(r.from)
	switch {
	case win < fairMinWindow:
		t.Errorf("%s: the flows overlapped for %v after the warm-up, want at least %v", name, win, fairMinWindow)
	case r.oursBps < minFlowShare*bneck || r.compBps < minFlowShare*bneck:
		t.Errorf("%s: a flow moved almost nothing in the window: %.2f and %.2f Mbit/s", name, r.oursBps/1e6, r.compBps/1e6)
	case r.oursBps+r.compBps < minFill*bneck || r.oursBps+r.compBps > maxFill*bneck:
		t.Errorf("%s: the two flows received %.2f Mbit/s together, want %.0f-%.0f%% of %.0f Mbit/s", name, (r.oursBps+r.compBps)/1e6, 100*minFill, 100*maxFill, bneck/1e6)
	}
}

// fairRunLine is one run's log line.
func fairRunLine(r *fairRun) string {
	order := "comp first"
	if r.oursFirst {
		order = "ours first"
	}
	d := &r.diag
	return fmt.Sprintf("%3d %-20s %-12s %s: window %4.1f s, flow %5.2f, competitor %5.2f Mbit/s, ratio %5.2f; idle %.0f%% (waited %v), load %s; %s",
		r.n, r.cell, r.flow.name(), order, r.to.Sub(r.from).Seconds(), r.oursBps/1e6, r.compBps/1e6, r.ratio(),
		100*r.idle, r.idleWaited.Round(time.Second), r.load, d.line())
}

// The root CI's part of the matrix (TestFairnessCI): the cell and the
// flows. The cell is the issue's own queue (50 ms at 20 Mbit/s: 2.5 BDP
// of the competitor's 20 ms) at equal RTTs, in the rt class so that the
// runs measure congestion control on a loaded CI machine too.
var (
	fairCICell  = fairCell{queue: 2.5, rttX: 1, class: "rt"}
	fairCIFlows = []string{"tcp", "olia-rf/1", "olia-rf/2"}
)

// fairCIRuns runs per flow, half in each start order.
const fairCIRuns = 6

// The bounds TestFairnessCI asserts on geometric means over both start
// orders (docs/coupling.md, "Fairness matrix against TCP"). They are
// regression guards placed between measured figures, not issue 23's
// target, which the matrix does not show met in this cell in both classes:
//   - fairCICoupledMax: the session coupled (olia, reno-friendly) on 2
//     paths took 1.18 (1.11-1.25) in the rt matrix, 1.46 (1.20-1.71) in
//     the normal one and 1.67 (0.92-1.78) in one TestFairnessCI run (rt,
//     load 7.9). With the session-level window disabled (sessWindow.limit
//     returning quic-go's window) the same test measured 2.98 (2.96-3.92),
//     and uncoupled on the same 2 paths took 3.68 (3.29-4.06) rt and 3.86
//     (3.49-4.21) normal. The bound is about the geometric midpoint of the
//     highest coupled median and the lowest broken one, √(1.67·2.98).
//   - fairCITCPMin/Max: TCP against TCP took 1.05 (0.95-1.14) rt, 1.00
//     (0.82-1.17) normal, 1.04 and 1.17 in two TestFairnessCI runs;
//     outside these bounds the bottleneck is not the symmetric shared
//     drop-tail queue the matrix assumes.
const (
	fairCICoupledMax = 2.2
	fairCITCPMin     = 0.6
	fairCITCPMax     = 1.6
)

// TestFairnessCI is the matrix's subset in the root CI (make netns-test,
// about 4 min): fairCICell with TCP reno and the session with OLIA in the
// TCP-friendly mode on 1 and 2 paths, fairCIRuns runs each.
//
// Asserted, besides every run's sanity checks (both files complete, the
// bottleneck full, a window of at least fairMinWindow): TCP against TCP
// within [fairCITCPMin, fairCITCPMax] (the testbed is the symmetric
// shared queue), and the coupled session on 2 paths at most
// fairCICoupledMax (the coupled window governs both paths). Logged, not
// asserted: issue 23's target (olia-rf ≤ 1.25 and ≤ kernel MPTCP), which
// the matrix shows missed in this very cell in the normal class (1.38 on
// 1 path, 1.46 on 2) and met only narrowly in the rt class (1.18 on 2
// paths, range to 1.25; 1.67 in a TestFairnessCI run), and the 1-path
// figure: coupled it took 0.94-1.38
// (medians, ranges 0.79-1.75), with the session-level window disabled
// 1.90 (1.36-2.02), uncoupled 2.15-2.18, too close for a bound that holds
// on one side and fails on the other.
//
//	MPQ_NETNS=1 go test -count=1 -v -run TestFairnessCI ./test/netns/
func TestFairnessCI(t *testing.T) {
	requireNetns(t)
	t.Setenv("MPQ_FAIR_MODES", "olia-rf")
	m := fairMatrix{queues: []float64{fairCICell.queue}, rtts: []int{fairCICell.rttX}, classes: []string{fairCICell.class}, paths: []int{1, 2}, flows: fairCIFlows, runs: fairCIRuns}
	if os.Getenv("MPQ_FAIR_OUT") == "" {
		t.Setenv("MPQ_FAIR_OUT", t.TempDir())
	}
	runFairMatrix(t, m, func(t *testing.T, recs []fairRec) {
		geo := map[string]float64{}
		for _, cf := range groupFair(recs) {
			g, lo, hi := cf.geo()
			geo[cf.flow] = g
			t.Logf("GEO %s %s: %.2f (%.2f-%.2f)", cf.cell, cf.flow, g, lo, hi)
		}
		for _, f := range fairCIFlows {
			if geo[f] == 0 {
				t.Fatalf("%s: no geometric mean (a start order did not run)", f)
			}
		}
		if g := geo["tcp"]; g < fairCITCPMin || g > fairCITCPMax {
			t.Errorf("TCP against TCP: geometric mean %.2f, want %.1f-%.1f (a symmetric shared queue)", g, fairCITCPMin, fairCITCPMax)
		}
		if g := geo["olia-rf/2"]; g > fairCICoupledMax {
			t.Errorf("olia-rf/2: geometric mean %.2f, want ≤ %.1f (the coupled window governing both paths; uncoupled takes 3.3-4.2, a disabled session-level window 3.0)", g, fairCICoupledMax)
		}
		for _, f := range []string{"olia-rf/1", "olia-rf/2"} {
			t.Logf("TARGET (logged, not asserted) %s: %.2f against issue 23's 1.25", f, geo[f])
		}
	})
}
