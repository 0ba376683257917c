package llhd

import (
	"math"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

const ms = time.Millisecond

// path has room for 10 of its 20 segments and the given goodput in bytes/s.
func path(id sched.PathID, rtt time.Duration, goodput float64) sched.PathInfo {
	p := schedtest.Path(id, rtt, 20, 10)
	p.DeliveryRate = goodput
	return p
}

func decide(paths ...sched.PathInfo) int {
	conn := schedtest.Conn(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 100)
	d := New().Decide(&conn, paths)
	switch d.Action {
	case sched.Wait:
		return -1
	case sched.SendNext:
		if d.Paths.Len() == 1 {
			return d.Paths.First()
		}
	}
	return -2 // not a single-path SendNext
}

// scenario1 is the state of llhd.txt §4.1, scenario #1: "Two SFs have two
// bottlenecks with a capacity of BW 10 Mbps and 5 Mbps, path latency of 10 ms
// and 5 ms, and path loss rate of 1% and 2%, respectively." The RTT is twice
// the path latency, the window one bandwidth-delay product, and the goodput
// the capacity minus the losses (Eq. 1). Both paths have window room.
func scenario1(withRate bool) []sched.PathInfo {
	mk := func(id sched.PathID, mbps float64, latency time.Duration, loss float64) sched.PathInfo {
		rtt := 2 * latency
		bytesPerSec := mbps * 1e6 / 8
		cwnd := uint64(bytesPerSec * rtt.Seconds())
		p := sched.PathInfo{
			ID: id, SmoothedRTT: rtt, MinRTT: rtt, LatestRTT: rtt,
			CongestionWindow: cwnd, BytesInFlight: cwnd / 2, MSS: schedtest.MSS,
			LossRate: loss, PacketsSent: 1000, PacketsLost: uint64(loss * 1000),
		}
		if withRate {
			p.DeliveryRate = bytesPerSec * (1 - loss)
		}
		return p
	}
	return []sched.PathInfo{
		mk(1, 10, 10*ms, 0.01), // SF-1: high BW, high RTT, low loss
		mk(2, 5, 5*ms, 0.02),   // SF-2: low BW, low RTT
	}
}

// "In this instance, the high BW route has the high RTT with the lowest
// packet loss rate. Hence, the optimal approach is the high BW path with high
// RTT, rather than the lowest RTT option." "The LLHD identified the subflow
// with the highest RTT as the best subflow in this scenario."
func TestScenario1(t *testing.T) {
	for _, tt := range []struct {
		name     string
		withRate bool
	}{
		{"goodput from DeliveryRate", true},
		{"goodput from cwnd/srtt·(1−loss)", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			paths := scenario1(tt.withRate)
			if got, want := decide(paths...), 0; got != want {
				t.Errorf("LLHD: got path index %d, want %d (SF-1)", got, want)
			}
			// The contrast the paper draws: "The SRTT scheduler continued to
			// transmit along the low RTT path".
			if got, want := minrtt.Pick(paths), 1; got != want {
				t.Errorf("minRTT: got path index %d, want %d (SF-2)", got, want)
			}
			// γ = GP/GP_max + β·RTT_max/RTT: 1 + 0.001·1 for SF-1 and
			// (5·0.98)/(10·0.99) + 0.001·2 for SF-2.
			g1 := Utility(Goodput(&paths[0]), Goodput(&paths[0]), 0.020, 0.020)
			g2 := Utility(Goodput(&paths[1]), Goodput(&paths[0]), 0.010, 0.020)
			if want := 1.001; math.Abs(g1-want) > 1e-9 {
				t.Errorf("γ(SF-1): got %v, want %v", g1, want)
			}
			if want := 4.9/9.9 + 0.002; math.Abs(g2-want) > 1e-9 {
				t.Errorf("γ(SF-2): got %v, want %v", g2, want)
			}
		})
	}
}

