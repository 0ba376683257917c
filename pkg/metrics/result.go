// Package metrics holds what a multipath session measures (sender and
// receiver counters, time series) and the Result record that mpquic-bench and
// the cmd tools print, one JSON object per run.
package metrics

// Result is one run: one scheduler, one scenario, one seed. The JSON field
// names carry their units.
type Result struct {
	Scheduler      string             `json:"scheduler"`
	Scenario       string             `json:"scenario"`
	Seed           int64              `json:"seed"`
	Bytes          uint64             `json:"bytes"`                        // application bytes transferred and verified
	FCTSeconds     float64            `json:"fct_s"`                        // flow completion time: session open to last byte delivered, s
	GoodputBps     float64            `json:"goodput_bps"`                  // Bytes·8 / FCT, bits/s
	CapacityBps    float64            `json:"capacity_bps"`                 // sum of the paths' bottleneck rates, bits/s
	OOOSegments    uint64             `json:"ooo_segments"`                 // segments that arrived out of order at the receiver
	HoLBlockedSec  float64            `json:"hol_blocked_s"`                // time data waited in the reorder buffer for a missing segment, s
	RetransPackets uint64             `json:"retrans_packets"`              // packets lost and re-sent (all paths) plus segments reinjected
	SentBytes      uint64             `json:"sent_bytes"`                   // segment payload bytes sent on all paths, copies included
	RedundantBytes uint64             `json:"redundant_bytes"`              // SentBytes beyond the first transmission of each segment
	PerPathBytes   []uint64           `json:"per_path_bytes"`               // segment payload bytes sent per path, in path order
	SHA256OK       bool               `json:"sha256_ok"`                    // the data received was the data sent: its SHA-256 matched the sender's (mptcp-baseline, compare), or, in mpquic-bench's runs, every byte matched the payload (pkg/bench payloadCheck); the name is the results' schema
	Error          string             `json:"error,omitempty"`              // why the run failed, if it did
	GoodputSeries  []float64          `json:"goodput_series_bps,omitempty"` // in-order goodput per sample interval, bits/s
	SeriesTimes    []float64          `json:"series_t_s,omitempty"`         // end of each sample interval, s since the session opened (the first interval starts at 0)
	SeriesStepSec  float64            `json:"series_step_s,omitempty"`      // nominal sample interval of the series, s (the last interval may be shorter)
	Extra          map[string]float64 `json:"extra,omitempty"`              // scheduler- or scenario-specific figures, units in the key

	// Handoff metrics (pkg/bench/handoff.go). MaxStallSec is the longest
	// interval from the request to the FCT in which the application received
	// no new in-order byte while it still waited for some, s, timed at each
	// read (exact, no sampling grid); 0 in records that predate it.
	MaxStallSec float64 `json:"max_stall_s,omitempty"`

	// Mode is how mpquic-client's get ran: ModeMultipath (a session) or
	// ModeSinglePath (the server chose plain HTTP/3 in the handshake); ""
	// in records that predate it and in emulator runs.
	Mode string `json:"mode,omitempty"`
	// Unverified: the server sent no Repr-Digest, so the data was kept
	// without a check (SHA256OK is false, Error empty).
	Unverified bool `json:"unverified,omitempty"`
	// HandoffEvents are the scenario's Down outage and handoff windows that
	// began before the FCT, each with its recovery; in path order, then by
	// start.
	HandoffEvents []HandoffEvent `json:"handoff_events,omitempty"`

	// What the scenario says, recorded with the run so that a report needs no
	// scenario library (scenario files, shortened scenarios). Empty when the
	// run did not come from a scenario.
	FCTLowerBoundSec float64      `json:"fct_lower_bound_s,omitempty"`   // scenario.FCTLowerBound for this run's bytes, s
	CapacityTimes    []float64    `json:"capacity_t_s,omitempty"`        // breakpoints of the summed Down capacity, s since the start
	CapacitySeries   []float64    `json:"capacity_series_bps,omitempty"` // summed Down capacity at CapacityTimes, bits/s, linear in between (a step is two points at one time)
	Outages          [][2]float64 `json:"outages_s,omitempty"`           // Down outage windows [start, end) of any path, s since the start
	Handoffs         [][2]float64 `json:"handoffs_s,omitempty"`          // Down handoff windows [start, end) of any path, s since the start
	PathNames        []string     `json:"path_names,omitempty"`          // the scenario's path names, in path order (as PerPathBytes)
	Timed            bool         `json:"timed,omitempty"`               // a fixed-length run, judged by goodput rather than FCT
	// ScenarioDesc is the scenario's description, so that the report of a
	// -scenario-file scenario shows it as it shows a library scenario's.
	ScenarioDesc string `json:"scenario_description,omitempty"`

	// Cross traffic: the single-path flows that competed with the session
	// (scenario cross_traffic), in scenario order. Empty without any.
	CrossNames       []string    `json:"cross_names,omitempty"`              // each flow's name ("" if the scenario gives none)
	CrossGoodputBps  []float64   `json:"cross_goodput_bps,omitempty"`        // each flow's goodput over the session's run, from the start to the FCT, bits/s
	CrossSeries      [][]float64 `json:"cross_goodput_series_bps,omitempty"` // each flow's goodput per interval, bits/s, at CrossSeriesTimes
	CrossSeriesTimes []float64   `json:"cross_series_t_s,omitempty"`         // end of each cross-traffic interval, s since the start (intervals of SeriesStepSec or 100 ms)
	// Fairness compares GoodputBps with CrossGoodputBps (see Fairness); nil
	// without cross traffic.
	Fairness *Fairness `json:"fairness,omitempty"`

	// Video is the player's view of a video-workload run (see Video); nil
	// for every other workload.
	Video *Video `json:"video,omitempty"`
	// Web is the browser's view of a web-workload run (see Web); nil for
	// every other workload.
	Web *Web `json:"web,omitempty"`
	// RPC is the client's view of an rpc-workload run (see RPC); nil for
	// every other workload.
	RPC *RPC `json:"rpc,omitempty"`
}

