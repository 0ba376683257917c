// Package scenario describes the network conditions of an experiment as data:
// paths with per-direction link parameters, a transfer size, limits, and the
// ranges or sweeps the papers draw their settings from. Scenarios are
// JSON-serialisable so that the tests, the mpquic-bench CLI and the Mininet
// scripts read the same descriptions (see Library and testdata/scenarios).
//
// Units, everywhere in this package and in the JSON form:
//   - rates are bits per second (rate_bps), never bytes per second;
//   - sizes (bytes, receive_buffer, queue_bytes) are bytes;
//   - durations are Go duration strings in JSON ("10ms", "1.5s", "2m"), and
//     time.Duration in Go; all times are relative to the start of the run;
//   - delays are one-way: a path's RTT is up.delay + down.delay;
//   - loss is a per-packet probability in [0, 1] (1% is 0.01).
//
// Direction: the transfer flows from the server to the client, on each path's
// Down link; Up carries the client's acknowledgements. Bounds (CapacityBps,
// FCTLowerBound) therefore use the Down links' rates.
package scenario

import (
	"encoding/json"
	"fmt"
	"time"
)

// Size units used by the library. They follow iperf's -n suffixes: 1 KB is
// 1024 bytes and 1 MB is 1024·1024 bytes.
const (
	KB = 1 << 10 // kibibyte, bytes
	MB = 1 << 20 // mebibyte, bytes
)

// Mbps is one megabit per second, bits/s.
const Mbps = 1e6

// Scenario is one experiment's network and workload. The zero value is not
// valid; see Validate.
type Scenario struct {
	// Name identifies the scenario; names in Library are stable. Letters,
	// digits and "-_.@=%" only, so that a name is also a file name.
	Name string `json:"name"`
	// Description says what the scenario reproduces, citing the paper's
	// section, table or figure.
	Description string `json:"description"`
	// Paper is the short name of the source ("PRS-MPTCP", "LLHD", "FPRS",
	// "EdAR"), empty for everyday scenarios.
	Paper string `json:"paper,omitempty"`
	// Tags group scenarios ("paper", "loss", "handoff", "sweep", ...).
	Tags []string `json:"tags,omitempty"`
	// Paths are the network paths, in path order (path 0 first).
	Paths []PathSpec `json:"paths"`
	// Bytes is the application data to transfer, bytes (> 0).
	Bytes int64 `json:"bytes"`
	// ReceiveBuffer is the receiver's connection-level buffer, bytes; 0 means
	// the transport's default.
	ReceiveBuffer int64 `json:"receive_buffer,omitempty"`
	// Coupling is the sender's coupled congestion control (session
	// Config.Coupling: none, lia, olia, balia, reno-friendly); "" means
	// none, unless mpquic-bench's -coupling says otherwise.
	Coupling string `json:"coupling,omitempty"`
	// Duration is the run's time limit (> 0). Every window and schedule step
	// must end by Duration.
	Duration Duration `json:"duration"`
	// Timed marks a run that lasts Duration and is judged by goodput over
	// time (the papers' fixed-length emulations); Bytes is then only an upper
	// bound on what the sender offers, and the transfer is not expected to
	// finish.
	Timed bool `json:"timed,omitempty"`
	// Repeat is the number of seeds per scheduler the paper used; 0 means the
	// paper does not say and the caller chooses.
	Repeat int `json:"repeat,omitempty"`
	// Ranges, if set, draws parameters at random per seed; see Resolve.
	Ranges *Ranges `json:"ranges,omitempty"`
	// Sweep, if set, makes this scenario a family of variants; see Expand.
	Sweep *Sweep `json:"sweep,omitempty"`
	// Bottlenecks are links that several paths share on their way to the
	// server, after their own links (see Bottleneck); empty when the paths
	// are disjoint.
	Bottlenecks []Bottleneck `json:"bottlenecks,omitempty"`
	// Cross is the traffic that competes with the session (see
	// CrossSource); empty for none.
	Cross []CrossSource `json:"cross_traffic,omitempty"`
	// Workload is what the application does over the session (see
	// Workload); nil is the default: one download of Bytes.
	Workload *Workload `json:"workload,omitempty"`
}