// γ = GP_N + β × 1/RTT_N with β = 0.001 (Eq. 2, Algorithm 1): the RTT term
// only separates paths whose normalised goodputs are within β·RTT_max/RTT_i.
func TestBetaTieBreaker(t *testing.T) {
	const gp = 1e6
	tests := []struct {
		name  string
		paths []sched.PathInfo
		want  int
	}{
		// γ = 1 + 0.001·1 against 1 + 0.001·2.
		{"equal goodput: lower RTT", []sched.PathInfo{path(1, 20*ms, gp), path(2, 10*ms, gp)}, 1},
		{"equal goodput, other order", []sched.PathInfo{path(2, 10*ms, gp), path(1, 20*ms, gp)}, 0},
		// 1 + 0.001 = 1.001 > 0.99 + 0.002 = 0.992.
		{"1% more goodput beats half the RTT", []sched.PathInfo{path(1, 20*ms, gp), path(2, 10*ms, 0.99*gp)}, 0},
		// 1.001 < 0.9995 + 0.002 = 1.0015.
		{"0.05% more goodput does not", []sched.PathInfo{path(1, 20*ms, gp), path(2, 10*ms, 0.9995*gp)}, 1},
		// Identical paths: the strict γ_curr > γ_max keeps the first.
		{"exact tie: first listed", []sched.PathInfo{path(2, 10*ms, gp), path(1, 10*ms, gp)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(tt.paths...); got != tt.want {
				t.Errorf("got path index %d, want %d", got, tt.want)
			}
		})
	}
}

// literalAlgorithm1 is Algorithm 1 exactly as printed, with the assignment
// "γ_curr = γ_max" that leaves γ_max at 0 (backup/availability checks left
// out: the test paths are all usable).
func literalAlgorithm1(paths []sched.PathInfo, gpMax, rttMax float64) int {
	best, gammaMax := -1, 0.0
	for i := range paths {
		p := &paths[i]
		gammaCurr := Utility(Goodput(p), gpMax, p.SmoothedRTT.Seconds(), rttMax)
		if p.SendingAllowed() && gammaCurr > gammaMax {
			gammaCurr = gammaMax // as printed: γ_max is never updated
			best = i
		}
		_ = gammaCurr
	}
	return best
}

// Algorithm 1: "if CWND_available_for_SF_i and γ_curr > γ_max then γ_curr =
// γ_max; best_SF = SF_i". The intent (§3: "the SF_i is selected as the best SF
// to send a packet, which has the highest value of γ") is γ_max = γ_curr.
func TestGammaMaxSlip(t *testing.T) {
	paths := []sched.PathInfo{
		path(1, 10*ms, 3e6), // γ ≈ 1.003, the best
		path(2, 20*ms, 2e6), // γ ≈ 0.668
		path(3, 30*ms, 1e6), // γ ≈ 0.334, listed last
	}
	if got, want := literalAlgorithm1(paths, 3e6, 0.030), 2; got != want {
		t.Fatalf("literal Algorithm 1: got %d, want %d (the last path with room)", got, want)
	}
	if got, want := decide(paths...), 0; got != want {
		t.Errorf("Decide: got path index %d, want %d (highest γ)", got, want)
	}
}

// "if SF i is backup then continue; if SF_i is unavailable then continue; if
// SF_i is temp_unavailable then continue" and "if CWND_available_for_SF_i".
// "Backup SFs are SFs that are specifically designated as such by the sender
// and are only utilized if no normal SFs are available."
func TestSkippedPaths(t *testing.T) {
	best := path(1, 10*ms, 5e6) // would win on γ
	full := best
	full.BytesInFlight = full.CongestionWindow
	failed := best
	failed.PotentiallyFailed = true
	pto := best
	pto.PTOCount = 1
	backup := best
	backup.Backup = true
	other := path(2, 40*ms, 1e6)
	otherFull := other
	otherFull.BytesInFlight = otherFull.CongestionWindow
	fresh := path(3, 0, 0)
	fresh.SmoothedRTT = 0

	tests := []struct {
		name  string
		paths []sched.PathInfo
		want  int
	}{
		{"no window room", []sched.PathInfo{full, other}, 1},
		{"unavailable", []sched.PathInfo{failed, other}, 1},
		{"temporarily unavailable", []sched.PathInfo{pto, other}, 1},
		{"backup while a normal path is available", []sched.PathInfo{backup, other}, 1},
		{"backup when no normal path can send", []sched.PathInfo{backup, otherFull}, 0},
		{"backup when the normal path is temporarily unavailable", []sched.PathInfo{backup, pto}, 0},
		{"nothing usable: wait", []sched.PathInfo{full, otherFull}, -1},
		{"unmeasured path probed", []sched.PathInfo{otherFull, fresh}, 1},
		{"unmeasured path not preferred", []sched.PathInfo{fresh, other}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(tt.paths...); got != tt.want {
				t.Errorf("got path index %d, want %d", got, tt.want)
			}
		})
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) {
		schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() })
	})
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
