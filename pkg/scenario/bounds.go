package scenario

import (
	"math"
	"slices"
	"time"
)

// Handoff shape, as emu.Handoff models it: the rate falls linearly to
// handoffRateFrac of its value over the degradation, then the link is
// unusable until the window ends.
const handoffRateFrac = 0.1

// CapacityBps is the scenario's bottleneck capacity, bits/s: the sum over all
// paths (backup paths included) of the Down link's rate, averaged over time.
//
// Time-varying rates are averaged over the interval an ideal fluid transfer
// would take (from one RTT of the fastest path until Bytes have crossed the
// summed links), or over [0, Duration] for a Timed
// scenario. Within that interval the rate follows the schedule's steps and
// linear ramps, is 0 inside outage windows, and inside a handoff window falls
// linearly to 10% over the degradation and is 0 afterwards. Loss is not
// subtracted. A trace-driven link counts at its RateBps, the trace's mean.
// Call it on a resolved scenario: it uses the base values of Ranges-drawn
// parameters.
func (s Scenario) CapacityBps() float64 {
	if s.shared() {
		return s.sharedCapacityBps() // see shared.go
	}
	if s.Timed {
		return s.bitsBetween(0, s.Duration.D()) / s.Duration.Seconds()
	}
	h := s.handshake()
	end := s.fluidEnd(h)
	if math.IsInf(end, 1) {
		return 0
	}
	return float64(s.Bytes) * 8 / (end - h.Seconds())
}

// FCTLowerBound is a lower bound on the flow completion time of a download
// run the way pkg/bench runs it (the join policy of bench.Transfer and
// mpquic-client): the client opens path 0 (QUIC handshake, then the
// session's Hello and Accept: 2 RTTs of path 0), sends its request, which
// reaches the server one Up delay later, and then joins paths 1, 2, ... one
// after another while the download runs, each join taking 2 RTTs of its path
// (QUIC handshake, then Join and Accept); the server can send on path i once
// its Join has arrived. From then on each path carries bits at its Down rate
// (time-varying as described at CapacityBps; trace-driven links at their
// mean), and a bit sent at t arrives one Down delay later. The bound is the
// first time by which Bytes·8 bits can have arrived over all paths together,
// by this ideal fluid model (no loss, no queueing, no congestion control, no
// receive window). Times are from the start of the run, at the client's
// first packet. Past Duration every link keeps its last rate; the result is
// the largest time.Duration if the bytes can never arrive.
func (s Scenario) FCTLowerBound() time.Duration {
	if len(s.Paths) == 0 || s.shared() { // no bound for shared bottlenecks (shared.go)
		return time.Duration(math.MaxInt64)
	}
	starts := s.sendStarts()
	need := float64(s.Bytes) * 8
	arrived := func(t float64) float64 {
		var sum float64
		for i, p := range s.Paths {
			sum += p.Down.bitsBetween(starts[i], t-p.Down.Delay.Seconds())
		}
		return sum
	}
	lo := math.Inf(1)
	for i, p := range s.Paths {
		lo = min(lo, starts[i]+p.Down.Delay.Seconds())
	}
	hi := max(lo, 1e-3)
	for arrived(hi) < need {
		if hi > maxBoundSec {
			return time.Duration(math.MaxInt64)
		}
		lo, hi = hi, 2*hi
	}
	for range 100 {
		m := (lo + hi) / 2
		if arrived(m) >= need {
			hi = m
		} else {
			lo = m
		}
	}
	return time.Duration(hi * float64(time.Second))
}

// maxBoundSec is where FCTLowerBound gives up: 100 years, s.
const maxBoundSec = 100 * 365 * 86400

// sendStarts returns, per path, the time, s, from which the server can send
// on it under the join policy described at FCTLowerBound.
func (s Scenario) sendStarts() []float64 {
	out := make([]float64, len(s.Paths))
	rtt0 := s.Paths[0].RTT().Seconds()
	out[0] = 2*rtt0 + s.Paths[0].Up.Delay.Seconds()
	c := 2 * rtt0 // the client starts joining once the first path is up
	for i := 1; i < len(s.Paths); i++ {
		p := s.Paths[i]
		out[i] = c + p.RTT().Seconds() + p.Up.Delay.Seconds()
		c += 2 * p.RTT().Seconds()
	}
	return out
}

