package netns

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/netem"
)

// The outage of TestOutageRecoveryVsMPTCP: path 1 (the faster) goes down
// outageDownAt after the client starts, for outageLength.
const (
	outageFile    = "payload60"
	outageSize    = 40 << 20 // bytes: 40 MiB outlasts the outage by about 6 s at full rate
	outageDownAt  = 2 * time.Second
	outageLength  = 10 * time.Second
	outageRounds  = 2                      // alternating runs of each
	outagePreRate = 2 * time.Second        // path 1's pre-outage rate is taken over this, before the outage
	dataBackBytes = 15000                  // "carries data again": 10 full-size packets received since the return
	recoveryWin   = 200 * time.Millisecond // recovery: half the pre-outage rate over this (as pkg/bench's recovery_s)
	maxDataBack   = 3 * time.Second        // multipath QUIC must carry data on path 1 again within this
)

// outageRun is one download through the outage.
type outageRun struct {
	kind             string // kernel-mptcp, mpquic-minrtt (fixed -paths) or mpquic-auto (-paths auto)
	res              metrics.Result
	err              error
	log              string    // the client's stderr (multipath QUIC: its -v log)
	start, down, end time.Time // client start, link down, download returned (wall clock)
	back             time.Time // link and routes back up
}

// TestOutageRecoveryVsMPTCP is issue 11's "mpq-netns 2-path topology with
// path 1 down for 10 s mid-download: recovery time and goodput beside
// kernel MPTCP on the same run".
//
// Topology: twoPath (20 Mbit/s/10 ms + 10 Mbit/s/30 ms, lossless, reno in
// the end namespaces). A 40 MiB download, outageRounds rounds of three
// alternating clients: kernel MPTCP; multipath QUIC with minRTT on fixed
// paths (-paths with c1's and c2's addresses: the session's own failure
// detection and rejoin); and multipath QUIC with -paths auto (the path
// manager removes path 1 when its interface goes down and joins it again
// when it comes back). 2 s after the client starts, path 1's client
// interface goes down (`mpq-netns set-path 1 down`: its routes go with it
// and sends on it fail) and 10 s later comes back with its routes.
//
// For each run: goodput, SHA-256, the longest stall of in-order delivery
// (max_stall_s of both clients: the longest wait for new bytes from the
// request to the last byte), and, from path 1's receive counter in the
// client namespace (sampled every 10 ms; rxtrace_test.go), how long after
// the link's return path 1 carries data again (15 kB received since the
// return) and has recovered (the end of the first 200 ms window from the
// return on in which it receives half its rate of the 2 s before the
// outage; pkg/bench's recovery_s is that window's start). Multipath
// QUIC's -v log also gives the time of its rejoin (or the path manager's
// join). Asserted: sanity only (complete and verified, the outage inside
// the download, path 1 in use before it, multipath QUIC's data on path 1
// within 3 s of its return); the figures are logged.
//
//	MPQ_NETNS=1 go test -count=1 -v -run TestOutageRecoveryVsMPTCP ./test/netns/
func TestOutageRecoveryVsMPTCP(t *testing.T) {
	requireNetns(t)
	bin, data, certDir := prepare(t)
	if out, err := exec.Command(filepath.Join(bin, "mptcp-baseline"), "mkfile", "-o", filepath.Join(data, outageFile), "-size", fmt.Sprint(outageSize)).CombinedOutput(); err != nil {
		t.Fatalf("mkfile: %v %s", err, out)
	}
	s := twoPath("outage", 0)
	s.Prefix = "mpqho" // apart from the other tests' topologies
	e := up(t, s, bin, data, certDir)
	e.file = outageFile
	e.verify(t)
	if err := netem.MPTCPSetup(e.spec, e.opts); err != nil {
		t.Fatal(err)
	}
	smp := startRxSampler(t, e.spec.ClientNS(), []string{netem.ClientDev(1), netem.ClientDev(2)})

	var runs []*outageRun
	for r := 0; r < outageRounds; r++ {
		for _, kind := range []string{"kernel-mptcp", "mpquic-minrtt", "mpquic-auto"} {
			o := &outageRun{kind: kind}
			during := func(start time.Time) {
				o.start = start
				time.Sleep(time.Until(o.start.Add(outageDownAt)))
				o.down = time.Now()
				if err := netem.SetPath(e.spec, e.opts, 1, false); err != nil {
					t.Errorf("set-path 1 down: %v", err)
				}
				time.Sleep(time.Until(o.down.Add(outageLength)))
				if err := netem.SetPath(e.spec, e.opts, 1, true); err != nil {
					t.Errorf("set-path 1 up: %v", err)
				}
				o.back = time.Now()
			}
			now := func() { during(time.Now()) }
			switch kind {
			case "kernel-mptcp":
				o.res, o.err = e.kernelMPTCPDuring(t, now)
			case "mpquic-minrtt":
				o.res, o.log, o.err = e.multipathQUICOut(t, "minrtt", now)
			default:
				o.res, o.log, o.err = e.autoDownload(t, during)
			}
			o.end = time.Now()
			runs = append(runs, o)
			if t.Failed() { // the topology may be broken (path 1 left down)
				break
			}
		}
	}
	tr, err := smp.Stop()
	if err != nil {
		t.Fatalf("sampling the client's interfaces: %v", err)
	}

	var lines []string
	for i, o := range runs {
		lines = append(lines, judgeOutageRun(t, i+1, o, tr))
	}
	t.Logf("OUTAGE (40 MiB over 20+10 Mbit/s, path 1 down %v from %v after the client's start):\n%s",
		outageLength, outageDownAt, strings.Join(lines, "\n"))
}

