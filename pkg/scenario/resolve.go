package scenario

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clone returns a deep copy of s (no shared slices or pointers).
func (s Scenario) clone() Scenario {
	b, err := json.Marshal(s)
	if err != nil {
		panic("scenario: clone: " + err.Error())
	}
	var c Scenario
	if err := json.Unmarshal(b, &c); err != nil {
		panic("scenario: clone: " + err.Error())
	}
	return c
}

// Resolve draws the parameters in s.Ranges for one seed and returns the
// concrete scenario, with Ranges cleared; a scenario without Ranges comes back
// as a validated deep copy. The draw is deterministic: the same scenario name
// and seed give the same result, on every platform. Values are uniform within
// each range; a path's drawn rate, delay and loss apply to both directions;
// with Every > 0 they are redrawn as instant schedule steps; handoffs become
// windows on both directions, and so do the outage windows of an
// OutageProcess (drawn from a stream of their own per path). Call Expand first for a scenario with a Sweep
// (Resolve keeps the Sweep otherwise).
func (s Scenario) Resolve(seed int64) (Scenario, error) {
	if err := s.Validate(); err != nil {
		return Scenario{}, err
	}
	out := s.clone()
	if s.Ranges == nil {
		return out, nil
	}
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	r := out.Ranges
	out.Ranges = nil
	if r.Bytes != nil {
		out.Bytes = r.Bytes.Min + rng.Int64N(r.Bytes.Max-r.Bytes.Min+1)
	}
	for i, pr := range r.Paths {
		p := &out.Paths[i]
		draw := func() (rate *float64, delay *Duration, loss *float64) {
			if f := pr.RateBps; f != nil {
				v := uniform(rng, f.Min, f.Max)
				rate = &v
			}
			if d := pr.Delay; d != nil {
				// Whole microseconds keep the JSON form short.
				v := Duration(uniform(rng, float64(d.Min), float64(d.Max))).round(time.Microsecond)
				delay = &v
			}
			if f := pr.Loss; f != nil {
				v := uniform(rng, f.Min, f.Max)
				loss = &v
			}
			return
		}
		rate, delay, loss := draw()
		for _, l := range []*Link{&p.Up, &p.Down} {
			if rate != nil {
				l.RateBps = *rate
			}
			if delay != nil {
				l.Delay = *delay
			}
			if loss != nil {
				if l.GE != nil {
					return Scenario{}, &FieldError{Scenario: s.Name, Path: fmt.Sprintf("ranges.paths[%d].loss", i), Msg: "path uses gilbert_elliott; a drawn loss would conflict"}
				}
				l.Loss = *loss
			}
		}
		if pr.Every > 0 && (rate != nil || delay != nil || loss != nil) {
			for at := pr.Every; at < out.Duration; at += pr.Every {
				rate, delay, loss := draw()
				st := Step{At: at, RateBps: rate, Delay: delay, Loss: loss}
				p.Up.Schedule = append(p.Up.Schedule, st)
				p.Down.Schedule = append(p.Down.Schedule, st)
			}
		}
		if hr := pr.Handoff; hr != nil {
			for start := hr.Offset; start < out.Duration; start += hr.Every {
				n := Duration(uniform(rng, float64(hr.MinLen), float64(hr.MaxLen))).round(time.Millisecond)
				t1 := start + Duration(uniform(rng, 0, float64(hr.Every-n))).round(time.Millisecond)
				w := Window{Start: t1, End: min(t1+n, out.Duration)}
				if w.End <= w.Start {
					break
				}
				p.Up.Handoffs = append(p.Up.Handoffs, w)
				p.Down.Handoffs = append(p.Down.Handoffs, w)
			}
		}
		if op := pr.Outages; op != nil {
			// A stream of its own, so that adding a process to one path
			// leaves every other draw of the scenario as it was.
			ws := op.draw(rand.New(rand.NewPCG(uint64(seed), h.Sum64()^uint64(i+1)*0x9e3779b97f4a7c15)), out.Duration)
			p.Up.Outages = ws
			p.Down.Outages = slices.Clone(ws)
		}
	}
	if err := out.Validate(); err != nil {
		return Scenario{}, err
	}
	return out, nil
}

