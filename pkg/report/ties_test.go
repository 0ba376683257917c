package report

import (
	"math"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// runs makes OK results of one scheduler on scenario "s", one per goodput
// (Mbit/s), seeds from 1.
func runs(sched string, mbps ...float64) []metrics.Result {
	var out []metrics.Result
	for i, g := range mbps {
		out = append(out, metrics.Result{Scheduler: sched, Scenario: "s", Seed: int64(i + 1), Bytes: 1e6,
			FCTSeconds: 8 / g, GoodputBps: g * 1e6, SHA256OK: true})
	}
	return out
}

// Two schedulers within each other's noise share a group; one far above
// them is alone in "a"; a scheduler with a single run says nothing and is
// tied with everyone.
func TestSummarizeMarksTies(t *testing.T) {
	var rs []metrics.Result
	rs = append(rs, runs("fast", 30, 31, 29, 30.5, 29.5)...)
	rs = append(rs, runs("slow1", 20, 21, 19, 20.5, 19.5)...)
	rs = append(rs, runs("slow2", 20.2, 19.3, 21.1, 19.8, 20.4)...)
	rs = append(rs, runs("once", 25)...)
	got := map[string]string{}
	for _, r := range Summarize(rs) {
		got[r.Scheduler] = r.GoodputTie
	}
	want := map[string]string{"fast": "a", "once": "ab", "slow1": "b", "slow2": "b"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: tie group %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	md := TieSection(Summarize(rs))
	for _, s := range []string{"Holm", "**a**: fast, once (25.00–30.00)", "**b**: once, slow2, slow1 (20.00–25.00)"} {
		if !strings.Contains(md, s) {
			t.Errorf("tie section lacks %q:\n%s", s, md)
		}
	}
}

// ResolvableDiff by hand: the two widest rows have s² = 2.5 and 10 over
// n = 5, so s²/n = 0.5 and 2, Welch's df = 2.5² / (0.5²/4 + 2²/4) = 5.882
// and, for m = 3 pairs, the critical t at 1 − 0.05/6 on 5.882 df is 3.3109
// (the t density integrated numerically and inverted by bisection,
// independently of gonum); the difference is 3.3109 · √2.5 = 5.2350.
func TestResolvableDiff(t *testing.T) {
	rows := Summarize(append(append(runs("x", 1, 2, 3, 4, 5), runs("y", 2, 4, 6, 8, 10)...), runs("z", 5, 5, 5, 5, 5)...))
	if got := ResolvableDiff(rows) * 1e-6; math.Abs(got-5.2350) > 1e-3 {
		t.Errorf("ResolvableDiff = %.4f Mbit/s, want 5.2350", got)
	}
}
