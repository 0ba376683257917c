// Package report turns a results directory into tables, plots and a Markdown
// page. A results directory holds results.jsonl: one metrics.Result per line,
// as mpquic-bench writes them. Everything comes from the records themselves:
// goodput series with their times, and what the run's scenario says (FCT
// lower bound, capacity over time, outage and handoff windows, path names,
// timed or not), so scenario files and shortened scenarios report like
// library ones. Records that predate those fields fall back to the scenario
// library (pkg/scenario) when the scenario name is known there.
//
// Markdown(dir) writes, next to results.jsonl:
//   - summary.csv: one row per scenario × scheduler (see Row);
//   - plots/*.png and plots/*.svg: per scenario, goodput over time, FCT bars
//     with 95% CI whiskers, the CDF of out-of-order segments per run,
//     each path's share of the bytes sent, and, for scenarios with outages
//     or handoffs, the recovery and failover gap of every event;
//   - results.md: the summary table, the plots, linked by relative path, and
//     per scenario with outages or handoffs a table of every event.
//
// Scenarios with cross traffic also get a fairness table (fairness.go: each
// flow's goodput, the session's ratio to the mean competitor and its share,
// Jain's index, each path's share of the session's bytes) and, per
// scheduler, a plot of every flow's goodput over time (fairness_plot.go).
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// ResultsFile is the name of the results file inside a results directory.
const ResultsFile = "results.jsonl"

// AssumedSegmentBytes is the payload per packet, bytes, used to estimate the
// packets sent when a Result lacks Extra["sent_packets"]: the retransmission
// rate is then RetransPackets / (SentBytes / AssumedSegmentBytes).
const AssumedSegmentBytes = 1200

// ReadResults reads a JSON-lines file of metrics.Result records. Blank lines
// are skipped; unknown fields are allowed, so that newer records still load.
// Errors name the line.
func ReadResults(path string) ([]metrics.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []metrics.Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r metrics.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// Row summarises the runs of one scheduler on one scenario. The metric
// summaries cover the successful runs only (see OK); their units are those
// of metrics.Result.
type Row struct {
	Scenario  string // scenario name as recorded
	Scheduler string // scheduler name
	Runs      int    // runs recorded
	Failed    int    // runs that are not OK

	Goodput    stats.Summary // goodput, bits/s
	FCT        stats.Summary // flow completion time, s (empty for timed scenarios)
	OOO        stats.Summary // out-of-order segments per run
	HoL        stats.Summary // head-of-line blocked time, s
	Retrans    stats.Summary // retransmission rate: retransmitted / sent packets, fraction
	Redundancy stats.Summary // redundancy overhead: RedundantBytes / Bytes, fraction
	MaxStall   stats.Summary // longest wait for in-order data per run (max_stall_s), s; runs that record it

	// Handoff events (outages and handoffs) of the successful runs, pooled
	// over runs: see handoff.go.
	Recovery    stats.Summary // recovery_s of the events whose path recovered, s
	FailoverGap stats.Summary // failover_gap_s of every event, s
	Events      int           // events in the successful runs
	Unrecovered int           // events whose link came back before the FCT but whose path did not recover by then (or by its next event)

	// CapacityBps is the mean of the runs' capacity_bps, or the library
	// scenario's CapacityBps if the runs report none; NaN if neither is known.
	CapacityBps float64
	// FCTLowerBoundSec is the mean over the runs of the scenario's
	// FCTLowerBound, s: as the run recorded it (fct_lower_bound_s, or
	// Extra["fct_lower_bound_s"] in older records), else from the library
	// scenario resolved with the run's seed, for the run's Bytes; NaN if
	// unknown.
	FCTLowerBoundSec float64
	// Timed is set if the runs or the library mark the scenario as timed.
	Timed bool

	// GoodputTie holds the letters of the row's goodput tie groups within
	// its scenario (ties.go): rows that share a letter are statistically
	// tied; "a" holds the highest mean.
	GoodputTie string

	goodputs []float64 // the successful runs' goodputs, bits/s, for markTies
}

// OK reports whether a run succeeded: no error and verified data. A run of a
// timed scenario (judged by goodput over time) is OK if it has no error and
// a positive goodput.
func OK(r metrics.Result, timed bool) bool {
	if timed {
		return r.GoodputBps > 0 && (r.Error == "" || strings.Contains(r.Error, "deadline") || strings.Contains(r.Error, "timeout"))
	}
	return r.Error == "" && r.SHA256OK
}

// RetransRate is r's retransmitted packets over its sent packets, a
// fraction; sent packets come from Extra["sent_packets"] or are estimated as
// SentBytes / AssumedSegmentBytes. NaN if nothing was sent.
func RetransRate(r metrics.Result) float64 {
	sent := r.Extra["sent_packets"]
	if sent <= 0 {
		sent = float64(r.SentBytes) / AssumedSegmentBytes
	}
	if sent <= 0 {
		return math.NaN()
	}
	return float64(r.RetransPackets) / sent
}

// RedundancyOverhead is r's redundant bytes per application byte, a
// fraction; NaN if Bytes is 0.
func RedundancyOverhead(r metrics.Result) float64 {
	if r.Bytes == 0 {
		return math.NaN()
	}
	return float64(r.RedundantBytes) / float64(r.Bytes)
}

// key identifies a scenario × scheduler group.
type key struct{ scenario, scheduler string }

// group splits results by scenario and scheduler, in sorted order.
func group(results []metrics.Result) ([]key, map[key][]metrics.Result) {
	m := map[key][]metrics.Result{}
	for _, r := range results {
		k := key{r.Scenario, r.Scheduler}
		m[k] = append(m[k], r)
	}
	keys := make([]key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.scenario, b.scenario); c != 0 {
			return c
		}
		return strings.Compare(a.scheduler, b.scheduler)
	})
	return keys, m
}

