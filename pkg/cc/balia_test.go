package cc

import "testing"

func TestBALIAWorkedExamples(t *testing.T) {
	var b BALIA
	// draft-walid-mptcp-congestion-control §3 (Peng et al., ToN 2016):
	// x_r = w_r/tau_r, alpha_r = max_k x_k / x_r;
	// for each ACK on path r, increase w_r by
	//   (x_r/tau_r)/(Σ_k x_k)² · (1+alpha_r)/2 · (4+alpha_r)/5;
	// for each loss on path r, decrease w_r by (w_r/2)·min(alpha_r, 1.5).
	t.Run("two paths", func(t *testing.T) {
		// Path 0: 10 segments at 10 ms → x_0 = 1000 segments/s.
		// Path 1: 20 segments at 40 ms → x_1 = 500 segments/s.
		// Σx = 1500, squared 2.25e6. alpha_0 = 1, alpha_1 = 2.
		paths := []Path{path(10000, 10), path(20000, 40)}
		wantClose(t, "alpha_0", b.Alpha(0, paths), 1)
		wantClose(t, "alpha_1", b.Alpha(1, paths), 2)
		// path 0: (1000/0.01)/2.25e6 · (2/2)·(5/5) = 0.0444 segments per
		//   acked segment → 1000 bytes add 400/9 ≈ 44.44 bytes.
		wantClose(t, "path 0", b.Acked(0, 1000, paths), 400.0/9)
		// path 1: (500/0.04)/2.25e6 · (3/2)·(6/5) = 0.005556·1.8 = 0.01
		//   → 10 bytes.
		wantClose(t, "path 1", b.Acked(1, 1000, paths), 10)
		// Losses: path 0 loses 10000/2·min(1, 1.5) = 5000 → 5000 bytes;
		// path 1 loses 20000/2·min(2, 1.5) = 15000 → 5000 bytes.
		wantClose(t, "lost 0", b.Lost(0, paths), 5000)
		wantClose(t, "lost 1", b.Lost(1, paths), 5000)
	})
	t.Run("alpha between 1 and 1.5", func(t *testing.T) {
		// Path 1 at 25 ms: x_1 = 20/0.025 = 800, alpha_1 = 1000/800 = 1.25.
		paths := []Path{path(10000, 10), path(20000, 25)}
		wantClose(t, "alpha_1", b.Alpha(1, paths), 1.25)
		// Loss: 20000/2·1.25 = 12500 → 7500 bytes.
		wantClose(t, "lost 1", b.Lost(1, paths), 7500)
		// Σx = 1800, squared 3.24e6; path 1: (800/0.025)/3.24e6 ·
		//   (2.25/2)·(5.25/5) = 0.0098765·1.18125 = 0.011667 → 11.667 B.
		wantClose(t, "path 1", b.Acked(1, 1000, paths), 1000*(800/0.025)/3.24e6*1.125*1.05)
	})
	t.Run("decrease floor", func(t *testing.T) {
		// 3000 bytes at alpha 2: 3000 - 1500·1.5 = 750 < 2 segments → 2000.
		paths := []Path{path(10000, 10), path(3000, 20)}
		wantClose(t, "alpha_1", b.Alpha(1, paths), (10/0.01)/(3/0.02))
		wantClose(t, "lost 1", b.Lost(1, paths), 2000)
	})
}
