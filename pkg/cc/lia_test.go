package cc

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLIAWorkedExamples(t *testing.T) {
	var l LIA
	// RFC 6356 eq. 3: alpha = cwnd_total · max_i(cwnd_i/rtt_i²) / (Σ_i cwnd_i/rtt_i)²
	// RFC 6356 eq. 2: increase cwnd_i by
	//   min(alpha·bytes_acked·MSS_i/cwnd_total, bytes_acked·MSS_i/cwnd_i)
	t.Run("linked term", func(t *testing.T) {
		// cwnd 10000 B at 10 ms, 20000 B at 40 ms; total 30000 B.
		// cwnd/rtt²: 10000/0.01² = 1e8, 20000/0.04² = 1.25e7 → max 1e8.
		// Σ cwnd/rtt = 10000/0.01 + 20000/0.04 = 1e6 + 5e5 = 1.5e6.
		// alpha = 30000·1e8/(1.5e6)² = 3e12/2.25e12 = 4/3.
		paths := []Path{path(10000, 10), path(20000, 40)}
		wantClose(t, "alpha", l.Alpha(paths), 4.0/3)
		// 1000 bytes acked: linked = (4/3)·1000·1000/30000 = 400/9 ≈ 44.4;
		// caps 1000·1000/10000 = 100 and 1000·1000/20000 = 50: linked wins.
		wantClose(t, "path 0", l.Acked(0, 1000, paths), 400.0/9)
		wantClose(t, "path 1", l.Acked(1, 1000, paths), 400.0/9)
	})
	t.Run("TCP cap", func(t *testing.T) {
		// cwnd 1000 B at 1 ms, 100000 B at 100 ms; total 101000 B.
		// cwnd/rtt²: 1000/1e-6 = 1e9, 100000/0.01 = 1e7 → max 1e9.
		// Σ cwnd/rtt = 1e6 + 1e6 = 2e6. alpha = 101000·1e9/4e12 = 25.25.
		paths := []Path{path(1000, 1), path(100000, 100)}
		wantClose(t, "alpha", l.Alpha(paths), 25.25)
		// linked = 25.25·1000·1000/101000 = 250.
		// path 0: cap 1000·1000/1000 = 1000 → 250.
		wantClose(t, "path 0", l.Acked(0, 1000, paths), 250)
		// path 1: cap 1000·1000/100000 = 10 → 10 (never more than TCP).
		wantClose(t, "path 1", l.Acked(1, 1000, paths), 10)
	})
	t.Run("decrease", func(t *testing.T) {
		// RFC 6356 §3: the multiplicative decrease is standard TCP's: halve.
		paths := []Path{path(10000, 10), path(20000, 40)}
		wantClose(t, "lost 0", l.Lost(0, paths), 5000)
		wantClose(t, "lost 1", l.Lost(1, paths), 10000)
	})
	t.Run("off and unsampled paths are left out", func(t *testing.T) {
		// Path 1 is Off and path 2 has no RTT: alpha is path 0's alone,
		// 10000·1e8/(1e6)² = 1, and path 0 grows as Reno: 100 bytes.
		paths := []Path{path(10000, 10), path(20000, 40), path(30000, 0)}
		paths[1].Off = true
		wantClose(t, "alpha", l.Alpha(paths), 1)
		wantClose(t, "path 0", l.Acked(0, 1000, paths), 100)
		wantClose(t, "unsampled path 2 grows as Reno", l.Acked(2, 1000, paths), 1000.0*1000/30000)
	})
}

// TestLIAEqualRTTTotal checks RFC 6356's "do no harm" on a shared
// bottleneck where every path has the same RTT: in one RTT each path acks
// its window, and the total increase is alpha·MSS = MSS·max_i w_i/w_total,
// never more than the one MSS a single Reno flow adds per RTT.
func TestLIAEqualRTTTotal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 6; n++ {
		for trial := 0; trial < 200; trial++ {
			paths := make([]Path, n)
			total, maxW := 0.0, 0.0
			for k := range paths {
				w := seg * (2 + 200*rng.Float64())
				paths[k] = path(w, 30)
				total += w
				maxW = max(maxW, w)
			}
			sum := 0.0
			for k := range paths {
				sum += LIA{}.Acked(k, paths[k].Window, paths) // one RTT of ACKs
			}
			if sum > seg*(1+1e-9) {
				t.Fatalf("n=%d: total increase per RTT %.3f > one MSS", n, sum)
			}
			wantClose(t, "total per RTT", sum, seg*maxW/total)
		}
	}
}

// TestLIAGoals checks the equation RFC 6356 §3 derives alpha from. At the
// loss rate p_i that holds path i's window w_i steady (increase d_i per
// acked segment balanced by w_i/2 per loss: p_i ≈ 2·d_i/w_i), a TCP flow on
// path i would have window sqrt(2/p_i) = sqrt(w_i/d_i). Goal 1 (at least
// the best single path) and goal 2 (no more than it) together read
//
//	Σ_i w_i/rtt_i = max_i sqrt(w_i/d_i)/rtt_i
//
// Hand check: the path k that maximises w_k/rtt_k² always takes the linked
// term (alpha·w_k/w_total = (w_k/rtt_k)²/(Σ w/rtt)² ≤ 1), and its
// sqrt(w_k/d_k)/rtt_k is exactly Σ w/rtt; a path under the TCP cap has
// d_j = 1/w_j and contributes w_j/rtt_j ≤ Σ. So equality holds whether or
// not the cap binds somewhere; the test covers both.
func TestLIAGoals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	capped := 0
	for trial := 0; trial < 2000; trial++ {
		n := 2 + rng.IntN(4)
		paths := make([]Path, n)
		for k := range paths {
			paths[k] = path(seg*(2+100*rng.Float64()), 5+295*rng.Float64())
		}
		got, best := 0.0, 0.0
		for k := range paths {
			p := &paths[k]
			w := p.Window / seg
			d := LIA{}.Acked(k, seg, paths) / seg // segments per acked segment
			if d >= 1/w*(1-1e-12) {
				capped++
			}
			got += w / p.RTT.Seconds()
			best = max(best, math.Sqrt(w/d)/p.RTT.Seconds())
		}
		wantClose(t, "multipath rate vs best TCP", got, best)
	}
	if capped < 100 {
		t.Fatalf("only %d paths under the TCP cap in 2000 cases: the test misses the cap", capped)
	}
}
