package scenario

import (
	"fmt"
	"slices"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Bottleneck is a link that several paths cross after their own links, on
// the way to the server: two Wi-Fi SSIDs on one DSL line, two interfaces
// behind one NAT. The packets of every path through it share its rate and
// its drop-tail queue in each direction (emu.NewSharedTopology). A path's
// own link then usually only adds delay (give it a rate well above the
// bottleneck's), so that the bottleneck is where the paths compete.
type Bottleneck struct {
	// Name labels the bottleneck ("dsl"); it is informational.
	Name string `json:"name,omitempty"`
	// Paths are the indexes of the paths that cross it, each at most once.
	Paths []int `json:"paths"`
	// Up is the client→server direction.
	Up Link `json:"up"`
	// Down is the server→client direction (the transfer's data).
	Down Link `json:"down"`
}

// Cross-traffic kinds, the values of CrossSource.Kind.
const (
	CrossBulk  = "bulk"  // a long-lived single-path quic-go download
	CrossOnOff = "onoff" // exponential on and off periods
)

// CrossSource is one flow of traffic competing with the session (see
// pkg/cross): a download from a server of its own to a client of its own,
// across its own access link and then the links it names, so that it
// competes on their Down direction. Exactly one of Path and Bottleneck is
// set.
type CrossSource struct {
	// Name labels the flow ("tcp-competitor"); it is informational.
	Name string `json:"name,omitempty"`
	// Kind is "bulk" (a long-lived quic-go download with quic-go's own
	// NewReno-like congestion control) or "onoff" (exponential on and off
	// periods, each on period a quic-go transfer or, with CBRRateBps, UDP
	// constant bit rate).
	Kind string `json:"kind"`
	// Path, if set, makes the flow cross path Path end to end: its link and
	// any bottleneck it crosses.
	Path *int `json:"path,omitempty"`
	// Bottleneck, if set, makes the flow cross bottleneck Bottleneck only.
	Bottleneck *int `json:"bottleneck,omitempty"`
	// AccessDelay is the one-way delay of the flow's own access link, in
	// each direction (its rate is unlimited): it sets the flow's RTT beside
	// the delays of the links it crosses.
	AccessDelay Duration `json:"access_delay,omitempty"`
	// Start is when the flow starts; Stop when it stops sending (0: at the
	// end of the run). Both are at most the scenario's Duration.
	Start Duration `json:"start,omitempty"`
	Stop  Duration `json:"stop,omitempty"`
	// MeanOn and MeanOff are the means of the exponential on and off
	// periods of an "onoff" flow (> 0); not used by "bulk".
	MeanOn  Duration `json:"mean_on,omitempty"`
	MeanOff Duration `json:"mean_off,omitempty"`
	// CBRRateBps, if > 0, makes each on period of an "onoff" flow a UDP
	// constant-bit-rate source at this rate, bits/s (UDP payload plus 28
	// header bytes); 0 makes it a quic-go transfer.
	CBRRateBps float64 `json:"cbr_rate_bps,omitempty"`
}

// OutageProcess draws outage windows as a Poisson process, so that seeds
// differ in when outages happen: starting at Offset, the time to the next
// outage is exponential with mean MeanGap (counted from the end of the
// previous outage), and each outage lasts a uniform time in [MinLen, MaxLen].
// Windows are rounded to the millisecond and clipped to the scenario's
// Duration. Resolve turns them into Outages on both directions of the path.
type OutageProcess struct {
	MeanGap Duration `json:"mean_gap"`         // mean time between outages (> 0)
	MinLen  Duration `json:"min_len"`          // shortest outage (> 0)
	MaxLen  Duration `json:"max_len"`          // longest outage (>= MinLen)
	Offset  Duration `json:"offset,omitempty"` // no outage starts before Offset
}

// shared reports whether some paths of s share a bottleneck, which the
// fluid bounds (CapacityBps's time averaging, FCTLowerBound) do not model.
func (s Scenario) shared() bool { return len(s.Bottlenecks) > 0 }

// sharedCapacityBps is the Down capacity of a scenario with bottlenecks,
// bits/s, from the base rates (schedules, outages and handoffs ignored): each
// path contributes its Down rate, except that the paths behind one
// bottleneck together get at most its Down rate. A path behind several
// bottlenecks counts in the first one only.
func (s Scenario) sharedCapacityBps() float64 {
	var total float64
	counted := make([]bool, len(s.Paths))
	for _, b := range s.Bottlenecks {
		var sum float64
		for _, i := range b.Paths {
			if i >= 0 && i < len(s.Paths) && !counted[i] {
				counted[i] = true
				sum += s.Paths[i].Down.RateBps
			}
		}
		total += min(sum, b.Down.RateBps)
	}
	for i, p := range s.Paths {
		if !counted[i] {
			total += p.Down.RateBps
		}
	}
	return total
}

// EmuShared converts the bottlenecks of s to the emulator's shared links
// (see emu.NewSharedTopology), in order; nil if s has none. s should be
// resolved (see Resolve).
func (s Scenario) EmuShared() ([]emu.SharedLink, error) {
	var out []emu.SharedLink
	for k, b := range s.Bottlenecks {
		up, err := b.Up.emu()
		if err != nil {
			return nil, fmt.Errorf("scenario %s: bottlenecks[%d].up: %w", s.Name, k, err)
		}
		down, err := b.Down.emu()
		if err != nil {
			return nil, fmt.Errorf("scenario %s: bottlenecks[%d].down: %w", s.Name, k, err)
		}
		out = append(out, emu.SharedLink{Up: up, Down: down, Paths: slices.Clone(b.Paths)})
	}
	return out, nil
}

// bottlenecks checks s.Bottlenecks.
func (c *checker) bottlenecks(s Scenario) {
	for k, b := range s.Bottlenecks {
		bp := fmt.Sprintf("bottlenecks[%d]", k)
		if len(b.Paths) == 0 {
			c.fail(bp+".paths", "at least one path must cross the bottleneck")
		}
		for j, i := range b.Paths {
			pp := fmt.Sprintf("%s.paths[%d]", bp, j)
			switch {
			case i < 0 || i >= len(s.Paths):
				c.fail(pp, "%d is not a path index (0..%d)", i, len(s.Paths)-1)
			case slices.Contains(b.Paths[:j], i):
				c.fail(pp, "path %d is listed twice", i)
			}
		}
		c.link(bp+".up", b.Up, s.Duration)
		c.link(bp+".down", b.Down, s.Duration)
	}
}

// cross checks s.Cross.
func (c *checker) cross(s Scenario) {
	for k, x := range s.Cross {
		xp := fmt.Sprintf("cross_traffic[%d]", k)
		switch x.Kind {
		case CrossBulk:
			if x.MeanOn != 0 || x.MeanOff != 0 || x.CBRRateBps != 0 {
				c.fail(xp+".kind", "a bulk flow takes no mean_on, mean_off or cbr_rate_bps")
			}
		case CrossOnOff:
			if x.MeanOn <= 0 {
				c.fail(xp+".mean_on", "%v must be > 0", x.MeanOn)
			}
			if x.MeanOff <= 0 {
				c.fail(xp+".mean_off", "%v must be > 0", x.MeanOff)
			}
			if !(x.CBRRateBps >= 0 && x.CBRRateBps < 1e15) {
				c.fail(xp+".cbr_rate_bps", "%v must be >= 0 bits/s and finite (0 = quic-go transfers)", x.CBRRateBps)
			}
		default:
			c.fail(xp+".kind", "%q must be %q or %q", x.Kind, CrossBulk, CrossOnOff)
		}
		switch {
		case (x.Path == nil) == (x.Bottleneck == nil):
			c.fail(xp, "set exactly one of path and bottleneck")
		case x.Path != nil && (*x.Path < 0 || *x.Path >= len(s.Paths)):
			c.fail(xp+".path", "%d is not a path index (0..%d)", *x.Path, len(s.Paths)-1)
		case x.Bottleneck != nil && (*x.Bottleneck < 0 || *x.Bottleneck >= len(s.Bottlenecks)):
			c.fail(xp+".bottleneck", "%d is not a bottleneck index (%d bottlenecks)", *x.Bottleneck, len(s.Bottlenecks))
		}
		c.nonNeg(xp+".access_delay", x.AccessDelay)
		c.nonNeg(xp+".start", x.Start)
		switch {
		case s.Duration > 0 && x.Start >= s.Duration:
			c.fail(xp+".start", "%v is not before the scenario duration %v", x.Start, s.Duration)
		case x.Stop != 0 && x.Stop <= x.Start:
			c.fail(xp+".stop", "%v must be after start %v (or 0: the end of the run)", x.Stop, x.Start)
		case s.Duration > 0 && x.Stop > s.Duration:
			c.fail(xp+".stop", "%v is beyond the scenario duration %v", x.Stop, s.Duration)
		}
	}
}

// outageProcess checks one path's outage process.
func (c *checker) outageProcess(path string, o OutageProcess, p PathSpec) {
	switch {
	case o.MeanGap <= 0:
		c.fail(path+".mean_gap", "%v must be > 0", o.MeanGap)
	case o.MinLen <= 0 || o.MaxLen < o.MinLen:
		c.fail(path, "lengths [%v, %v] must satisfy 0 < min_len <= max_len", o.MinLen, o.MaxLen)
	case o.Offset < 0:
		c.fail(path+".offset", "%v must be >= 0", o.Offset)
	case len(p.Up.Outages) > 0 || len(p.Down.Outages) > 0:
		c.fail(path, "the path already has outage windows")
	}
}
