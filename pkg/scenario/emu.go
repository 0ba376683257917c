package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Emu converts p to the in-process emulator's form. Outages map one to one;
// schedule steps become emu.Steps setting the fields they name; each handoff
// window becomes the steps of emu.Handoff, starting from the link's values
// in force when the handoff begins; a trace file is loaded with
// emu.LoadTrace and replaces the rate. Emu panics if a trace file cannot be
// loaded; Scenario.EmuPaths returns that error instead.
func (p PathSpec) Emu() emu.PathSpec {
	e, err := p.emu()
	if err != nil {
		panic(err)
	}
	return e
}

// EmuPaths converts every path of s (see PathSpec.Emu) and returns them with
// the paths' backup flags, in path order: the Paths and Backup of a bench
// run. s should be resolved (see Resolve) and expanded (see Expand).
func (s Scenario) EmuPaths() (paths []emu.PathSpec, backup []bool, err error) {
	for i, p := range s.Paths {
		e, err := p.emu()
		if err != nil {
			return nil, nil, fmt.Errorf("scenario %s: paths[%d]: %w", s.Name, i, err)
		}
		paths = append(paths, e)
		backup = append(backup, p.Backup)
	}
	return paths, backup, nil
}

func (p PathSpec) emu() (emu.PathSpec, error) {
	up, err := p.Up.emu()
	if err != nil {
		return emu.PathSpec{}, fmt.Errorf("up: %w", err)
	}
	down, err := p.Down.emu()
	if err != nil {
		return emu.PathSpec{}, fmt.Errorf("down: %w", err)
	}
	return emu.PathSpec{Up: up, Down: down}, nil
}

// emu converts one direction.
func (l Link) emu() (emu.LinkConfig, error) {
	c := emu.LinkConfig{
		RateBps:    l.RateBps,
		Delay:      l.Delay.D(),
		Jitter:     l.Jitter.D(),
		QueueBytes: l.QueueBytes,
		Loss:       l.Loss,
	}
	if l.GE != nil {
		c.GE = &emu.GilbertElliott{PGoodBad: l.GE.PGoodBad, PBadGood: l.GE.PBadGood, LossGood: l.GE.LossGood, LossBad: l.GE.LossBad}
	}
	if l.Trace != "" {
		t, err := loadTrace(l.Trace)
		if err != nil {
			return emu.LinkConfig{}, err
		}
		c.Trace, c.RateBps = t, 0
	}
	for _, w := range l.Outages {
		c.Outages = append(c.Outages, emu.Window{Start: w.Start.D(), End: w.End.D()})
	}
	for _, st := range l.Schedule {
		e := emu.Step{At: st.At.D(), Ramp: st.Ramp.D()}
		if st.RateBps != nil {
			e.Set |= emu.FieldRate
			e.RateBps = *st.RateBps
		}
		if st.Delay != nil {
			e.Set |= emu.FieldDelay
			e.Delay = st.Delay.D()
		}
		if st.Loss != nil {
			e.Set |= emu.FieldLoss
			e.Loss = *st.Loss
		}
		if st.QueueBytes != nil {
			e.Set |= emu.FieldQueue
			e.QueueBytes = *st.QueueBytes
		}
		c.Schedule = append(c.Schedule, e)
	}
	for _, w := range l.Handoffs {
		base := c
		base.RateBps, base.Delay, base.Loss = l.valuesAt(w.Start)
		if c.Trace != nil {
			base.RateBps = 0
		}
		c.Schedule = append(c.Schedule, emu.Handoff(w.Start.D(), w.End.D(), base, l.degrade(w).D())...)
	}
	slices.SortStableFunc(c.Schedule, func(a, b emu.Step) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	return c, nil
}

// valuesAt returns the rate (bits/s), one-way delay and Bernoulli loss the
// link's schedule puts in force at t, ignoring outages and handoffs.
func (l Link) valuesAt(t Duration) (rate float64, delay time.Duration, loss float64) {
	rate, d, loss := l.RateBps, float64(l.Delay), l.Loss
	at := func(from, to float64, st Step) float64 {
		if st.Ramp > 0 && t < st.At+st.Ramp {
			return from + (to-from)*float64(t-st.At)/float64(st.Ramp)
		}
		return to
	}
	for _, st := range l.Schedule {
		if st.At > t {
			break
		}
		if st.RateBps != nil {
			rate = at(rate, *st.RateBps, st)
		}
		if st.Delay != nil {
			d = at(d, float64(*st.Delay), st)
		}
		if st.Loss != nil {
			loss = at(loss, *st.Loss, st)
		}
	}
	return rate, time.Duration(d), loss
}

// TraceMeanRateBps is the mean delivery rate of a Mahimahi trace file (or a
// BuiltinTrace),
// bits/s: the value to give a trace-driven Link's RateBps.
func TraceMeanRateBps(path string) (float64, error) {
	t, err := loadTrace(path)
	if err != nil {
		return 0, err
	}
	return t.MeanRateBps(), nil
}
