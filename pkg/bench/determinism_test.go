package bench

import (
	"context"
	"math"
	"testing"
	"testing/synctest"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// DeterminismTolerance is how closely two virtual-time runs of the same
// lossless scenario, scheduler and seed agree in goodput and FCT. The
// emulator's link events are a pure function of the seed and of the packets
// offered (pkg/emu's own tests check that), but goroutine interleaving and
// crypto/rand in the TLS handshakes make runs repeatable only to within this
// relative difference (observed: 0.6%). With random loss the spread is
// larger: one packet more or less shifts every later loss draw of that link,
// and 1 run in 8 of the same seed was seen 13% off the others (the rest
// within 1%); compare lossy scenarios over several seeds, with the report's
// confidence intervals.
const DeterminismTolerance = 0.02

func TestSameSeedSameResult(t *testing.T) {
	s, err := scenario.Get(scenario.Default)
	if err != nil {
		t.Fatal(err)
	}
	s = scenario.Short(s, 4<<20, 0)
	run := func(seed int64) metrics.Result {
		r, err := FromScenario(s, "minrtt", seed)
		if err != nil {
			t.Fatal(err)
		}
		var res metrics.Result
		synctest.Test(t, func(t *testing.T) {
			res, _, err = Transfer(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
		})
		return res
	}
	a, b, other := run(3), run(3), run(4)
	rel := func(x, y float64) float64 { return math.Abs(x-y) / math.Max(math.Abs(x), math.Abs(y)) }
	if d := rel(a.GoodputBps, b.GoodputBps); d > DeterminismTolerance {
		t.Errorf("same seed: goodput %.0f vs %.0f bit/s differ by %.2f%%", a.GoodputBps, b.GoodputBps, 100*d)
	}
	if d := rel(a.FCTSeconds, b.FCTSeconds); d > DeterminismTolerance {
		t.Errorf("same seed: FCT %.3f vs %.3f s differ by %.2f%%", a.FCTSeconds, b.FCTSeconds, 100*d)
	}
	t.Logf("seed 3: %.3f and %.3f Mbit/s; seed 4: %.3f Mbit/s", a.GoodputBps/1e6, b.GoodputBps/1e6, other.GoodputBps/1e6)
}
