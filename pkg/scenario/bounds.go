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
// would take (from the end of the handshake until Bytes have crossed the
// summed links; see FCTLowerBound), or over [0, Duration] for a Timed
// scenario. Within that interval the rate follows the schedule's steps and
// linear ramps, is 0 inside outage windows, and inside a handoff window falls
// linearly to 10% over the degradation and is 0 afterwards. Loss is not
// subtracted. A trace-driven link counts at its RateBps, the trace's mean.
// Call it on a resolved scenario: it uses the base values of Ranges-drawn
// parameters.
func (s Scenario) CapacityBps() float64 {
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

// FCTLowerBound is a lower bound on the flow completion time, by an ideal
// fluid model: one RTT of the fastest path for the handshake, then the time
// for Bytes·8 bits to cross the summed Down rates (time-varying as described
// at CapacityBps; for constant rates this is Bytes·8 / Σ rate), plus the Down
// one-way delay of the fastest path for the last byte to arrive. The fastest
// path is the non-backup path of smallest RTT at time 0. If the fluid
// transfer cannot end by Duration it is extrapolated at the mean rate over
// the run; the result is +Inf if that rate is 0.
func (s Scenario) FCTLowerBound() time.Duration {
	h := s.handshake()
	end := s.fluidEnd(h)
	if math.IsInf(end, 1) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(end*float64(time.Second)) + s.Paths[s.fastest()].Down.Delay.D()
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
		l := p.Down
		for _, st := range l.Schedule {
			bp = append(bp, st.At.Seconds(), (st.At + st.Ramp).Seconds())
		}
		for _, w := range l.Outages {
			bp = append(bp, w.Start.Seconds(), w.End.Seconds())
		}
		for _, w := range l.Handoffs {
			bp = append(bp, w.Start.Seconds(), (w.Start + l.degrade(w)).Seconds(), w.End.Seconds())
		}
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
