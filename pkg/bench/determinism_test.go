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
// scenario, scheduler and seed agree: the emulator's link events are a pure
// function of the seed, but goroutine interleaving and crypto/rand in the TLS
// handshakes make runs repeatable only to within this relative difference in
// goodput and FCT.
const DeterminismTolerance = 0.02

func TestSameSeedSameResult(t *testing.T) {
	s, err := scenario.Get("wifi-lte") // jitter, bursty loss, queues: every random link event
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