// CapacityCurve is the summed Down capacity over [0, Duration] as a
// piecewise-linear curve through the points (t[k], bps[k]): t in s from the
// start of the run, bps in bits/s. A step (a schedule step, an outage, a
// handoff's end) is two points at the same time; a trace-driven link counts
// at its mean rate, as at CapacityBps.
func (s Scenario) CapacityCurve() (t, bps []float64) {
	if s.shared() { // flat at sharedCapacityBps (shared.go)
		return []float64{0, s.Duration.Seconds()}, []float64{s.sharedCapacityBps(), s.sharedCapacityBps()}
	}
	const eps = 1e-9 // s: evaluate just either side of a breakpoint
	add := func(x, y float64) {
		if n := len(t); n > 0 && math.Abs(t[n-1]-x) < 2*eps && math.Abs(bps[n-1]-y) <= 1e-6*max(1, math.Abs(y)) {
			return
		}
		t, bps = append(t, x), append(bps, y)
	}
	bp := s.breakpoints()
	for k, x := range bp {
		if k > 0 {
			// A quadratic piece (a ramp inside a handoff's degradation) gets
			// its midpoint; linear and constant pieces need none.
			a, m := bp[k-1], (bp[k-1]+x)/2
			ya, ym, yb := s.rate(a+eps), s.rate(m), s.rate(x-eps)
			if math.Abs(ym-(ya+yb)/2) > 1e-6*max(1, math.Abs(ym)) {
				add(m, ym)
			}
			add(x, yb)
		}
		if k < len(bp)-1 {
			add(x, s.rate(x+eps))
		}
	}
	return t, bps
}

// fastest returns the index of the non-backup path of smallest base RTT.
func (s Scenario) fastest() int {
	best := -1
	for i, p := range s.Paths {
		if p.Backup && best >= 0 {
			continue
		}
		if best < 0 || (s.Paths[best].Backup && !p.Backup) || p.RTT() < s.Paths[best].RTT() {
			best = i
		}
	}
	return best
}

// handshake is one RTT of the fastest path.
func (s Scenario) handshake() time.Duration {
	if len(s.Paths) == 0 {
		return 0
	}
	return s.Paths[s.fastest()].RTT()
}

// fluidEnd returns the time, s, at which Bytes·8 bits have crossed the summed
// Down links when sending starts at t0.
func (s Scenario) fluidEnd(t0 time.Duration) float64 {
	need := float64(s.Bytes) * 8
	bps := s.breakpoints()
	a := t0.Seconds()
	var got float64
	for _, b := range bps {
		if b <= a {
			continue
		}
		seg := s.integral(a, b)
		if got+seg >= need {
			lo, hi := a, b
			for range 60 {
				m := (lo + hi) / 2
				if got+s.integral(a, m) >= need {
					hi = m
				} else {
					lo = m
				}
			}
			return hi
		}
		got += seg
		a = b
	}
	dur := s.Duration.Seconds()
	if dur <= t0.Seconds() {
		// The handshake alone outlasts the run; extrapolate at the base rate.
		r := s.rate(t0.Seconds())
		if r <= 0 {
			return math.Inf(1)
		}
		return t0.Seconds() + need/r
	}
	mean := got / (dur - t0.Seconds())
	if mean <= 0 {
		return math.Inf(1)
	}
	return dur + (need-got)/mean
}

// bitsBetween integrates the summed Down rate over [a, b], bits.
func (s Scenario) bitsBetween(a, b time.Duration) float64 {
	var sum float64
	x := a.Seconds()
	for _, bp := range s.breakpoints() {
		if bp <= x {
			continue
		}
		if bp >= b.Seconds() {
			break
		}
		sum += s.integral(x, bp)
		x = bp
	}
	return sum + s.integral(x, b.Seconds())
}

