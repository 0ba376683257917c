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
	SHA256OK       bool               `json:"sha256_ok"`                    // the receiver's SHA-256 matched the sender's
	Error          string             `json:"error,omitempty"`              // why the run failed, if it did
	GoodputSeries  []float64          `json:"goodput_series_bps,omitempty"` // in-order goodput per sample interval, bits/s
	SeriesTimes    []float64          `json:"series_t_s,omitempty"`         // end of each sample interval, s since the session opened (the first interval starts at 0)
	SeriesStepSec  float64            `json:"series_step_s,omitempty"`      // nominal sample interval of the series, s (the last interval may be shorter)
	Extra          map[string]float64 `json:"extra,omitempty"`              // scheduler- or scenario-specific figures, units in the key

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

	// Cross traffic: the single-path flows that competed with the session
	// (scenario cross_traffic), in scenario order. Empty without any.
	CrossNames       []string    `json:"cross_names,omitempty"`              // each flow's name ("" if the scenario gives none)
	CrossGoodputBps  []float64   `json:"cross_goodput_bps,omitempty"`        // each flow's goodput over the session's run, from the start to the FCT, bits/s
	CrossSeries      [][]float64 `json:"cross_goodput_series_bps,omitempty"` // each flow's goodput per interval, bits/s, at CrossSeriesTimes
	CrossSeriesTimes []float64   `json:"cross_series_t_s,omitempty"`         // end of each cross-traffic interval, s since the start (intervals of SeriesStepSec or 100 ms)
}