// PathSpec is one path: a link in each direction.
type PathSpec struct {
	// Name labels the path ("wifi", "lte"); it is informational.
	Name string `json:"name,omitempty"`
	// Backup marks a path the scheduler should use only when no other path
	// is usable (MPTCP's backup flag).
	Backup bool `json:"backup,omitempty"`
	// Up is the client→server direction (acknowledgements).
	Up Link `json:"up"`
	// Down is the server→client direction (the transfer's data).
	Down Link `json:"down"`
}

// Link is one direction of a path.
type Link struct {
	// RateBps is the bottleneck rate, bits/s (> 0). With a Trace it is the
	// trace's mean rate, used only for CapacityBps and FCTLowerBound (see
	// TraceMeanRateBps).
	RateBps float64 `json:"rate_bps"`
	// Delay is the one-way propagation delay.
	Delay Duration `json:"delay"`
	// Jitter is the largest extra delay per packet (uniform in [0, Jitter]).
	Jitter Duration `json:"jitter,omitempty"`
	// Loss is the Bernoulli loss probability per packet, in [0, 1].
	Loss float64 `json:"loss,omitempty"`
	// GE is an optional Gilbert–Elliott bursty loss model; it replaces Loss
	// (setting both is an error).
	GE *GilbertElliott `json:"gilbert_elliott,omitempty"`
	// QueueBytes is the drop-tail queue capacity, bytes; 0 means the
	// emulator's default (the papers do not give queue sizes).
	QueueBytes int `json:"queue_bytes,omitempty"`
	// Outages are sorted, disjoint windows in which the link drops every
	// packet.
	Outages []Window `json:"outages,omitempty"`
	// Handoffs are sorted, disjoint windows of an EdAR-style handoff: from
	// Start the link degrades (rate down to 10%, delay and loss up) for
	// HandoffDegrade, is unusable until End, and returns to its previous
	// state at End (the shape of emu.Handoff).
	Handoffs []Window `json:"handoffs,omitempty"`
	// HandoffDegrade is how long a handoff's degradation lasts before the
	// link becomes unusable; 0 means half of each handoff window.
	HandoffDegrade Duration `json:"handoff_degrade,omitempty"`
	// Schedule is a sorted list of piecewise changes to the link.
	Schedule []Step `json:"schedule,omitempty"`
	// Trace is an optional Mahimahi delivery-trace file replacing RateBps in
	// the emulator. A relative path is resolved against the directory of the
	// scenario file by Load, and left as is by Parse.
	Trace string `json:"trace,omitempty"`
}

// GilbertElliott is a two-state Markov loss model. Before each packet the
// state moves good→bad with probability PGoodBad or bad→good with
// probability PBadGood; the packet is then lost with LossGood or LossBad.
// All fields are per-packet probabilities in [0, 1]; the model starts good.
type GilbertElliott struct {
	PGoodBad float64 `json:"p_good_bad"` // per-packet probability good→bad
	PBadGood float64 `json:"p_bad_good"` // per-packet probability bad→good
	LossGood float64 `json:"loss_good"`  // loss probability in the good state
	LossBad  float64 `json:"loss_bad"`   // loss probability in the bad state
}

// MeanLoss is the model's stationary loss probability, in [0, 1].
func (g GilbertElliott) MeanLoss() float64 {
	if g.PGoodBad+g.PBadGood == 0 {
		return g.LossGood
	}
	bad := g.PGoodBad / (g.PGoodBad + g.PBadGood)
	return (1-bad)*g.LossGood + bad*g.LossBad
}

// Window is the time interval [Start, End), relative to the run's start.
type Window struct {
	Start Duration `json:"start"`
	End   Duration `json:"end"`
}

