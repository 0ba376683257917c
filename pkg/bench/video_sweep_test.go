package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/stats"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/xlink"
)

// TestVideoXLINKSweep is a measurement, not a check of behaviour: XLINK's
// thresholds (T_low, T_high) on video-handoff, 5 seeds each, beside minRTT,
// printed as a Markdown table (docs/workloads/README.md quotes it). XLINK
// copies only in re-injection rounds, which a session runs only with the
// re-injection hook (branch wl-xlink-hook); without it every row is
// minRTT's. It runs only with MPQ_VIDEO_SWEEP=1:
//
//	MPQ_VIDEO_SWEEP=1 go test -count=1 -v -run TestVideoXLINKSweep ./pkg/bench/
//
// It fails if a run fails or if a result is out of its domain.
func TestVideoXLINKSweep(t *testing.T) {
	if os.Getenv("MPQ_VIDEO_SWEEP") != "1" {
		t.Skip("a measurement: set MPQ_VIDEO_SWEEP=1")
	}
	s, err := scenario.Get("video-handoff")
	if err != nil {
		t.Fatal(err)
	}
	type cfg struct {
		name string
		mk   func() sched.Scheduler
	}
	cfgs := []cfg{{"minrtt", nil}}
	for _, th := range [][2]time.Duration{{1 * time.Second, 3 * time.Second}, {2 * time.Second, 4 * time.Second}, {3 * time.Second, 4 * time.Second}, {4 * time.Second, 6 * time.Second}} {
		o := xlink.Options{Low: th[0], High: th[1]}
		cfgs = append(cfgs, cfg{fmt.Sprintf("xlink low=%v high=%v", th[0], th[1]), func() sched.Scheduler { return xlink.New(o) }})
	}
	var b strings.Builder
	b.WriteString("| scheduler | chunk p99 (s) | chunk p95 (s) | rebuffer (s) | first frame (s) | redundancy (%) |\n|---|---:|---:|---:|---:|---:|\n")
	for _, c := range cfgs {
		var p99, p95, rb, ff, red []float64
		for seed := int64(1); seed <= 5; seed++ {
			res, _ := runScenario(t, s, "minrtt", seed, func(r *Run) {
				if c.mk != nil {
					r.Scheduler, r.NewScheduler = "", c.mk
				}
			})
			v := res.Video
			if v == nil || v.Chunks != 42 || v.Redundancy < 0 || v.Redundancy > 1 {
				t.Fatalf("%s seed %d: video %+v", c.name, seed, v)
			}
			p99, p95, rb = append(p99, v.ChunkP99Sec), append(p95, v.ChunkP95Sec), append(rb, v.RebufferSec)
			ff, red = append(ff, v.FirstFrameSec), append(red, v.Redundancy)
		}
		f := func(xs []float64, scale float64, prec int) string { return stats.Summarize(xs).Format(scale, prec) }
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.name, f(p99, 1, 3), f(p95, 1, 3), f(rb, 1, 3), f(ff, 1, 3), f(red, 100, 2))
	}
	t.Log("\n" + b.String())
}
