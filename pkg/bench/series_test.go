package bench

import (
	"context"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	_ "github.com/mpqsched/mpqsched/sched/all"
)

// threePath is the three-path case: 40 Mbit/s with 10 ms RTT,
// 15 Mbit/s with 40 ms and 80 Mbit/s with 25 ms and 0.2% loss, 5 MB.
func threePath() scenario.Scenario {
	l := func(mbps, rttMs, loss float64) scenario.Link {
		return scenario.Link{RateBps: mbps * scenario.Mbps, Delay: scenario.Duration(rttMs / 2 * float64(time.Millisecond)), Loss: loss}
	}
	p := func(name string, mbps, rttMs, loss float64) scenario.PathSpec {
		return scenario.PathSpec{Name: name, Up: l(mbps, rttMs, 0), Down: l(mbps, rttMs, loss)}
	}
	return scenario.Scenario{
		Name:     "three-path-test",
		Paths:    []scenario.PathSpec{p("wifi", 40, 10, 0), p("lte", 15, 40, 0), p("mmwave", 80, 25, 0.002)},
		Bytes:    5 * scenario.MB,
		Duration: scenario.Duration(30 * time.Second),
	}
}

// runScenario runs s with scheduler name and seed in virtual time.
func runScenario(t *testing.T, s scenario.Scenario, name string, seed int64, edit func(*Run)) (metrics.Result, *Detail) {
	t.Helper()
	r, err := FromScenario(s, name, seed)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&r)
	}
	var res metrics.Result
	var det *Detail
	synctest.Test(t, func(t *testing.T) {
		res, det, err = Transfer(context.Background(), r)
	})
	if err != nil {
		t.Fatalf("transfer: %v", err)
	}
	return res, det
}

// checkSeries checks that the recorded series starts at the session's open,
// covers the FCT, and integrates to the bytes delivered.
func checkSeries(t *testing.T, res metrics.Result, det *Detail, step float64) {
	t.Helper()
	ts, gp := res.SeriesTimes, res.GoodputSeries
	if len(ts) == 0 || len(ts) != len(gp) {
		t.Fatalf("series_t_s has %d times, goodput_series_bps %d values", len(ts), len(gp))
	}
	if math.Abs(res.SeriesStepSec-step) > 1e-9 {
		t.Errorf("series_step_s = %v, want %v", res.SeriesStepSec, step)
	}
	// The first interval starts at the open: it ends one step later.
	if math.Abs(ts[0]-step) > 1e-9 {
		t.Errorf("first sample ends at %v s, want one step (%v s) after the open", ts[0], step)
	}
	prev := 0.0
	var bits float64
	for k, tk := range ts {
		el := tk - prev
		if el <= 0 || el > step+1e-9 || (k < len(ts)-1 && math.Abs(el-step) > 1e-9) {
			t.Fatalf("interval %d is (%v, %v] s: want full steps of %v s, the last one at most that", k, prev, tk, step)
		}
		bits += gp[k] * el
		prev = tk
	}
	// The time axis ends at the FCT (same virtual instant).
	if math.Abs(ts[len(ts)-1]-res.FCTSeconds) > 1e-3 {
		t.Errorf("series ends at %v s, FCT %v s", ts[len(ts)-1], res.FCTSeconds)
	}
	delivered := float64(det.Client.DeliveredBytes)
	if delivered < float64(res.Bytes) {
		t.Fatalf("delivered %v bytes, fewer than the %d transferred", delivered, res.Bytes)
	}
	// Every delivered byte is in the series: far tighter than the one
	// interval's worth (up to step·capacity) that a missing last interval
	// would lose.
	if got := bits / 8; math.Abs(got-delivered) > 1e-6*delivered {
		t.Errorf("series integrates to %.0f bytes, %.0f delivered (off by %.0f)", got, delivered, got-delivered)
	}
	if last := det.Series[len(det.Series)-1].Delivered; last != det.Client.DeliveredBytes {
		t.Errorf("last sample has %d bytes delivered, the session %d", last, det.Client.DeliveredBytes)
	}
}

