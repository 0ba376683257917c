package bench

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// jain is Jain's fairness index of the rates xs: (Σx)² / (n·Σx²).
func jain(xs ...float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 0
	}
	return s * s / (float64(len(xs)) * s2)
}

// couplingRun runs scenario name with the sender's coupling and returns the
// session's and the first competitor's goodput (bits/s) and the path bytes.
func couplingRun(t *testing.T, name, coupling string, seed int64) (sess, comp float64, per []uint64) {
	s, err := scenario.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := FromScenario(s, "", seed)
	if err != nil {
		t.Fatal(err)
	}
	r.SessionConfig = &session.Config{Coupling: coupling}
	synctest.Test(t, func(t *testing.T) {
		res, _, err := Transfer(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if !res.SHA256OK {
			t.Fatal("SHA-256 mismatch")
		}
		sess, per = res.GoodputBps, res.PerPathBytes
		if len(res.CrossGoodputBps) > 0 {
			comp = res.CrossGoodputBps[0]
		}
	})
	return sess, comp, per
}

// RFC 6356 §3, goal 2: "A multipath flow should not take up more capacity
// from any of the resources shared by its different paths than if it were a
// single flow using only one of these paths." Two paths through one
// bottleneck against one single-path quic-go flow: with coupling the
// session gets at most 1.25× the competitor, and less than it takes
// uncoupled. (Goal 1, "at least as well as a single path flow", is not met
// yet: the coupled session gets 0.5-0.7 of the competitor here; the
// closing note of the coupling issue has the figures.)
func TestCouplingSharedBottleneck(t *testing.T) {
	if testing.Short() {
		t.Skip("four 30 s runs")
	}
	var uncoupled float64
	for _, c := range []string{"none", "lia", "olia", "balia"} {
		sess, comp, per := couplingRun(t, "rfc6356-shared", c, 1)
		ratio, j := sess/comp, jain(sess, comp)
		t.Logf("%-6s session %.2f Mbit/s, competitor %.2f Mbit/s, ratio %.2f, Jain %.3f, per path %v", c, sess/1e6, comp/1e6, ratio, j, per)
		if c == "none" {
			uncoupled = ratio
			continue
		}
		if ratio > 1.25 || ratio >= uncoupled {
			t.Errorf("%s: ratio %.2f, want ≤ 1.25 and below the uncoupled %.2f", c, ratio, uncoupled)
		}
	}
}

// Coupling must still aggregate disjoint paths: on the lossless built-in
// pair it costs at most 5% of the uncoupled goodput.
func TestCouplingDisjointAggregates(t *testing.T) {
	if testing.Short() {
		t.Skip("four transfers")
	}
	none, _, _ := couplingRun(t, "hetero-2path", "none", 1)
	for _, c := range []string{"lia", "olia", "balia"} {
		g, _, per := couplingRun(t, "hetero-2path", c, 1)
		t.Logf("%s: %.2f Mbit/s against %.2f uncoupled (%.3f), per path %v", c, g/1e6, none/1e6, g/none, per)
		if g < 0.95*none {
			t.Errorf("%s: %.2f Mbit/s, below 0.95 of the uncoupled %.2f", c, g/1e6, none/1e6)
		}
	}
}
