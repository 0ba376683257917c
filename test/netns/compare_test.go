package netns

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/netem"
	"github.com/mpqsched/mpqsched/sched"
	_ "github.com/mpqsched/mpqsched/sched/all"
)

// compareRounds is how many alternating runs of kernel MPTCP and of the best
// scheduler the ratio averages.
const compareRounds = 3

// requireCompare skips TestCompare unless asked for: it takes several
// minutes.
func requireCompare(t *testing.T) {
	t.Helper()
	if os.Getenv("MPQ_COMPARE") == "1" {
		return
	}
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "Compare") {
		return
	}
	t.Skip("takes minutes: run with -run Compare (or MPQ_COMPARE=1)")
}

// TestCompare is the closing-note figure: on the two-path topology (20
// Mbit/s/10 ms + 10 Mbit/s/30 ms, reno in both end namespaces), lossless and
// with 0.5% loss, every scheduler downloads the 20 MiB payload once; the
// best one then alternates with kernel MPTCP compareRounds times, and the
// ratio of their mean goodputs is reported (target ≥ 1.0). MPQ_SCHEDULERS
// (comma-separated) narrows the first phase.
//
//	MPQ_NETNS=1 go test -count=1 -v -timeout 30m -run Compare ./test/netns/
func TestCompare(t *testing.T) {
	requireNetns(t)
	requireCompare(t)
	names := sched.Names()
	if v := os.Getenv("MPQ_SCHEDULERS"); v != "" {
		names = strings.Split(v, ",")
	}
	bin, data, certDir := prepare(t)
	var report []string
	for _, lossPct := range []float64{0, 0.5} {
		name := fmt.Sprintf("loss%.1f", lossPct)
		t.Run(name, func(t *testing.T) {
			e := up(t, twoPath(name, lossPct), bin, data, certDir)
			if err := netem.MPTCPSetup(e.spec, e.opts); err != nil {
				t.Fatal(err)
			}
			goodput := map[string]float64{}
			for _, n := range names {
				res, err := e.multipathQUIC(t, n, nil)
				if err != nil || !res.SHA256OK {
					t.Logf("%s: failed: %v %s", n, err, res.Error)
					continue
				}
				goodput[n] = res.GoodputBps
				report = append(report, fmt.Sprintf("%-8s %-13s %6.2f Mbit/s = %5.1f%% of capacity", name, n, res.GoodputBps/1e6, 100*res.GoodputBps/res.CapacityBps))
			}
			if len(goodput) == 0 {
				t.Fatal("every scheduler failed")
			}
			ranked := make([]string, 0, len(goodput))
			for n := range goodput {
				ranked = append(ranked, n)
			}
			sort.Slice(ranked, func(i, j int) bool { return goodput[ranked[i]] > goodput[ranked[j]] })
			best := ranked[0]
			var ours, kernel []metrics.Result
			for r := 0; r < compareRounds; r++ {
				k := e.kernelMPTCP(t)
				kernel = append(kernel, k)
				q, err := e.multipathQUIC(t, best, nil)
				if err != nil {
					t.Fatal(err)
				}
				ours = append(ours, q)
			}
			mk, mq := meanGoodput(kernel), meanGoodput(ours)
			capBps := e.spec.CapacityDownBps()
			line := fmt.Sprintf("%s: best scheduler %s %.2f Mbit/s (%.1f%% of capacity, runs %s) / kernel MPTCP %.2f Mbit/s (%.1f%%, runs %s) = %.3f",
				name, best, mq/1e6, 100*mq/capBps, runs(ours), mk/1e6, 100*mk/capBps, runs(kernel), mq/mk)
			t.Logf("RATIO %s", line)
			report = append(report, "RATIO "+line)
		})
	}
	t.Logf("COMPARE (20 MiB, first phase one run per scheduler):\n%s", strings.Join(report, "\n"))
}

func meanGoodput(rs []metrics.Result) float64 {
	var s float64
	for _, r := range rs {
		s += r.GoodputBps
	}
	return s / float64(len(rs))
}

func runs(rs []metrics.Result) string {
	var f []string
	for _, r := range rs {
		f = append(f, fmt.Sprintf("%.2f", r.GoodputBps/1e6))
	}
	return strings.Join(f, "/")
}
