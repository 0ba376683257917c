package prs

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// "The presented algorithm is formulated for the most common MPTCP scenarios
// with two different categories of subflows in terms of RTT (RTT of fast and
// slow subflow)" (§4). With two paths the package's N-path rule must be
// Fig. 13 itself: over random snapshots it returns what the line-by-line
// transcription fig13 returns, except in the two places the package doc
// names, where Fig. 13 returns no subflow and the package sends on S_f (a
// tie in condition 2, equal retransmission rates in condition 3).
func TestTwoPathsIsFig13(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 4))
	var conds [5]int // decisions per condition (1–4) of Fig. 13
	deviations := 0
	for n := 0; n < 20000; n++ {
		paths := []sched.PathInfo{randomPath(rng, 1), randomPath(rng, 2)}
		if paths[0].SmoothedRTT == paths[1].SmoothedRTT {
			continue // S_f is then a naming choice, not Fig. 13's
		}
		want := fig13(paths)
		got := -1
		if d := decide(paths...); d.Action == sched.SendNext {
			got = d.Paths.First()
		}
		f, s := 0, 1
		if paths[1].SmoothedRTT < paths[0].SmoothedRTT {
			f, s = 1, 0
		}
		freeF, freeS := paths[f].SendingAllowed(), paths[s].SendingAllowed()
		switch {
		case !freeF && !freeS:
			conds[1]++
		case freeF && freeS:
			conds[2]++
		case freeF:
			conds[3]++
		default:
			conds[4]++
		}
		if got == want {
			continue
		}
		tie := freeF && freeS && Performance(&paths[f]) == Performance(&paths[s])
		equalRates := freeF && !freeS && RetransRate(&paths[f]) == RetransRate(&paths[s])
		if (tie || equalRates) && want == -1 && got == f {
			deviations++
			continue
		}
		t.Fatalf("snapshot %d: got %d, Fig. 13 gives %d (-1 = wait) for %+v", n, got, want, paths)
	}
	for c := 1; c <= 4; c++ {
		if conds[c] < 500 {
			t.Errorf("condition %d drawn %d times, want ≥ 500 (%v)", c, conds[c], conds)
		}
	}
	if deviations == 0 {
		t.Errorf("no tie drawn: the documented deviations went untested")
	}
}

// randomPath draws a snapshot with small integer values, so that ties occur.
func randomPath(rng *rand.Rand, id sched.PathID) sched.PathInfo {
	cwnd := 2 + rng.Uint64N(20)
	sent := 100 * (1 + rng.Uint64N(4))
	p := path(id, time.Duration(5*(1+rng.IntN(12)))*ms, cwnd, rng.Uint64N(cwnd+3), 0)
	p.PacketsSent = sent
	if rng.IntN(3) > 0 {
		p.PacketsLost = rng.Uint64N(6)
	}
	return p
}

// performance_i = space_i / (rtt_i * max(1, retrans_i))   (Eq. 1), where
// retrans_i is "The number of retransmitted packets" of the subflow and Eq. 2
// divides it by "The total number of transmitted packets" (Table 3): a count
// since the subflow opened. So a path that lost a burst of packets once
// divides its performance by that burst for the rest of the connection.
//
// The numbers are those measured in prs-2path-256k (docs/prs-n-paths.md):
// path a (40 Mbit/s, 20 ms RTT) lost 17 packets when slow start overflowed
// its queue at 0.2 s and never again; path b (15 Mbit/s, 80 ms RTT) never
// lost one, because the 256 KB receive window is below its BDP plus queue.
func TestEq1CumulativeCountRanksSlowPathFirst(t *testing.T) {
	const kb = 1000
	a := sched.PathInfo{ID: 1, SmoothedRTT: 25 * ms, CongestionWindow: 322 * kb, BytesInFlight: 14 * kb, MSS: 1200, PacketsSent: 2000, PacketsLost: 17}
	b := sched.PathInfo{ID: 2, SmoothedRTT: 163 * ms, CongestionWindow: 475 * kb, BytesInFlight: 292 * kb, MSS: 1200, PacketsSent: 9000}
	// 308 KB / (0.025 s · 17) = 0.72 MB/s < 183 KB / (0.163 s · 1) = 1.12 MB/s.
	if d := decide(a, b); d.Action != sched.SendNext || d.Paths != sched.Of(1) {
		t.Errorf("a lost 17 packets once: got %+v, want path b (index 1)", d)
	}
	if got := fig13([]sched.PathInfo{a, b}); got != 1 {
		t.Errorf("Fig. 13 gives %d, want path b (index 1)", got)
	}
	// Without the burst a's performance is 12.3 MB/s and a is chosen.
	a.PacketsLost = 1
	if d := decide(a, b); d.Action != sched.SendNext || d.Paths != sched.Of(0) {
		t.Errorf("a lost 1 packet: got %+v, want path a (index 0)", d)
	}
	// The choice turns at 11 losses: 308 / (0.025 · 11) = 1.12 MB/s.
	a.PacketsLost = 10
	if d := decide(a, b); d.Paths != sched.Of(0) {
		t.Errorf("a lost 10 packets: got %+v, want path a", d)
	}
	a.PacketsLost = 11
	if d := decide(a, b); d.Paths != sched.Of(1) {
		t.Errorf("a lost 11 packets: got %+v, want path b", d)
	}
}
