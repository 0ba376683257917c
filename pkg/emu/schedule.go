package emu

import (
	"fmt"
	"time"
)

// Field selects which LinkConfig values a Step sets.
type Field uint8

// The fields a Step can set; combine them with |.
const (
	FieldRate  Field = 1 << iota // Step.RateBps
	FieldDelay                   // Step.Delay
	FieldLoss                    // Step.Loss (the Bernoulli loss; with GE it adds to the GE model)
	FieldQueue                   // Step.QueueBytes
	numFields  = iota
)

// Step is one piecewise change of a link, applied At a time relative to the
// network's start. The fields named in Set move to the step's values, either
// at once (Ramp == 0) or linearly over Ramp, starting from the values in force
// at At. A changed rate applies to packets that arrive after the change;
// packets already queued keep the departure times computed on arrival.
type Step struct {
	At         time.Duration // when the step starts, relative to Network start
	Ramp       time.Duration // duration of the linear change; 0 = instant
	Set        Field         // which of the fields below apply
	RateBps    float64       // new bottleneck rate, bits/s (> 0)
	Delay      time.Duration // new one-way propagation delay
	Loss       float64       // new Bernoulli loss probability in [0, 1]
	QueueBytes int           // new drop-tail queue capacity, bytes (> 0)
}

func (s Step) validate(i int, hasTrace bool) error {
	field := func(f string) string { return fmt.Sprintf("Schedule[%d].%s", i, f) }
	switch {
	case s.At < 0:
		return fmt.Errorf("%s = %v: must be >= 0", field("At"), s.At)
	case s.Ramp < 0:
		return fmt.Errorf("%s = %v: must be >= 0", field("Ramp"), s.Ramp)
	case s.Set == 0 || s.Set >= 1<<numFields:
		return fmt.Errorf("%s = %#x: must name at least one known field", field("Set"), s.Set)
	case s.Set&FieldRate != 0 && hasTrace:
		return fmt.Errorf("%s: a rate step cannot apply to a link driven by a Trace", field("RateBps"))
	case s.Set&FieldRate != 0 && !(s.RateBps > 0 && s.RateBps < 1e15):
		return fmt.Errorf("%s = %v: must be > 0 and finite", field("RateBps"), s.RateBps)
	case s.Set&FieldDelay != 0 && s.Delay < 0:
		return fmt.Errorf("%s = %v: must be >= 0", field("Delay"), s.Delay)
	case s.Set&FieldLoss != 0 && !(s.Loss >= 0 && s.Loss <= 1):
		return fmt.Errorf("%s = %v: must be in [0,1]", field("Loss"), s.Loss)
	case s.Set&FieldQueue != 0 && s.QueueBytes <= 0:
		return fmt.Errorf("%s = %d: must be > 0", field("QueueBytes"), s.QueueBytes)
	}
	return nil
}

// Handoff returns the Schedule of an EdAR-style handoff away from a link whose
// unimpaired configuration is base. The shape, with d = degrade:
//
//   - from t1 to t1+d: linear ramp of the rate from base.RateBps down to 10% of
//     it (skipped if base.RateBps is 0, unlimited), of the one-way delay from
//     base.Delay up to 2*base.Delay + 50 ms, and of the Bernoulli loss from
//     base.Loss up to 30%;
//   - from t1+d to t2: loss 100%, the link is unusable;
//   - at t2: rate, delay and loss return at once to base's values.
//
// If t1+d > t2, d is shortened to t2-t1. Set the result as base.Schedule (it
// replaces any schedule base had). Times are relative to the Network start.
func Handoff(t1, t2 time.Duration, base LinkConfig, degrade time.Duration) []Step {
	if degrade > t2-t1 {
		degrade = max(t2-t1, 0)
	}
	set := FieldDelay | FieldLoss
	if base.RateBps > 0 && base.Trace == nil {
		set |= FieldRate
	}
	return []Step{
		{At: t1, Ramp: degrade, Set: set, RateBps: base.RateBps * handoffRateFrac,
			Delay: 2*base.Delay + handoffExtraDelay, Loss: max(handoffPeakLoss, base.Loss)},
		{At: t1 + degrade, Set: FieldLoss, Loss: 1},
		{At: t2, Set: set, RateBps: base.RateBps, Delay: base.Delay, Loss: base.Loss},
	}
}

const (
	handoffRateFrac   = 0.1                   // rate at the end of the degradation, fraction of base
	handoffExtraDelay = 50 * time.Millisecond // added to twice the base delay at the end of the degradation
	handoffPeakLoss   = 0.3                   // Bernoulli loss at the end of the degradation
)

// ramp is one field's linear change from `from` at start to `to` at start+dur.
type ramp struct {
	from, to   float64
	start, dur time.Duration
}

func (r *ramp) at(t time.Duration) float64 {
	if r.dur <= 0 || t >= r.start+r.dur {
		return r.to
	}
	if t <= r.start {
		return r.from
	}
	return r.from + (r.to-r.from)*float64(t-r.start)/float64(r.dur)
}

// Field indexes into schedule.f.
const (
	iRate = iota
	iDelay
	iLoss
	iQueue
)

// schedule evaluates a sorted []Step over time that only moves forward.
type schedule struct {
	steps []Step
	next  int // first step not yet applied
	f     [numFields]ramp
}

// reset puts the schedule back to the base values before any step.
func (s *schedule) reset(steps []Step, base [numFields]float64) {
	s.steps, s.next = steps, 0
	for i, v := range base {
		s.f[i] = ramp{from: v, to: v}
	}
}

// values returns the rate (bits/s), delay (ns), loss and queue (bytes) in
// force at now; now must not decrease between calls.
func (s *schedule) values(now time.Duration) (v [numFields]float64) {
	for s.next < len(s.steps) && s.steps[s.next].At <= now {
		st := &s.steps[s.next]
		s.next++
		to := [numFields]float64{st.RateBps, float64(st.Delay), st.Loss, float64(st.QueueBytes)}
		for i := range numFields {
			if st.Set&(1<<i) == 0 {
				continue
			}
			from := s.f[i].at(st.At)
			dur := st.Ramp
			if i == iRate && from == 0 {
				dur = 0 // from unlimited: no meaningful ramp
			}
			s.f[i] = ramp{from: from, to: to[i], start: st.At, dur: dur}
		}
	}
	for i := range numFields {
		v[i] = s.f[i].at(now)
	}
	return v
}