// HandoffEvent is one outage or handoff window of one path's Down link and
// how the run came through it. Times are s since the emulator's start, the
// frame of Outages and Handoffs (the session opens at about the same time).
type HandoffEvent struct {
	Path     int     `json:"path"`    // index of the path in scenario order
	Kind     string  `json:"kind"`    // "outage" or "handoff"
	StartSec float64 `json:"start_s"` // the window's start (outage or handoff begins), s
	EndSec   float64 `json:"end_s"`   // the window's end: the link is back, s
	// PreRateBps is the path's mean receive rate (segment payload bytes,
	// duplicates included) over the PreEventSec before StartSec, bits/s.
	PreRateBps  float64 `json:"pre_rate_bps"`
	PreEventSec float64 `json:"pre_event_s"` // the window PreRateBps covers, s (2 s, shorter if a previous event on the path or the open is closer)
	// PreRateInherited is set when the path had not recovered from its
	// previous event when this one began: PreRateBps and PreEventSec are
	// then that event's.
	PreRateInherited bool `json:"pre_rate_inherited,omitempty"`
	// RecoverySec is the time from EndSec until the path carries half of
	// PreRateBps again, s: the start of the first window of RecoveryWindowSec
	// at or after EndSec (on the 10 ms sampling grid) over which it receives
	// at least that rate, the window ending by the FCT and by the path's next
	// event. Null if it did not happen (see NoRecovery).
	RecoverySec *float64 `json:"recovery_s"`
	// NoRecovery says why RecoverySec is null: "not before the FCT" or "not
	// before the path's next event" (no such window ends by then), "link
	// back after the FCT", or "no traffic on the path before the event"
	// (PreRateBps is 0: nothing to recover, e.g. a backup path or one the
	// scheduler left unused).
	NoRecovery        string  `json:"no_recovery,omitempty"`
	RecoveryWindowSec float64 `json:"recovery_window_s"` // the window RecoverySec's rate is taken over, s
	// FailoverGapSec is the longest interval without in-order delivery that
	// begins or is under way within [StartSec, EndSec), counted from
	// StartSec at the earliest, s: how long the application waited before
	// another path took over. 0 if in-order delivery never paused for 1 ms
	// or more in the window.
	FailoverGapSec float64 `json:"failover_gap_s"`
}

// Result.Mode values.
const (
	ModeMultipath  = "multipath"   // HTTP/3 over a multipath session
	ModeSinglePath = "single-path" // plain HTTP/3 over one QUIC connection
)