// draw returns the outage windows of one run of length limit.
func (o OutageProcess) draw(rng *rand.Rand, limit Duration) []Window {
	var ws []Window
	for t := o.Offset; ; {
		start := (t + Duration(rng.ExpFloat64()*float64(o.MeanGap))).round(time.Millisecond)
		n := Duration(uniform(rng, float64(o.MinLen), float64(o.MaxLen))).round(time.Millisecond)
		w := Window{Start: start, End: min(start+max(n, Duration(time.Millisecond)), limit)}
		if w.End <= w.Start {
			return ws
		}
		ws = append(ws, w)
		t = w.End
	}
}

func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }

func (d Duration) round(m time.Duration) Duration { return Duration(time.Duration(d).Round(m)) }

// Seeds returns the seeds of the scenario's repetitions: base, base+1, ...,
// Repeat of them (one if Repeat is 0).
func (s Scenario) Seeds(base int64) []int64 {
	n := max(s.Repeat, 1)
	out := make([]int64, n)
	for i := range out {
		out[i] = base + int64(i)
	}
	return out
}

// Expand returns the variants of a scenario with a Sweep, one per value, each
// named "<name>@<param>=<value>" (for example
// "edar-fig11-loss@loss=0.5%") with Sweep cleared. A scenario without a Sweep
// expands to itself.
func (s Scenario) Expand() ([]Scenario, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Sweep == nil {
		return []Scenario{s.clone()}, nil
	}
	w := *s.Sweep
	var out []Scenario
	add := func(label string, apply func(*Scenario)) {
		v := s.clone()
		v.Sweep = nil
		v.Name = s.Name + "@" + label
		apply(&v)
		out = append(out, v)
	}
	both := func(v *Scenario, f func(*Link)) {
		f(&v.Paths[w.Path].Up)
		f(&v.Paths[w.Path].Down)
	}
	for _, b := range w.Bytes {
		add("bytes="+FormatBytes(b), func(v *Scenario) {
			v.Bytes = b
			if v.Ranges != nil {
				v.Ranges.Bytes = nil
			}
		})
	}
	for _, r := range w.RateBps {
		add("rate="+FormatRate(r), func(v *Scenario) { both(v, func(l *Link) { l.RateBps = r }) })
	}
	for _, d := range w.Delay {
		add("delay="+d.String(), func(v *Scenario) { both(v, func(l *Link) { l.Delay = d }) })
	}
	for _, p := range w.Loss {
		add("loss="+strconv.FormatFloat(p*100, 'g', -1, 64)+"%", func(v *Scenario) { both(v, func(l *Link) { l.Loss = p }) })
	}
	for _, v := range out {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FormatBytes writes a size with the largest exact binary unit: "4KB",
// "256MB", "1500B".
func FormatBytes(b int64) string {
	switch {
	case b >= MB && b%MB == 0:
		return strconv.FormatInt(b/MB, 10) + "MB"
	case b >= KB && b%KB == 0:
		return strconv.FormatInt(b/KB, 10) + "KB"
	}
	return strconv.FormatInt(b, 10) + "B"
}

// FormatRate writes a rate in bits/s with a decimal unit: "100Mbps",
// "500kbps".
func FormatRate(bps float64) string {
	f := func(v float64, unit string) string { return strconv.FormatFloat(v, 'g', -1, 64) + unit }
	switch {
	case bps >= 1e9:
		return f(bps/1e9, "Gbps")
	case bps >= 1e6:
		return f(bps/1e6, "Mbps")
	case bps >= 1e3:
		return f(bps/1e3, "kbps")
	}
	return f(bps, "bps")
}

// baseName strips a sweep label: "edar-fig11-loss@loss=1%" → "edar-fig11-loss".
func baseName(name string) string {
	b, _, _ := strings.Cut(name, "@")
	return b
}
