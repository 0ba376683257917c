package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// WebRow is one scenario × scheduler of the web workload (metrics.Web):
// each metric's mean and 95% CI over the successful runs.
type WebRow struct {
	Scenario, Scheduler string
	Runs, Failed        int
	PageLoad            stats.Summary // mean page load time of a run, s
	PageLoadP95         stats.Summary // a run's 95th-percentile page load time, s
	ObjectP50           stats.Summary // a run's median object completion time, s
	ObjectP99           stats.Summary // a run's 99th-percentile object completion time, s
	HTML                stats.Summary // a run's mean HTML completion time, s
	Redundancy          stats.Summary // bytes sent twice / bytes delivered, fraction
}

// RPCRow is one scenario × scheduler of the rpc workload (metrics.RPC).
type RPCRow struct {
	Scenario, Scheduler string
	Runs, Failed        int
	IdleP50, IdleP99    stats.Summary // latency without the bulk transfer, s
	LoadedP50           stats.Summary // latency while it runs, s
	LoadedP99           stats.Summary // s
	Bulk                stats.Summary // the bulk transfer's completion time, s
	Redundancy          stats.Summary // fraction
}

// workloadRuns returns the runs that have(r) reports true for, grouped by
// scenario and scheduler.
func workloadRuns(results []metrics.Result, has func(metrics.Result) bool) ([]key, map[key][]metrics.Result) {
	var sel []metrics.Result
	for _, r := range results {
		if has(r) {
			sel = append(sel, r)
		}
	}
	return group(sel)
}

// WebRows summarises the runs that carry web metrics, sorted by scenario then
// scheduler; nil if there are none.
func WebRows(results []metrics.Result) []WebRow {
	keys, groups := workloadRuns(results, func(r metrics.Result) bool { return r.Web != nil })
	var rows []WebRow
	for _, k := range keys {
		row := WebRow{Scenario: k.scenario, Scheduler: k.scheduler, Runs: len(groups[k])}
		var plt, p95, o50, o99, html, red []float64
		for _, r := range groups[k] {
			if !OK(r, false) {
				row.Failed++
				continue
			}
			w := r.Web
			plt, p95, o50, o99 = append(plt, w.PageLoadMeanSec), append(p95, w.PageLoadP95Sec), append(o50, w.ObjectP50Sec), append(o99, w.ObjectP99Sec)
			html, red = append(html, w.HTMLMeanSec), append(red, w.Redundancy)
		}
		row.PageLoad, row.PageLoadP95, row.ObjectP50, row.ObjectP99 = stats.Summarize(plt), stats.Summarize(p95), stats.Summarize(o50), stats.Summarize(o99)
		row.HTML, row.Redundancy = stats.Summarize(html), stats.Summarize(red)
		rows = append(rows, row)
	}
	return rows
}

// RPCRows summarises the runs that carry rpc metrics.
func RPCRows(results []metrics.Result) []RPCRow {
	keys, groups := workloadRuns(results, func(r metrics.Result) bool { return r.RPC != nil })
	var rows []RPCRow
	for _, k := range keys {
		row := RPCRow{Scenario: k.scenario, Scheduler: k.scheduler, Runs: len(groups[k])}
		var i50, i99, l50, l99, bulk, red []float64
		for _, r := range groups[k] {
			if !OK(r, false) {
				row.Failed++
				continue
			}
			p := r.RPC
			i50, i99, l50, l99 = append(i50, p.IdleP50Sec), append(i99, p.IdleP99Sec), append(l50, p.LoadedP50Sec), append(l99, p.LoadedP99Sec)
			bulk, red = append(bulk, p.BulkSec), append(red, p.Redundancy)
		}
		row.IdleP50, row.IdleP99, row.LoadedP50, row.LoadedP99 = stats.Summarize(i50), stats.Summarize(i99), stats.Summarize(l50), stats.Summarize(l99)
		row.Bulk, row.Redundancy = stats.Summarize(bulk), stats.Summarize(red)
		rows = append(rows, row)
	}
	return rows
}

