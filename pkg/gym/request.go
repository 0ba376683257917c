package gym

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// Request is the JSON payload of 'D' and 'R'.
type Request struct {
	// Scenario is a library scenario's name ("edar-handoff", or a sweep
	// variant such as "edar-fig10-delay@delay=40ms"); File a scenario JSON
	// file's path. Exactly one is set. For a sweep family the episode runs
	// variant number seed mod len(variants).
	Scenario string `json:"scenario,omitempty"` // library scenario name
	File     string `json:"file,omitempty"`     // scenario JSON file
	// Seed resolves the scenario's ranges and seeds the emulator.
	Seed    int64   `json:"seed"`
	Options Options `json:"options"` // how the episode runs
}

// Options shape an episode; every zero value means the default.
type Options struct {
	// Slots is the number of path slots of the observation and action,
	// 1..learned.MaxSlots; default: the scenario's path count (the largest
	// over a family's variants).
	Slots int `json:"slots,omitempty"`
	// Edar adds EdAR's state (sched/edar's features) to the observation.
	Edar bool `json:"edar,omitempty"`
	// Reward weights of EdAR's reward (edar.RewardConfig); zero fields
	// take EdAR's defaults (α 1, β 0.5, V_g in units of 10 Mbit/s) and
	// ReceiveBuffer the scenario's receive buffer.
	Alpha         float64 `json:"alpha,omitempty"`          // α, weight of V_w
	Beta          float64 `json:"beta,omitempty"`           // β, weight of V_o
	GoodputScale  float64 `json:"goodput_scale,omitempty"`  // bytes/s that make V_g = 1
	ReceiveBuffer uint64  `json:"receive_buffer,omitempty"` // B_t of V_o, bytes
	// ReportIntervalMs is the receiver's report period, ms; default 20
	// (below every TI of EdAR's scenarios, as cmd/edar-collect uses).
	ReportIntervalMs float64 `json:"report_interval_ms,omitempty"`
	// ReportPerMinRTT makes the receiver report once per the smallest RTT
	// of its paths when that is shorter than ReportIntervalMs
	// (session.Config.ReportPerMinRTT), so that each decision interval, one
	// minimum RTT, gets a report and a reward. Off by default: with the
	// fixed period a TI shorter than it often ends without a report (no
	// reward), as the shipped EdAR model was trained
	// (docs/edar-generalisation.md, "Reports once per TI").
	ReportPerMinRTT bool `json:"report_per_min_rtt,omitempty"`
	// MaxSeconds truncates the episode at the first boundary this many
	// virtual seconds after its start; a timed scenario ends at its
	// duration anyway.
	MaxSeconds float64 `json:"max_seconds,omitempty"`
	// MaxSteps truncates the episode after this many steps.
	MaxSteps int `json:"max_steps,omitempty"`
	// MaxBytes shrinks the scenario's transfer (and its timeline by the
	// same factor) to at most this many bytes (scenario.Short).
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Bytes sets the transfer's size (a range of the scenario's is
	// dropped), leaving the timeline as it is (cmd/edar-collect's sizes).
	Bytes int64 `json:"bytes,omitempty"`
	// Opportunistic turns on the session's opportunistic reinjection.
	Opportunistic bool `json:"opportunistic,omitempty"`
}

// Description is the 'J' answer to 'D': what the agent needs to build its
// observation and action spaces.
type Description struct {
	Scenario      string   `json:"scenario"`           // the scenario's (or family's) name
	Description   string   `json:"description"`        // the scenario's description
	Paths         int      `json:"paths"`              // the scenario's paths (largest over variants)
	Slots         int      `json:"slots"`              // path slots of observations and actions
	Variants      []string `json:"variants,omitempty"` // a sweep family's variant names, in seed order
	Timed         bool     `json:"timed"`              // the run lasts DurationS (else it ends with the download)
	DurationS     float64  `json:"duration_s"`         // the scenario's duration (limit), s
	Bytes         int64    `json:"bytes"`              // the download's size, bytes (before ranges are drawn)
	ReceiveBuffer int64    `json:"receive_buffer"`     // the receiver's buffer, bytes (0: the session's default)
	Layout        Layout   `json:"layout"`             // where an 'O' frame's arrays are
}

// resolved is a request turned into the scenario variant to run.
type resolved struct {
	sc       scenario.Scenario
	variants []scenario.Scenario
	paths    int
	slots    int
}

// resolve finds the request's scenario, expands a family and checks the
// options.
func resolve(q *Request) (*resolved, error) {
	var sc scenario.Scenario
	var err error
	switch {
	case q.Scenario != "" && q.File != "":
		return nil, errors.New("give a scenario name or a file, not both")
	case q.File != "":
		sc, err = scenario.Load(q.File)
	case q.Scenario != "":
		sc, err = scenario.Lookup(q.Scenario)
	default:
		return nil, errors.New("no scenario given")
	}
	if err != nil {
		return nil, err
	}
	o := &q.Options
	if o.MaxBytes < 0 || o.Bytes < 0 || o.MaxSeconds < 0 || o.MaxSteps < 0 || o.ReportIntervalMs < 0 || o.Slots < 0 ||
		o.Alpha < 0 || o.Beta < 0 || o.GoodputScale < 0 {
		return nil, errors.New("negative option")
	}
	if o.MaxBytes > 0 {
		sc = scenario.Short(sc, o.MaxBytes, 0)
	}
	if o.Bytes > 0 {
		sc.Bytes = o.Bytes
		if sc.Ranges != nil {
			rg := *sc.Ranges
			rg.Bytes = nil
			sc.Ranges = &rg
		}
	}
	vs, err := sc.Expand()
	if err != nil {
		return nil, err
	}
	rs := &resolved{variants: vs}
	for _, v := range vs {
		rs.paths = max(rs.paths, len(v.Paths))
	}
	rs.slots = rs.paths
	if o.Slots > 0 {
		rs.slots = o.Slots
	}
	if rs.slots > learned.MaxSlots {
		return nil, fmt.Errorf("slots %d: at most %d", rs.slots, learned.MaxSlots)
	}
	v := q.Seed % int64(len(vs))
	if v < 0 {
		v += int64(len(vs))
	}
	rs.sc = vs[v]
	return rs, nil
}

// describe answers 'D'.
func describe(q *Request) (*Description, error) {
	rs, err := resolve(q)
	if err != nil {
		return nil, err
	}
	d := &Description{
		Scenario: rs.sc.Name, Description: rs.sc.Description, Paths: rs.paths, Slots: rs.slots,
		Timed: rs.sc.Timed, DurationS: rs.sc.Duration.D().Seconds(), Bytes: rs.sc.Bytes,
		ReceiveBuffer: rs.sc.ReceiveBuffer, Layout: NewLayout(rs.slots, q.Options.Edar),
	}
	if len(rs.variants) > 1 {
		d.Scenario = q.Scenario
		for _, v := range rs.variants {
			d.Variants = append(d.Variants, v.Name)
		}
	}
	return d, nil
}

func parseRequest(p []byte) (*Request, error) {
	var q Request
	if err := json.Unmarshal(p, &q); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	return &q, nil
}

func (o *Options) reportInterval() time.Duration {
	if o.ReportIntervalMs > 0 {
		return time.Duration(o.ReportIntervalMs * float64(time.Millisecond))
	}
	return 20 * time.Millisecond
}