// Step is one piecewise change of a link at time At. The fields that are set
// (non-nil) move to their new values at once (Ramp == 0) or linearly over
// Ramp, starting from the values in force at At. A step and its ramp must end
// before the next step starts and by the scenario's Duration.
type Step struct {
	At         Duration  `json:"at"`                    // when the change starts
	Ramp       Duration  `json:"ramp,omitempty"`        // length of the linear change; 0 = instant
	RateBps    *float64  `json:"rate_bps,omitempty"`    // new rate, bits/s (> 0)
	Delay      *Duration `json:"delay,omitempty"`       // new one-way delay
	Loss       *float64  `json:"loss,omitempty"`        // new Bernoulli loss probability in [0, 1]
	QueueBytes *int      `json:"queue_bytes,omitempty"` // new queue capacity, bytes (> 0)
}

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string such as "10ms" or "1m30s". Plain numbers are rejected, so that no
// one has to guess the unit.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s is not a duration string such as \"10ms\"", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"10ms\"", s)
	}
	*d = Duration(v)
	return nil
}

// Ranges draws a scenario's parameters at random per seed, uniformly within
// the given ranges (the EdAR paper's Table II, the LLHD comprehensive
// scenario). Resolve applies them.
type Ranges struct {
	// Bytes, if set, draws the transfer size, bytes.
	Bytes *IntRange `json:"bytes,omitempty"`
	// Paths holds one entry per path, index-aligned with Scenario.Paths
	// (it may be shorter). A path's ranges apply to both directions.
	Paths []PathRanges `json:"paths,omitempty"`
}

// PathRanges are the random parameters of one path (both directions).
type PathRanges struct {
	RateBps *FloatRange    `json:"rate_bps,omitempty"` // bits/s
	Delay   *DurationRange `json:"delay,omitempty"`    // one-way delay
	Loss    *FloatRange    `json:"loss,omitempty"`     // probability in [0, 1]
	// Every, if > 0, redraws the rate, delay and loss every Every (as
	// instant schedule steps at Every, 2·Every, ... before Duration);
	// 0 draws them once per seed.
	Every Duration `json:"every,omitempty"`
	// Handoff, if set, draws handoff windows per seed.
	Handoff *HandoffRange `json:"handoff,omitempty"`
	// Outages, if set, draws outage windows per seed as a Poisson process
	// (see OutageProcess); they apply to both directions.
	Outages *OutageProcess `json:"outage_process,omitempty"`
}

// HandoffRange draws one handoff in each period of length Every, starting at a
// uniform time within the period such that it ends inside it, lasting a
// uniform time in [MinLen, MaxLen]. Periods start at Offset.
type HandoffRange struct {
	Every  Duration `json:"every"`            // period, one handoff per period
	Offset Duration `json:"offset,omitempty"` // start of the first period
	MinLen Duration `json:"min_len"`          // shortest handoff
	MaxLen Duration `json:"max_len"`          // longest handoff (<= Every)
}

// FloatRange is the closed interval [Min, Max].
type FloatRange struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// IntRange is the closed interval [Min, Max].
type IntRange struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// DurationRange is the closed interval [Min, Max].
type DurationRange struct {
	Min Duration `json:"min"`
	Max Duration `json:"max"`
}

// Sweep makes a scenario a family: one variant per value, of exactly one
// parameter. Rate, delay and loss apply to both directions of path Path.
type Sweep struct {
	Path    int        `json:"path,omitempty"`     // index of the swept path (not used for Bytes)
	Bytes   []int64    `json:"bytes,omitempty"`    // transfer sizes, bytes
	RateBps []float64  `json:"rate_bps,omitempty"` // rates, bits/s
	Delay   []Duration `json:"delay,omitempty"`    // one-way delays
	Loss    []float64  `json:"loss,omitempty"`     // loss probabilities in [0, 1]
}

// RTT returns the path's base round-trip propagation delay, up + down, before
// any schedule step.
func (p PathSpec) RTT() time.Duration { return p.Up.Delay.D() + p.Down.Delay.D() }