// breakpoints are the times, s, between which every Down rate is a product of
// two linear pieces; the last one is Duration.
func (s Scenario) breakpoints() []float64 {
	bp := []float64{0, s.Duration.Seconds()}
	for _, p := range s.Paths {
		bp = append(bp, p.Down.breakpoints()...)
	}
	slices.Sort(bp)
	return slices.Compact(bp)
}

// integral integrates the summed Down rate over [a, b] by Simpson's rule,
// which is exact for the quadratic pieces between breakpoints.
func (s Scenario) integral(a, b float64) float64 {
	if b <= a {
		return 0
	}
	// Evaluate just inside the interval so that a step at a breakpoint
	// counts on the correct side.
	const eps = 1e-12
	return (b - a) / 6 * (s.rate(a+eps) + 4*s.rate((a+b)/2) + s.rate(b-eps))
}

// rate is the summed Down rate at t seconds, bits/s.
func (s Scenario) rate(t float64) float64 {
	var sum float64
	for _, p := range s.Paths {
		sum += p.Down.rateAt(t)
	}
	return sum
}

// bitsBetween integrates the link's Down rate over [a, b] seconds, bits
// (0 if b <= a); past its last breakpoint the link keeps its last rate.
func (l Link) bitsBetween(a, b float64) float64 {
	if b <= a {
		return 0
	}
	var sum float64
	x := a
	for _, bp := range l.breakpoints() {
		if bp <= x {
			continue
		}
		if bp >= b {
			break
		}
		sum += l.integral(x, bp)
		x = bp
	}
	return sum + l.integral(x, b)
}

// breakpoints are the link's times, s, between which its rate is a product
// of two linear pieces.
func (l Link) breakpoints() []float64 {
	var bp []float64
	for _, st := range l.Schedule {
		bp = append(bp, st.At.Seconds(), (st.At + st.Ramp).Seconds())
	}
	for _, w := range l.Outages {
		bp = append(bp, w.Start.Seconds(), w.End.Seconds())
	}
	for _, w := range l.Handoffs {
		bp = append(bp, w.Start.Seconds(), (w.Start + l.degrade(w)).Seconds(), w.End.Seconds())
	}
	slices.Sort(bp)
	return slices.Compact(bp)
}

// integral integrates the link's rate over [a, b] by Simpson's rule, exact
// between breakpoints (see Scenario.integral).
func (l Link) integral(a, b float64) float64 {
	const eps = 1e-12
	return (b - a) / 6 * (l.rateAt(a+eps) + 4*l.rateAt((a+b)/2) + l.rateAt(b-eps))
}

// rateAt is the link's rate at t seconds, bits/s, following its schedule,
// outages and handoffs.
func (l Link) rateAt(t float64) float64 {
	r := l.RateBps
	for _, st := range l.Schedule {
		if st.RateBps == nil {
			continue
		}
		at, ramp := st.At.Seconds(), st.Ramp.Seconds()
		if t < at {
			break
		}
		if ramp > 0 && t < at+ramp {
			r += (*st.RateBps - r) * (t - at) / ramp
			break
		}
		r = *st.RateBps
	}
	for _, w := range l.Outages {
		if t >= w.Start.Seconds() && t < w.End.Seconds() {
			return 0
		}
	}
	for _, w := range l.Handoffs {
		t1, t2, d := w.Start.Seconds(), w.End.Seconds(), l.degrade(w).Seconds()
		switch {
		case t < t1 || t >= t2:
		case t < t1+d:
			return r * (1 - (1-handoffRateFrac)*(t-t1)/d)
		default:
			return 0
		}
	}
	return r
}

// degrade is the degradation time of handoff window w.
func (l Link) degrade(w Window) Duration {
	d := l.HandoffDegrade
	if d == 0 {
		d = (w.End - w.Start) / 2
	}
	return min(d, w.End-w.Start)
}
