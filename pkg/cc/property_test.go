package cc

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// randomPath is a coupled path with 500-1500-byte segments, 2-200 segments
// of window, 1-300 ms of RTT and random OLIA loss counters.
func randomPath(rng *rand.Rand) Path {
	mss := 500 + 1000*rng.Float64()
	return Path{
		Window:        mss * (2 + 198*rng.Float64()),
		RTT:           time.Duration((1 + 299*rng.Float64()) * float64(time.Millisecond)),
		MSS:           mss,
		BetweenLosses: 1e6 * rng.Float64(),
		SinceLoss:     1e6 * rng.Float64(),
	}
}

// TestOnePathIsReno checks that with one path every rule is Reno: RFC 6356
// alpha = w·(w/rtt²)/(w/rtt)² = 1 and min(1·MSS/w, MSS/w); OLIA's B\M is
// empty and (w/rtt²)/(w/rtt)² = 1/w; BALIA's alpha is 1, so
// (1+1)/2·(4+1)/5 = 1 and the decrease is w/2·min(1, 1.5) = w/2.
func TestOnePathIsReno(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var reno Reno
	for _, c := range all(t) {
		for trial := 0; trial < 500; trial++ {
			p := []Path{randomPath(rng)}
			acked := p[0].MSS * (0.1 + 3*rng.Float64())
			wantClose(t, c.Name()+" Acked", c.Acked(0, acked, p), reno.Acked(0, acked, p))
			wantClose(t, c.Name()+" Lost", c.Lost(0, p), reno.Lost(0, p))
		}
	}
}

// TestSymmetricPaths checks that n identical paths get identical
// increments, and that the three couplings agree there: each path grows by
// MSS/n² per RTT, 1/n² of Reno (LIA: alpha = 1/n, MSS·(1/n)/(n·w) per
// acked MSS; OLIA: 1/(n²·w) with every alpha_r 0 since B = M; BALIA:
// alpha_r = 1 and (x/tau)/(n·x)² = 1/(n²·w)). The n paths together add MSS/n
// per RTT: at a shared bottleneck they halve n times as often as one flow,
// so their total window matches one Reno flow's.
func TestSymmetricPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 200; trial++ {
		one := randomPath(rng)
		n := 1 + rng.IntN(6)
		paths := make([]Path, n)
		for k := range paths {
			paths[k] = one
		}
		acked := one.MSS
		reno := Reno{}.Acked(0, acked, paths)
		for _, c := range all(t) {
			first := c.Acked(0, acked, paths)
			for k := 1; k < n; k++ {
				wantClose(t, c.Name()+" symmetric increment", c.Acked(k, acked, paths), first)
				wantClose(t, c.Name()+" symmetric decrease", c.Lost(k, paths), c.Lost(0, paths))
			}
			if c.Name() == NameNone || c.Name() == NameRenoFriendly {
				wantClose(t, c.Name()+" uncoupled", first, reno)
				continue
			}
			wantClose(t, c.Name()+" = Reno/n²", first, reno/float64(n*n))
		}
	}
}

// TestOffPathsAreIgnored checks that an Off path changes nothing for the
// others: a failed or backup path must not dilute the coupling.
func TestOffPathsAreIgnored(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range all(t) {
		for trial := 0; trial < 200; trial++ {
			paths := []Path{randomPath(rng), randomPath(rng), randomPath(rng)}
			with := append(append([]Path(nil), paths...), randomPath(rng))
			with[3].Off = true
			for k := range paths {
				wantClose(t, c.Name()+" Acked with an Off path", c.Acked(k, 1000, with), c.Acked(k, 1000, paths))
				wantClose(t, c.Name()+" Lost with an Off path", c.Lost(k, with), c.Lost(k, paths))
			}
		}
	}
}

// TestNeverAboveRenoWhereStated checks LIA's per-path cap (RFC 6356 eq. 2:
// never more than TCP on the same path) and that every coupling's decrease
// keeps the window within [MinWindow, Window] for windows of 2 segments
// and more.
func TestNeverAboveRenoWhereStated(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 1000; trial++ {
		paths := make([]Path, 1+rng.IntN(5))
		for k := range paths {
			paths[k] = randomPath(rng)
		}
		for k := range paths {
			if got, reno := (LIA{}).Acked(k, 1000, paths), (Reno{}).Acked(k, 1000, paths); got > reno*(1+1e-12) {
				t.Fatalf("LIA increase %.6g above Reno's %.6g", got, reno)
			}
			for _, c := range all(t) {
				w := c.Lost(k, paths)
				if w < MinWindow(paths[k].MSS) || w > paths[k].Window {
					t.Fatalf("%s: Lost = %.6g outside [%.6g, %.6g]", c.Name(), w, MinWindow(paths[k].MSS), paths[k].Window)
				}
			}
		}
	}
}

// TestBadInput checks that nonsense never panics, Acked stays finite and
// Lost finite and non-negative.
func TestBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	good := path(10000, 10)
	cases := []struct {
		name  string
		i     int
		acked float64
		paths []Path
	}{
		{"nil paths", 0, 1000, nil},
		{"negative index", -1, 1000, []Path{good}},
		{"index past the end", 3, 1000, []Path{good, good}},
		{"NaN acked", 0, nan, []Path{good, good}},
		{"infinite acked", 0, inf, []Path{good, good}},
		{"negative acked", 0, -5, []Path{good, good}},
		{"zero window", 0, 1000, []Path{{RTT: ms(10), MSS: seg}, good}},
		{"negative window", 0, 1000, []Path{{Window: -1, RTT: ms(10), MSS: seg}, good}},
		{"NaN window", 0, 1000, []Path{{Window: nan, RTT: ms(10), MSS: seg}, good}},
		{"infinite window", 0, 1000, []Path{{Window: inf, RTT: ms(10), MSS: seg}, good}},
		{"zero MSS", 0, 1000, []Path{{Window: 10000, RTT: ms(10)}, good}},
		{"NaN MSS", 0, 1000, []Path{{Window: 10000, RTT: ms(10), MSS: nan}, good}},
		{"negative RTT", 0, 1000, []Path{{Window: 10000, RTT: -ms(10), MSS: seg}, good}},
		{"another path NaN", 0, 1000, []Path{good, {Window: nan, RTT: ms(10), MSS: nan}}},
		{"huge windows", 0, 1000, []Path{{Window: 1e300, RTT: 1, MSS: 1e-300}, {Window: 1e300, RTT: 1, MSS: 1e-300}}},
		{"NaN loss counters", 0, 1000, []Path{{Window: 10000, RTT: ms(10), MSS: seg, BetweenLosses: nan, SinceLoss: -inf}, good}},
		{"every path off", 0, 1000, []Path{{Window: 10000, RTT: ms(10), MSS: seg, Off: true}}},
	}
	for _, c := range all(t) {
		for _, tc := range cases {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s, %s: panic %v", c.Name(), tc.name, r)
					}
				}()
				if got := c.Acked(tc.i, tc.acked, tc.paths); !finite(got) {
					t.Errorf("%s, %s: Acked = %v", c.Name(), tc.name, got)
				}
				if got := c.Lost(tc.i, tc.paths); !finite(got) || got < 0 {
					t.Errorf("%s, %s: Lost = %v", c.Name(), tc.name, got)
				}
			}()
		}
	}
}
