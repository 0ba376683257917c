package bench

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	_ "github.com/mpqsched/mpqsched/sched/all"
)

// rfc6356-shared with the session's defaults (minRTT, uncoupled quic-go
// congestion control per path), in virtual time: two paths and one
// single-path quic-go competitor through one 20 Mbit/s bottleneck. Only
// sanity ranges are asserted, since the coupling target is the coupled
// congestion control's: each flow gets more than 10% of the bottleneck and
// together they get no more than it. The ratio is logged.
func TestRFC6356SharedUncoupled(t *testing.T) {
	s, err := scenario.Get("rfc6356-shared")
	if err != nil {
		t.Fatal(err)
	}
	const rate = 20e6 // the bottleneck's Down rate, bits/s
	for _, seed := range []int64{1, 2} {
		r, err := FromScenario(s, "", seed)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Test(t, func(t *testing.T) {
			res, _, err := Transfer(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.CrossGoodputBps) != 1 || len(res.CrossSeries) != 1 || res.CrossNames[0] != "competitor" {
				t.Fatalf("cross records: names %v, goodput %v, %d series", res.CrossNames, res.CrossGoodputBps, len(res.CrossSeries))
			}
			sess, comp := res.GoodputBps, res.CrossGoodputBps[0]
			t.Logf("seed %d: session %.2f Mbit/s, competitor %.2f Mbit/s, ratio %.2f, per path %v bytes, fct %.1f s",
				seed, sess/1e6, comp/1e6, sess/comp, res.PerPathBytes, res.FCTSeconds)
			if sess <= 0.1*rate || comp <= 0.1*rate {
				t.Errorf("session %v and competitor %v bit/s; want each > 10%% of %v", sess, comp, rate)
			}
			if sess+comp > rate {
				t.Errorf("session + competitor = %v bit/s, above the bottleneck's %v", sess+comp, rate)
			}
			if res.CapacityBps != rate || res.FCTLowerBoundSec != 0 {
				t.Errorf("capacity %v (want %v), FCT bound %v (want none)", res.CapacityBps, rate, res.FCTLowerBoundSec)
			}
		})
	}
}
