package bench

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
	_ "github.com/mpqsched/mpqsched/sched/all"
)

// Every scenario of the library (sweeps expanded) runs to completion in
// virtual time with every registered scheduler, its data verified. Transfers
// are shrunk with scenario.Short, which keeps the links' behaviour and
// scales the timeline with the size.
func TestLibraryEveryScenarioEveryScheduler(t *testing.T) {
	maxBytes := int64(512 << 10)
	if testing.Short() {
		maxBytes = 64 << 10
	}
	for _, s := range scenario.Library() {
		variants, err := s.Expand()
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for _, v := range variants {
			if v.Timed {
				// A timed run keeps its length down to a few seconds, enough
				// for handshakes and data on every path.
				v = scenario.Short(v, 0, scenario.Duration(3*time.Second))
			} else {
				v = scenario.Short(v, maxBytes, 0)
			}
			for _, name := range sched.Names() {
				t.Run(v.Name+"/"+name, func(t *testing.T) {
					t.Parallel()
					r, err := FromScenario(v, name, 1)
					if err != nil {
						t.Fatal(err)
					}
					// This test checks completion and integrity, not speed:
					// a shortened scenario can be far slower than its scaled
					// duration suggests (edar-setting-v's 20 s handoffs
					// become 0.1 s ones every 0.2 s, and a 64 KB window
					// stalls behind them), so only a stall, not a slow
					// transfer, may fail it. Virtual time makes the wait free.
					r.Timeout = max(r.Timeout, 10*time.Minute)
					synctest.Test(t, func(t *testing.T) {
						res, _, err := Transfer(context.Background(), r)
						if err != nil {
							t.Fatalf("%v", err)
						}
						if !res.SHA256OK || res.Bytes == 0 {
							t.Fatalf("data not verified: sha ok %v, %d bytes", res.SHA256OK, res.Bytes)
						}
					})
				})
			}
		}
	}
}
