package cc

import (
	"math/rand/v2"
	"testing"
)

// oliaPath is a coupled path of w bytes and rtt milliseconds whose loss
// counters are l1 (bytes between the last two losses) and l2 (since the
// last loss).
func oliaPath(w, rtt, l1, l2 float64) Path {
	p := path(w, rtt)
	p.BetweenLosses, p.SinceLoss = l1, l2
	return p
}

func TestOLIAWorkedExamples(t *testing.T) {
	var o OLIA
	// draft-khalili-mptcp-congestion-control §3: for each ACK on path r,
	// increase w_r by (w_r/rtt_r²)/(Σ_p w_p/rtt_p)² + alpha_r/w_r, with
	//   alpha_r =  (1/|P|)/|B\M| if r ∈ B\M (collected_paths),
	//   alpha_r = -(1/|P|)/|M|   if r ∈ M and B\M ≠ ∅,
	//   alpha_r = 0 otherwise;
	// B: best paths, largest l_r/rtt_r², l_r = max(l1r, l2r);
	// M: paths with the largest window.
	t.Run("window moves from the max-window path to the best path", func(t *testing.T) {
		// Path 0: 10 segments at 10 ms, l = max(50000, 20000) = 50000 B.
		// Path 1: 20 segments at 20 ms, l = max(10000, 30000) = 30000 B.
		// l/rtt²: 50000/1e-4 = 5e8 > 30000/4e-4 = 7.5e7 → B = {0}.
		// M = {1}; B\M = {0}; |P| = 2 → alpha_0 = 1/2, alpha_1 = -1/2.
		paths := []Path{oliaPath(10000, 10, 50000, 20000), oliaPath(20000, 20, 10000, 30000)}
		wantClose(t, "alpha_0", o.Alpha(0, paths), 0.5)
		wantClose(t, "alpha_1", o.Alpha(1, paths), -0.5)
		// Σ w/rtt = 10/0.01 + 20/0.02 = 2000 segments/s; squared 4e6.
		// path 0: (10/1e-4)/4e6 + 0.5/10 = 0.025 + 0.05 = 0.075 segments
		//   per acked segment → 1000 acked bytes add 75 bytes.
		wantClose(t, "path 0", o.Acked(0, 1000, paths), 75)
		// path 1: (20/4e-4)/4e6 - 0.5/20 = 0.0125 - 0.025 = -0.0125
		//   → -12.5 bytes: the max-window path gives window away.
		wantClose(t, "path 1", o.Acked(1, 1000, paths), -12.5)
	})
	t.Run("best path has the largest window", func(t *testing.T) {
		// The same windows, but path 1 is best: l_1/rtt² = 1e5/4e-4 = 2.5e8
		// > l_0/rtt² = 1e4/1e-4 = 1e8. B = M = {1}, B\M = ∅: every alpha 0.
		paths := []Path{oliaPath(10000, 10, 10000, 0), oliaPath(20000, 20, 0, 100000)}
		wantClose(t, "alpha_0", o.Alpha(0, paths), 0)
		wantClose(t, "alpha_1", o.Alpha(1, paths), 0)
		// path 0: 0.025·1000 = 25 bytes; path 1: 0.0125·1000 = 12.5 bytes.
		wantClose(t, "path 0", o.Acked(0, 1000, paths), 25)
		wantClose(t, "path 1", o.Acked(1, 1000, paths), 12.5)
	})
	t.Run("best is the largest l/rtt², not the largest l", func(t *testing.T) {
		// Path 0: 10 segments at 10 ms, l = 50000 B: l/rtt² = 5e8.
		// Path 1: 20 segments at 40 ms, l = 300000 B: l/rtt² = 1.875e8.
		// Path 1 has 6× the loss interval but 4× the RTT: TCP's rate
		// ∝ sqrt(l)/rtt is sqrt(6)/4 ≈ 0.61 of path 0's, so B = {0}
		// (l²/rtt would rank path 1 first). M = {1}: alpha_0 = 1/2,
		// alpha_1 = -1/2.
		paths := []Path{oliaPath(10000, 10, 50000, 0), oliaPath(20000, 40, 300000, 0)}
		wantClose(t, "alpha_0", o.Alpha(0, paths), 0.5)
		wantClose(t, "alpha_1", o.Alpha(1, paths), -0.5)
		// Σ w/rtt = 1000 + 500 = 1500; squared 2.25e6.
		// path 0: 1e5/2.25e6 + 0.5/10 = 0.044444 + 0.05 → 94.444 bytes.
		// path 1: 12500/2.25e6 - 0.5/20 = 0.0055556 - 0.025 → -19.444 bytes.
		wantClose(t, "path 0", o.Acked(0, 1000, paths), 1000*(1e5/2.25e6+0.05))
		wantClose(t, "path 1", o.Acked(1, 1000, paths), 1000*(12500/2.25e6-0.025))
	})
	t.Run("three paths before any loss", func(t *testing.T) {
		// 10, 10 and 20 segments, all at 10 ms, l_r = 0: every path is in
		// B; M = {2}; B\M = {0, 1}; |P| = 3.
		// alpha_0 = alpha_1 = (1/3)/2 = 1/6; alpha_2 = -(1/3)/1 = -1/3.
		paths := []Path{path(10000, 10), path(10000, 10), path(20000, 10)}
		wantClose(t, "alpha_0", o.Alpha(0, paths), 1.0/6)
		wantClose(t, "alpha_1", o.Alpha(1, paths), 1.0/6)
		wantClose(t, "alpha_2", o.Alpha(2, paths), -1.0/3)
		// Σ w/rtt = 40/0.01 = 4000; squared 1.6e7.
		// path 0: 1e5/1.6e7 + (1/6)/10 = 0.00625 + 0.0166667 → 22.9167 B.
		wantClose(t, "path 0", o.Acked(0, 1000, paths), 1000*(0.00625+1.0/60))
		// path 2: 2e5/1.6e7 - (1/3)/20 = 0.0125 - 0.0166667 → -4.1667 B.
		wantClose(t, "path 2", o.Acked(2, 1000, paths), 1000*(0.0125-1.0/60))
	})
	t.Run("decrease", func(t *testing.T) {
		// draft §3: "For each loss on path r, decrease w_r by w_r/2."
		paths := []Path{oliaPath(10000, 10, 50000, 20000), oliaPath(3000, 20, 0, 0)}
		wantClose(t, "lost 0", o.Lost(0, paths), 5000)
		wantClose(t, "lost 1 (2-segment floor)", o.Lost(1, paths), 2000)
	})
}