// scenarios returns the distinct scenario names of results, sorted.
func scenarios(results []metrics.Result) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.Scenario)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// schedulers returns the distinct scheduler names of results, sorted.
func schedulers(results []metrics.Result) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.Scheduler)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lookup finds the library scenario of a recorded name, resolved for seed.
func lookup(name string, seed int64) (scenario.Scenario, bool) {
	s, err := scenario.Lookup(name)
	if err != nil {
		return scenario.Scenario{}, false
	}
	r, err := s.Resolve(seed)
	if err != nil {
		return scenario.Scenario{}, false
	}
	return r, true
}

// timedRuns reports whether the named scenario is timed: as its runs
// recorded it, or as the library marks it.
func timedRuns(name string, rs []metrics.Result) bool {
	for _, r := range rs {
		if r.Timed {
			return true
		}
	}
	s, err := scenario.Lookup(name)
	return err == nil && s.Timed
}

// Summarize builds one Row per scenario × scheduler, sorted by scenario then
// scheduler, with the goodput tie groups of each scenario marked.
func Summarize(results []metrics.Result) []Row {
	keys, groups := group(results)
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		rs := groups[k]
		row := Row{Scenario: k.scenario, Scheduler: k.scheduler, Runs: len(rs), Timed: timedRuns(k.scenario, rs)}
		var gp, fct, ooo, hol, rt, red, capv, lb, stall []float64
		var ho handoffs
		for _, r := range rs {
			if r.FCTLowerBoundSec > 0 {
				lb = append(lb, r.FCTLowerBoundSec)
			} else if b, ok := r.Extra["fct_lower_bound_s"]; ok {
				lb = append(lb, b)
			} else if s, ok := lookup(r.Scenario, r.Seed); ok {
				if r.Bytes > 0 {
					s.Bytes = int64(r.Bytes) // the bound for what this run transferred
				}
				lb = append(lb, s.FCTLowerBound().Seconds())
			}
			if r.CapacityBps > 0 {
				capv = append(capv, r.CapacityBps)
			} else if s, ok := lookup(r.Scenario, r.Seed); ok {
				capv = append(capv, s.CapacityBps())
			}
			if !OK(r, row.Timed) {
				row.Failed++
				continue
			}
			gp = append(gp, r.GoodputBps)
			if !row.Timed {
				fct = append(fct, r.FCTSeconds)
			}
			ooo = append(ooo, float64(r.OOOSegments))
			hol = append(hol, r.HoLBlockedSec)
			if v := RetransRate(r); !math.IsNaN(v) {
				rt = append(rt, v)
			}
			if v := RedundancyOverhead(r); !math.IsNaN(v) {
				red = append(red, v)
			}
			if r.MaxStallSec > 0 {
				stall = append(stall, r.MaxStallSec)
			}
			ho.add(r)
		}
		row.Goodput, row.FCT, row.OOO = stats.Summarize(gp), stats.Summarize(fct), stats.Summarize(ooo)
		row.HoL, row.Retrans, row.Redundancy = stats.Summarize(hol), stats.Summarize(rt), stats.Summarize(red)
		row.CapacityBps, row.FCTLowerBoundSec = stats.Mean(capv), stats.Mean(lb)
		row.MaxStall = stats.Summarize(stall)
		row.Recovery, row.FailoverGap = stats.Summarize(ho.recovery), stats.Summarize(ho.gap)
		row.Events, row.Unrecovered = ho.events, ho.unrecovered
		row.goodputs = gp
		rows = append(rows, row)
	}
	markTies(rows)
	return rows
}
