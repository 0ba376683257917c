package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// VideoRow is one scenario × scheduler of the video workload
// (metrics.Video): each metric's mean and 95% CI over the successful runs.
type VideoRow struct {
	Scenario, Scheduler string
	Runs, Failed        int
	FirstFrame          stats.Summary // s
	Rebuffer            stats.Summary // s
	RebufferRatio       stats.Summary // fraction
	ChunkP50            stats.Summary // s
	ChunkP95            stats.Summary // s
	ChunkP99            stats.Summary // s
	Redundancy          stats.Summary // bytes sent twice / bytes delivered, fraction
}

// VideoRows summarises the runs that carry video metrics, sorted by scenario
// then scheduler; nil if there are none.
func VideoRows(results []metrics.Result) []VideoRow {
	var vr []metrics.Result
	for _, r := range results {
		if r.Video != nil {
			vr = append(vr, r)
		}
	}
	keys, groups := group(vr)
	var rows []VideoRow
	for _, k := range keys {
		row := VideoRow{Scenario: k.scenario, Scheduler: k.scheduler, Runs: len(groups[k])}
		var ff, rb, rr, p50, p95, p99, red []float64
		for _, r := range groups[k] {
			if !OK(r, false) {
				row.Failed++
				continue
			}
			v := r.Video
			ff, rb, rr = append(ff, v.FirstFrameSec), append(rb, v.RebufferSec), append(rr, v.RebufferRatio)
			p50, p95, p99 = append(p50, v.ChunkP50Sec), append(p95, v.ChunkP95Sec), append(p99, v.ChunkP99Sec)
			red = append(red, v.Redundancy)
		}
		row.FirstFrame, row.Rebuffer, row.RebufferRatio = stats.Summarize(ff), stats.Summarize(rb), stats.Summarize(rr)
		row.ChunkP50, row.ChunkP95, row.ChunkP99 = stats.Summarize(p50), stats.Summarize(p95), stats.Summarize(p99)
		row.Redundancy = stats.Summarize(red)
		rows = append(rows, row)
	}
	return rows
}

// VideoMethod says how the video table's columns are measured.
const VideoMethod = "**Video workload.** The client fetches each chunk on a stream of its own, one at a time, when the playback buffer holds less than the target (two chunks), " +
	"and tells the server the play time left, which the server sets as the chunk stream's deadline hint (`Stream.SetDeadlineHint`, seen by schedulers as `ConnInfo.Deadline`). " +
	"Playback is simulated in the run's (virtual) time: *first frame* is when the startup buffer has arrived, s since the session opened (handshake included); " +
	"*rebuffer* is the total stall time after that, and the *ratio* is stall / (stall + media played); " +
	"*chunk p50/p95/p99* are nearest-rank percentiles of the chunk completion times (request sent to last byte read) within a run, then averaged over the runs; " +
	"*redundancy* is the bytes the server sent more than once (session stats, copies and retransmissions of data already sent) over the bytes delivered. " +
	"Mean ± half-width of the 95% Student-t CI over the successful runs. " +
	"After each multipath scenario's schedulers, *best single path* is the row of its `-only` baselines with the lowest mean chunk p99."

// VideoTables renders one Markdown table per video scenario of rows; a
// multipath scenario <s> whose baselines <s>-*-only are in rows also gets
// the best single-path row. "" without rows.
func VideoTables(rows []VideoRow) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Video workload\n\n" + VideoMethod + "\n\n")
	for i := 0; i < len(rows); {
		scn := rows[i].Scenario
		fmt.Fprintf(&b, "### %s\n\n", scn)
		b.WriteString("| scheduler | runs (failed) | first frame (s) | rebuffer (s) | rebuffer ratio (%) | chunk p50 (s) | chunk p95 (s) | chunk p99 (s) | redundancy (%) |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for ; i < len(rows) && rows[i].Scenario == scn; i++ {
			videoLine(&b, mdEscape(rows[i].Scheduler), rows[i])
		}
		if strings.HasSuffix(scn, "-only") {
			b.WriteString("\n")
			continue
		}
		best, bestP99 := -1, math.Inf(1)
		for j, r := range rows {
			if strings.HasPrefix(r.Scenario, scn+"-") && strings.HasSuffix(r.Scenario, "-only") && r.ChunkP99.N > 0 && r.ChunkP99.Mean < bestP99 {
				best, bestP99 = j, r.ChunkP99.Mean
			}
		}
		if best >= 0 {
			r := rows[best]
			videoLine(&b, fmt.Sprintf("*best single path: %s, %s*", mdEscape(strings.TrimPrefix(r.Scenario, scn+"-")), mdEscape(r.Scheduler)), r)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func videoLine(b *strings.Builder, label string, r VideoRow) {
	fmt.Fprintf(b, "| %s | %d (%d) | %s | %s | %s | %s | %s | %s | %s |\n", label, r.Runs, r.Failed,
		r.FirstFrame.Format(1, 3), r.Rebuffer.Format(1, 3), r.RebufferRatio.Format(100, 2),
		r.ChunkP50.Format(1, 3), r.ChunkP95.Format(1, 3), r.ChunkP99.Format(1, 3), r.Redundancy.Format(100, 2))
}