// TestOLIAAlphaSumsToZero checks that the alpha_r terms only move window
// between paths: (1/|P|)/|B\M| over B\M plus -(1/|P|)/|M| over M is 0.
func TestOLIAAlphaSumsToZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	nonzero := 0
	for trial := 0; trial < 1000; trial++ {
		paths := make([]Path, 2+rng.IntN(5))
		for k := range paths {
			// Few distinct values, so that ties in B and M happen.
			paths[k] = oliaPath(seg*float64(2+rng.IntN(4)), float64(10*(1+rng.IntN(3))),
				float64(1000*rng.IntN(4)), float64(1000*rng.IntN(4)))
		}
		sum, pos := 0.0, 0.0
		for k := range paths {
			a := OLIA{}.Alpha(k, paths)
			sum += a
			if a > 0 {
				pos += a
			}
		}
		wantClose(t, "Σ alpha", sum, 0)
		if pos > 0 {
			nonzero++
			// The positive alphas share 1/|P| exactly.
			wantClose(t, "Σ positive alpha", pos, 1/float64(len(paths)))
		}
	}
	if nonzero < 100 {
		t.Fatalf("only %d of 1000 cases had B\\M non-empty", nonzero)
	}
}

func TestOLIALossCounters(t *testing.T) {
	// draft §3: l1r bytes between the last two losses, l2r since the last.
	var p Path
	p.OnAcked(3000)
	p.OnAcked(2000)
	if p.SinceLoss != 5000 || p.BetweenLosses != 0 {
		t.Fatalf("after 5000 acked: l1r=%v l2r=%v, want 0 5000", p.BetweenLosses, p.SinceLoss)
	}
	p.OnLoss()
	p.OnAcked(1000)
	if p.BetweenLosses != 5000 || p.SinceLoss != 1000 {
		t.Fatalf("after a loss and 1000 acked: l1r=%v l2r=%v, want 5000 1000", p.BetweenLosses, p.SinceLoss)
	}
	wantClose(t, "l_r = max(l1r, l2r)", p.lossInterval(), 5000)
	p.OnAcked(-7) // ignored
	p.OnLoss()
	if p.BetweenLosses != 1000 || p.SinceLoss != 0 {
		t.Fatalf("after a second loss: l1r=%v l2r=%v, want 1000 0", p.BetweenLosses, p.SinceLoss)
	}
}