// WebMethod and RPCMethod say how the workload tables are measured.
const (
	WebMethod = "**Web workload.** Each page load requests the HTML, then every object the HTML names, then the fonts once the stylesheets have arrived, each object on its own HTTP/3 request (pkg/h3 on the session) " +
		"carrying Chrome's RFC 9218 priority, which the server applies to the response stream. *Page load* runs from the HTML request to the last byte of the last object (a run's mean over its loads, and its 95th percentile); " +
		"*object p50/p99* are percentiles of every object's completion time (request sent to last byte read) in a run; *HTML* is the HTML's completion time. " +
		"*Redundancy* is the bytes the server sent more than once over the bytes delivered. Mean ± half-width of the 95% Student-t CI over the successful runs. " +
		"After each multipath scenario's schedulers, *best single path* is the row of its `-only` baselines with the lowest mean page load time."
	RPCMethod = "**RPC workload.** Requests are due at a fixed rate from the session's open, each on its own stream; its response goes at urgency 1, above the bulk download's default 3. " +
		"A request's latency runs from when it was due to the last byte of its response. *Idle* requests were due before the bulk download was requested, *loaded* ones while it ran; p50/p99 are nearest-rank percentiles within a run, then averaged. " +
		"*Bulk* is the download's completion time. After each multipath scenario's schedulers, *best single path* is the baseline row with the lowest mean loaded p99."
)

// bestBaseline returns the index in rows of scenario scn's baseline
// (<scn>-*-only) with the lowest mean of metric, or -1. rows are sorted by
// scenario; name gives a row's scenario, metric its summary.
func bestBaseline[R any](rows []R, scn string, name func(R) string, metric func(R) stats.Summary) int {
	best, bestV := -1, math.Inf(1)
	for j, r := range rows {
		n, m := name(r), metric(r)
		if strings.HasPrefix(n, scn+"-") && strings.HasSuffix(n, "-only") && m.N > 0 && m.Mean < bestV {
			best, bestV = j, m.Mean
		}
	}
	return best
}

// workloadTables renders one Markdown table per scenario of rows under
// heading, with a multipath scenario's best single path after its
// schedulers; "" without rows.
func workloadTables[R any](rows []R, heading, method, header string, name, sched func(R) string, line func(*strings.Builder, string, R), metric func(R) stats.Summary) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", heading, method)
	for i := 0; i < len(rows); {
		scn := name(rows[i])
		fmt.Fprintf(&b, "### %s\n\n%s\n", scn, header)
		for ; i < len(rows) && name(rows[i]) == scn; i++ {
			line(&b, mdEscape(sched(rows[i])), rows[i])
		}
		if !strings.HasSuffix(scn, "-only") {
			if j := bestBaseline(rows, scn, name, metric); j >= 0 {
				line(&b, fmt.Sprintf("*best single path: %s, %s*", mdEscape(strings.TrimPrefix(name(rows[j]), scn+"-")), mdEscape(sched(rows[j]))), rows[j])
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// WebTables renders the web workload's tables.
func WebTables(rows []WebRow) string {
	return workloadTables(rows, "Web workload", WebMethod,
		"| scheduler | runs (failed) | page load (s) | page load p95 (s) | object p50 (s) | object p99 (s) | HTML (s) | redundancy (%) |\n|---|---:|---:|---:|---:|---:|---:|---:|",
		func(r WebRow) string { return r.Scenario }, func(r WebRow) string { return r.Scheduler },
		func(b *strings.Builder, label string, r WebRow) {
			fmt.Fprintf(b, "| %s | %d (%d) | %s | %s | %s | %s | %s | %s |\n", label, r.Runs, r.Failed,
				r.PageLoad.Format(1, 3), r.PageLoadP95.Format(1, 3), r.ObjectP50.Format(1, 3), r.ObjectP99.Format(1, 3), r.HTML.Format(1, 3), r.Redundancy.Format(100, 2))
		},
		func(r WebRow) stats.Summary { return r.PageLoad })
}

// RPCTables renders the rpc workload's tables.
func RPCTables(rows []RPCRow) string {
	return workloadTables(rows, "RPC workload", RPCMethod,
		"| scheduler | runs (failed) | idle p50 (ms) | idle p99 (ms) | loaded p50 (ms) | loaded p99 (ms) | bulk (s) | redundancy (%) |\n|---|---:|---:|---:|---:|---:|---:|---:|",
		func(r RPCRow) string { return r.Scenario }, func(r RPCRow) string { return r.Scheduler },
		func(b *strings.Builder, label string, r RPCRow) {
			fmt.Fprintf(b, "| %s | %d (%d) | %s | %s | %s | %s | %s | %s |\n", label, r.Runs, r.Failed,
				r.IdleP50.Format(1000, 1), r.IdleP99.Format(1000, 1), r.LoadedP50.Format(1000, 1), r.LoadedP99.Format(1000, 1), r.Bulk.Format(1, 2), r.Redundancy.Format(100, 2))
		},
		func(r RPCRow) stats.Summary { return r.LoadedP99 })
}
