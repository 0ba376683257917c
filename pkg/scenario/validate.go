package scenario

import (
	"fmt"
	"github.com/mpqsched/mpqsched/pkg/cc"
	"regexp"
)

// FieldError is a validation or decoding error naming the offending field by
// its JSON path, such as "paths[1].down.loss".
type FieldError struct {
	Scenario string // scenario name, if known
	Path     string // JSON field path
	Msg      string // what is wrong
}

func (e *FieldError) Error() string {
	if e.Scenario != "" {
		return fmt.Sprintf("scenario %s: %s: %s", e.Scenario, e.Path, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// checker collects the first error of a validation pass.
type checker struct {
	name string
	err  error
}

func (c *checker) fail(path, format string, a ...any) {
	if c.err == nil {
		c.err = &FieldError{Scenario: c.name, Path: path, Msg: fmt.Sprintf(format, a...)}
	}
}

func (c *checker) prob(path string, v float64) {
	if !(v >= 0 && v <= 1) {
		c.fail(path, "%v outside [0,1]", v)
	}
}

func (c *checker) rate(path string, v float64) {
	if !(v > 0 && v < 1e15) {
		c.fail(path, "%v must be > 0 bits/s and finite", v)
	}
}

func (c *checker) nonNeg(path string, d Duration) {
	if d < 0 {
		c.fail(path, "%v must be >= 0", d)
	}
}

// MaxPaths is the most paths a scenario may have: the number of paths a
// session accepts by default (session.DefaultMaxPaths), which is what
// pkg/bench runs with. A scenario with more would pass validation only to
// fail every run when its extra paths try to join.
const MaxPaths = 8

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.@=%-]+$`)

// Validate reports the first invalid field of s as a *FieldError. It checks
// that rates are positive, probabilities lie in [0, 1], delays are not
// negative, windows are sorted, disjoint and end by Duration, schedule steps
// are sorted, do not overlap and end by Duration, that there are 1 to
// MaxPaths paths, that ranges and sweeps are well formed, and that
// bottlenecks and cross traffic name existing paths and bottlenecks.
func (s Scenario) Validate() error {
	c := &checker{name: s.Name}
	if !nameRE.MatchString(s.Name) {
		c.fail("name", "%q must be non-empty letters, digits and -_.@=%%", s.Name)
	}
	if len(s.Paths) == 0 {
		c.fail("paths", "at least one path is needed")
	}
	if len(s.Paths) > MaxPaths {
		c.fail("paths", "%d paths; a session takes at most %d (session.DefaultMaxPaths)", len(s.Paths), MaxPaths)
	}
	if s.Bytes <= 0 {
		c.fail("bytes", "%d must be > 0", s.Bytes)
	}
	if s.ReceiveBuffer < 0 {
		c.fail("receive_buffer", "%d must be >= 0 (0 = default)", s.ReceiveBuffer)
	}
	if s.Coupling != "" {
		if _, err := cc.New(s.Coupling); err != nil {
			c.fail("coupling", "%v", err)
		}
	}
	if s.Duration <= 0 {
		c.fail("duration", "%v must be > 0", s.Duration)
	}
	if s.Repeat < 0 {
		c.fail("repeat", "%d must be >= 0", s.Repeat)
	}
	active := 0
	for i, p := range s.Paths {
		pp := fmt.Sprintf("paths[%d]", i)
		c.link(pp+".up", p.Up, s.Duration)
		c.link(pp+".down", p.Down, s.Duration)
		if !p.Backup {
			active++
		}
	}
	if len(s.Paths) > 0 && active == 0 {
		c.fail("paths", "every path is a backup; at least one must not be")
	}
	if s.Ranges != nil {
		c.ranges("ranges", *s.Ranges, s)
	}
	if s.Sweep != nil {
		c.sweep("sweep", *s.Sweep, len(s.Paths))
	}
	c.bottlenecks(s)
	c.cross(s)
	c.workload(s)
	return c.err
}

func (c *checker) link(path string, l Link, limit Duration) {
	c.rate(path+".rate_bps", l.RateBps)
	c.nonNeg(path+".delay", l.Delay)
	c.nonNeg(path+".jitter", l.Jitter)
	c.prob(path+".loss", l.Loss)
	if l.QueueBytes < 0 {
		c.fail(path+".queue_bytes", "%d must be >= 0 (0 = default)", l.QueueBytes)
	}
	if l.GE != nil {
		g := path + ".gilbert_elliott"
		c.prob(g+".p_good_bad", l.GE.PGoodBad)
		c.prob(g+".p_bad_good", l.GE.PBadGood)
		c.prob(g+".loss_good", l.GE.LossGood)
		c.prob(g+".loss_bad", l.GE.LossBad)
		if l.Loss != 0 {
			c.fail(path+".loss", "%v must be 0 when gilbert_elliott is set (it replaces loss)", l.Loss)
		}
	}
	c.windows(path+".outages", l.Outages, limit)
	c.windows(path+".handoffs", l.Handoffs, limit)
	c.nonNeg(path+".handoff_degrade", l.HandoffDegrade)
	prevEnd, prevAt := Duration(-1), ""
	for i, st := range l.Schedule {
		sp := fmt.Sprintf("%s.schedule[%d]", path, i)
		c.nonNeg(sp+".at", st.At)
		c.nonNeg(sp+".ramp", st.Ramp)
		if st.RateBps == nil && st.Delay == nil && st.Loss == nil && st.QueueBytes == nil {
			c.fail(sp, "sets nothing; give rate_bps, delay, loss or queue_bytes")
		}
		if st.RateBps != nil {
			if l.Trace != "" {
				c.fail(sp+".rate_bps", "a rate step cannot apply to a link driven by a trace")
			}
			c.rate(sp+".rate_bps", *st.RateBps)
		}
		if st.Delay != nil {
			c.nonNeg(sp+".delay", *st.Delay)
		}
		if st.Loss != nil {
			c.prob(sp+".loss", *st.Loss)
		}
		if st.QueueBytes != nil && *st.QueueBytes <= 0 {
			c.fail(sp+".queue_bytes", "%d must be > 0", *st.QueueBytes)
		}
		if st.At < prevEnd {
			c.fail(sp+".at", "%v is before the end of %s (%v); steps must be sorted and not overlap", st.At, prevAt, prevEnd)
		}
		if end := st.At + st.Ramp; limit > 0 && end > limit {
			c.fail(sp+".at", "step ends at %v, beyond the scenario duration %v", end, limit)
		}
		for j, w := range l.Handoffs {
			if st.At < w.End && st.At+st.Ramp >= w.Start {
				c.fail(sp+".at", "step at %v (ramp %v) falls in handoffs[%d] [%v, %v); a handoff controls the link until it ends", st.At, st.Ramp, j, w.Start, w.End)
			}
		}
		prevEnd, prevAt = st.At+st.Ramp, fmt.Sprintf("schedule[%d]", i)
	}
}

func (c *checker) windows(path string, ws []Window, limit Duration) {
	for i, w := range ws {
		wp := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case w.Start < 0:
			c.fail(wp+".start", "%v must be >= 0", w.Start)
		case w.End <= w.Start:
			c.fail(wp+".end", "%v must be after start %v", w.End, w.Start)
		case i > 0 && w.Start < ws[i-1].End:
			c.fail(wp+".start", "%v overlaps or precedes window %d (ends %v); windows must be sorted and disjoint", w.Start, i-1, ws[i-1].End)
		case limit > 0 && w.End > limit:
			c.fail(wp+".end", "%v is beyond the scenario duration %v", w.End, limit)
		}
	}
}

func (c *checker) ranges(path string, r Ranges, s Scenario) {
	if b := r.Bytes; b != nil {
		if b.Min <= 0 || b.Max < b.Min {
			c.fail(path+".bytes", "[%d, %d] must satisfy 0 < min <= max", b.Min, b.Max)
		}
	}
	if len(r.Paths) > len(s.Paths) {
		c.fail(path+".paths", "%d entries for %d paths", len(r.Paths), len(s.Paths))
	}
	for i, pr := range r.Paths {
		pp := fmt.Sprintf("%s.paths[%d]", path, i)
		if f := pr.RateBps; f != nil {
			c.rate(pp+".rate_bps.min", f.Min)
			c.rate(pp+".rate_bps.max", f.Max)
			if f.Max < f.Min {
				c.fail(pp+".rate_bps", "max %v < min %v", f.Max, f.Min)
			}
		}
		if d := pr.Delay; d != nil {
			c.nonNeg(pp+".delay.min", d.Min)
			if d.Max < d.Min {
				c.fail(pp+".delay", "max %v < min %v", d.Max, d.Min)
			}
		}
		if f := pr.Loss; f != nil {
			c.prob(pp+".loss.min", f.Min)
			c.prob(pp+".loss.max", f.Max)
			if f.Max < f.Min {
				c.fail(pp+".loss", "max %v < min %v", f.Max, f.Min)
			}
		}
		c.nonNeg(pp+".every", pr.Every)
		if pr.Every > 0 && i < len(s.Paths) && (len(s.Paths[i].Up.Schedule) > 0 || len(s.Paths[i].Down.Schedule) > 0) {
			c.fail(pp+".every", "path %d already has a schedule; redrawn ranges would replace it", i)
		}
		if h := pr.Handoff; h != nil {
			hp := pp + ".handoff"
			switch {
			case h.Every <= 0:
				c.fail(hp+".every", "%v must be > 0", h.Every)
			case h.Offset < 0:
				c.fail(hp+".offset", "%v must be >= 0", h.Offset)
			case h.MinLen <= 0 || h.MaxLen < h.MinLen:
				c.fail(hp, "lengths [%v, %v] must satisfy 0 < min_len <= max_len", h.MinLen, h.MaxLen)
			case h.MaxLen > h.Every:
				c.fail(hp+".max_len", "%v exceeds the period %v", h.MaxLen, h.Every)
			}
			if i < len(s.Paths) && (len(s.Paths[i].Up.Handoffs) > 0 || len(s.Paths[i].Down.Handoffs) > 0) {
				c.fail(hp, "path %d already has handoff windows", i)
			}
		}
		if o := pr.Outages; o != nil && i < len(s.Paths) {
			c.outageProcess(pp+".outage_process", *o, s.Paths[i])
		}
	}
}

func (c *checker) sweep(path string, w Sweep, paths int) {
	n := 0
	for _, l := range []int{len(w.Bytes), len(w.RateBps), len(w.Delay), len(w.Loss)} {
		if l > 0 {
			n++
		}
	}
	if n != 1 {
		c.fail(path, "exactly one of bytes, rate_bps, delay, loss must list values (%d do)", n)
	}
	if len(w.Bytes) == 0 && (w.Path < 0 || w.Path >= paths) {
		c.fail(path+".path", "%d is not a path index (0..%d)", w.Path, paths-1)
	}
	for i, v := range w.Bytes {
		if v <= 0 {
			c.fail(fmt.Sprintf("%s.bytes[%d]", path, i), "%d must be > 0", v)
		}
	}
	for i, v := range w.RateBps {
		c.rate(fmt.Sprintf("%s.rate_bps[%d]", path, i), v)
	}
	for i, v := range w.Delay {
		c.nonNeg(fmt.Sprintf("%s.delay[%d]", path, i), v)
	}
	for i, v := range w.Loss {
		c.prob(fmt.Sprintf("%s.loss[%d]", path, i), v)
	}
}