// rejoinLog matches the -v log line (after its time stamp) of path 1
// joined again after an outage: by the session (fixed -paths) or by the
// path manager (-paths auto).
const rejoinLog = `(?:session [0-9a-f]+: path \d+ back after an outage|pathmgr: joined path \d+ on c1 )`

// pathGoneRe matches the session's -v log line of a path it removed
// because its connection ended (a send error, a timeout).
var pathGoneRe = regexp.MustCompile(`session [0-9a-f]+: path \d+ gone: [^\n]*`)

// firstLogAfter returns the time of the first -v log line in log matching
// re that was written at or after from (see logTime).
func firstLogAfter(t *testing.T, log, re string, from time.Time) (time.Time, bool) {
	t.Helper()
	for _, l := range regexp.MustCompile(`\d\d:\d\d:\d\d\.\d{6} `+re).FindAllString(log, -1) {
		if at := logTime(t, l, re, from); !at.Before(from) {
			return at, true
		}
	}
	return time.Time{}, false
}

// judgeOutageRun checks run n and returns its summary line.
func judgeOutageRun(t *testing.T, n int, o *outageRun, tr *rxTrace) string {
	t.Helper()
	r := o.res
	if o.err != nil {
		t.Errorf("run %d %s: %v", n, o.kind, o.err)
	}
	if !r.SHA256OK || r.Bytes != outageSize {
		t.Errorf("run %d %s: incomplete or corrupt: %d of %d B, sha256_ok %v", n, o.kind, r.Bytes, outageSize, r.SHA256OK)
	}
	if o.back.IsZero() || o.end.Before(o.back.Add(time.Second)) {
		t.Errorf("run %d %s: the download ended less than 1 s after path 1 came back: nothing tested", n, o.kind)
		return fmt.Sprintf("run %d %-13s ended before the outage did", n, o.kind)
	}
	if r.MaxStallSec <= 0 || r.MaxStallSec > r.FCTSeconds {
		t.Errorf("run %d %s: max_stall_s %.3f, want in (0, FCT %.2f]", n, o.kind, r.MaxStallSec, r.FCTSeconds)
	}
	pre := tr.rate(0, o.down.Add(-outagePreRate), o.down)
	if pre < 2e6 {
		t.Errorf("run %d %s: path 1 received %.2f Mbit/s before the outage: not in use, nothing to recover", n, o.kind, pre/1e6)
	}
	during := tr.rate(1, o.down, o.back)
	after := tr.bytesAt(0, o.end) - tr.bytesAt(0, o.back)
	back, okBack := tr.firstBytes(0, o.back, o.end, dataBackBytes)
	rec, okRec := tr.firstWindow(0, o.back, o.end, recoveryWin, uint64(pre/2/8*recoveryWin.Seconds()))
	rec += recoveryWin // by the window's end: recovered no earlier than data came
	if o.kind != "kernel-mptcp" && (!okBack || back > maxDataBack) {
		why := ""
		if m := pathGoneRe.FindStringSubmatch(o.log); m != nil {
			why = "; the client's log: " + m[0]
		}
		t.Errorf("run %d %s: path 1 carries data again %s after its return, want within %v%s", n, o.kind, dur(back, okBack), maxDataBack, why)
	}
	rejoin := "-"
	if at, ok := firstLogAfter(t, o.log, rejoinLog, o.down); ok {
		rejoin = fmt.Sprintf("%.0f ms", at.Sub(o.back).Seconds()*1e3)
	}
	line := fmt.Sprintf("run %d %-13s goodput %5.2f Mbit/s, FCT %5.2f s, sha256_ok %v, max stall %4.0f ms; path 1 before %5.2f Mbit/s, path 2 during %5.2f Mbit/s; path 1 after its return: data %s, half rate by %s, rejoin %s, %.1f MB on it",
		n, o.kind, r.GoodputBps/1e6, r.FCTSeconds, r.SHA256OK, r.MaxStallSec*1e3, pre/1e6, during/1e6, dur(back, okBack), dur(rec, okRec), rejoin, float64(after)/1e6)
	t.Logf("RESULT %s", line)
	return line
}

// dur formats a recovery delay, or "never" if there was none.
func dur(d time.Duration, ok bool) string {
	if !ok {
		return "never"
	}
	return fmt.Sprintf("%.0f ms", d.Seconds()*1e3)
}