// The goodput series of a real transfer has a time axis from the session's
// open to the FCT and accounts for every byte delivered: on the default
// two-path scenario (shortened) and on a three-path one.
func TestSeriesCoversTransfer(t *testing.T) {
	def, err := scenario.Get(scenario.Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s     scenario.Scenario
		sched string
	}{
		{scenario.Short(def, 4*scenario.MB, 0), "minrtt"},
		{threePath(), "minrtt"},
		{threePath(), "roundrobin"},
	} {
		t.Run(c.s.Name+"/"+c.sched, func(t *testing.T) {
			res, det := runScenario(t, c.s, c.sched, 3, nil)
			checkSeries(t, res, det, 0.1)
			// Nothing is delivered before the first path is up and has
			// carried a request and its answer: 2 RTTs + 1 RTT of path 0.
			first := slices.IndexFunc(res.GoodputSeries, func(g float64) bool { return g > 0 })
			if first < 0 || res.SeriesTimes[first] < 3*c.s.Paths[0].RTT().Seconds() {
				t.Errorf("first delivery in the interval ending at sample %d: before path 0 could carry data", first)
			}
			if !slices.Equal(res.PathNames, names(c.s)) {
				t.Errorf("path_names = %q, want %q", res.PathNames, names(c.s))
			}
			if len(res.PerPathBytes) != len(c.s.Paths) {
				t.Errorf("per_path_bytes %v: want one entry per path", res.PerPathBytes)
			}
			// The recorded bound is the scenario's, and it holds.
			rs, _ := c.s.Resolve(3)
			if want := rs.FCTLowerBound().Seconds(); res.FCTLowerBoundSec != want || want <= 0 {
				t.Errorf("fct_lower_bound_s = %v, want the scenario's %v", res.FCTLowerBoundSec, want)
			}
			if res.FCTSeconds < res.FCTLowerBoundSec {
				t.Errorf("FCT %v s below the lower bound %v s", res.FCTSeconds, res.FCTLowerBoundSec)
			}
			if len(res.CapacityTimes) < 2 || res.CapacitySeries[0] != rs.CapacityBps() {
				t.Errorf("capacity curve %v %v, want it to start at %v", res.CapacityTimes, res.CapacitySeries, rs.CapacityBps())
			}
			t.Logf("FCT %.3f s (bound %.3f s), %d samples", res.FCTSeconds, res.FCTLowerBoundSec, len(res.SeriesTimes))
		})
	}
}

func names(s scenario.Scenario) []string {
	var out []string
	for _, p := range s.Paths {
		out = append(out, p.Name)
	}
	return out
}

// A series that reaches its bound (2^20 samples, here with a 1 µs step over
// about 1.5 s) is compacted, not wiped: pairs merge, the step doubles, and
// the series still accounts for every byte.
func TestSeriesCompactsInsteadOfWiping(t *testing.T) {
	def, err := scenario.Get(scenario.Default)
	if err != nil {
		t.Fatal(err)
	}
	res, det := runScenario(t, scenario.Short(def, 5*scenario.MB, 0), "minrtt", 1, func(r *Run) { r.SeriesStep = time.Microsecond })
	if res.FCTSeconds < 1.1 || res.FCTSeconds > 2 {
		t.Fatalf("FCT %v s: want between 2^20 µs and 2^21 µs for one compaction", res.FCTSeconds)
	}
	if n := len(res.SeriesTimes); n >= 1<<20 || n < 1<<19 {
		t.Errorf("%d samples: want one compaction (from 2^20 to 2^19, then more)", n)
	}
	checkSeries(t, res, det, 2e-6)
}

// Paths join while the download runs: a transfer that the first path
// finishes alone does not wait for a slow path's join, which is cancelled
// without failing the run.
func TestJoinDoesNotDelayTransfer(t *testing.T) {
	fast := scenario.Link{RateBps: 20 * scenario.Mbps, Delay: scenario.Duration(5 * time.Millisecond)}
	slow := scenario.Link{RateBps: 10 * scenario.Mbps, Delay: scenario.Duration(2 * time.Second)}
	s := scenario.Scenario{
		Name:     "slow-join",
		Paths:    []scenario.PathSpec{{Name: "fast", Up: fast, Down: fast}, {Name: "slow", Up: slow, Down: slow}},
		Bytes:    256 * scenario.KB,
		Duration: scenario.Duration(30 * time.Second),
	}
	res, det := runScenario(t, s, "minrtt", 1, nil)
	// 256 KB at 20 Mbit/s take 0.1 s; the slow path's handshake alone takes
	// 4 s, so the old sequential joins made the FCT above 8 s.
	if res.FCTSeconds > 1 {
		t.Errorf("FCT %v s: the transfer waited for the slow path's join", res.FCTSeconds)
	}
	if res.FCTSeconds < res.FCTLowerBoundSec {
		t.Errorf("FCT %v s below the lower bound %v s", res.FCTSeconds, res.FCTLowerBoundSec)
	}
	if len(det.Server.Paths) != 1 {
		t.Errorf("the server had %d paths, want only the first", len(det.Server.Paths))
	}
}
