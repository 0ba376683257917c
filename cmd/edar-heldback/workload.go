package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// The workload settings' figures. A setting whose runs carry rpc metrics
// (metrics.Result.RPC) is an rpc setting, one whose runs carry video
// metrics (Result.Video) a video setting; any other is a bulk setting.
// Latency is better when lower, so "best" among a workload setting's rows
// is the lowest mean over the seeds.

// kindOf is the workload of a setting's rows: scenario.WorkloadRPC,
// scenario.WorkloadVideo or "" (bulk).
func kindOf(rows map[string]*row) string {
	for _, x := range rows {
		switch {
		case len(x.reqP99) > 0:
			return scenario.WorkloadRPC
		case len(x.chunkP99) > 0:
			return scenario.WorkloadVideo
		}
	}
	return ""
}

// addWorkload appends the workload figures of one successful run to x.
func (x *row) addWorkload(r metrics.Result) {
	if r.RPC != nil {
		x.reqP99 = append(x.reqP99, r.RPC.LoadedP99Sec)
	}
	if r.Video != nil {
		x.chunkP99 = append(x.chunkP99, r.Video.ChunkP99Sec)
		x.rebuffer = append(x.rebuffer, r.Video.RebufferSec)
	}
}

// latency is the figure that picks a workload setting's best single path
// (the lowest mean): the loaded request p99 for rpc, the chunk p99 for
// video; nil for a bulk setting.
func latency(kind string) func(*row) []float64 {
	switch kind {
	case scenario.WorkloadRPC:
		return func(x *row) []float64 { return x.reqP99 }
	case scenario.WorkloadVideo:
		return func(x *row) []float64 { return x.chunkP99 }
	}
	return nil
}

// lower reports whether mean a is better than mean b for a latency: a
// missing mean (NaN, no successful run) is worse than any other.
func lower(a, b float64) bool {
	return !math.IsNaN(a) && (math.IsNaN(b) || a < b)
}

// workloadHeader is the extra columns of a setting's table (after the bulk
// ones), with their separator cells.
func workloadHeader(kind string) (head, sep string) {
	switch kind {
	case scenario.WorkloadRPC:
		return " request p99 loaded, ms |", "---|"
	case scenario.WorkloadVideo:
		return " chunk p99, s | rebuffering, s |", "---|---|"
	}
	return "", ""
}

// workloadCells is x's extra cells: mean ± 95% CI over its seeds.
func workloadCells(kind string, x *row) string {
	switch kind {
	case scenario.WorkloadRPC:
		return " " + ci(x.reqP99, 1000, 1) + " |"
	case scenario.WorkloadVideo:
		return " " + ci(x.chunkP99, 1, 2) + " | " + ci(x.rebuffer, 1, 2) + " |"
	}
	return ""
}

// pick is the row with the lowest mean of one latency among some rows.
type pick struct {
	name string  // the row's label ("" if no row has the figure)
	mean float64 // its mean over the seeds, s (NaN if none)
}

// lowest is the best of labels by the mean of fig; the first label wins a
// tie.
func lowest(rows map[string]*row, labels []string, fig func(*row) []float64) pick {
	b := pick{mean: math.NaN()}
	for _, l := range labels {
		if x, ok := rows[l]; ok {
			if m := mean(fig(x)); lower(m, b.mean) {
				b = pick{x.label, m}
			}
		}
	}
	return b
}

// workloadVerdict fills v's workload figures from a workload setting's
// rows: EdAR-o's means, the best heuristic's by each figure and, for rpc,
// the best single path's (the row load folded by the same figure).
func workloadVerdict(v *verdict, rows map[string]*row) {
	o := rows["edar-o"]
	if o == nil {
		o = &row{}
	}
	switch v.kind {
	case scenario.WorkloadRPC:
		req := func(x *row) []float64 { return x.reqP99 }
		v.reqO, v.reqHeur = mean(o.reqP99), lowest(rows, heuristics, req)
		v.reqSingle = lowest(rows, []string{"best single path"}, req)
	case scenario.WorkloadVideo:
		v.chunkO, v.rebufO = mean(o.chunkP99), mean(o.rebuffer)
		v.chunkHeur = lowest(rows, heuristics, func(x *row) []float64 { return x.chunkP99 })
		v.rebufHeur = lowest(rows, heuristics, func(x *row) []float64 { return x.rebuffer })
	}
}

// workloadSummary writes one line per workload kind that vs holds, each
// naming its settings' figures (latency: the lowest mean is the best).
func workloadSummary(w io.Writer, vs []verdict) {
	var rpc, video []string
	for _, v := range vs {
		switch v.kind {
		case scenario.WorkloadRPC:
			rpc = append(rpc, fmt.Sprintf("%s: EdAR-o %.1f ms, best heuristic %s %.1f ms, %s %.1f ms",
				v.setting, 1000*v.reqO, v.reqHeur.name, 1000*v.reqHeur.mean, v.reqSingle.name, 1000*v.reqSingle.mean))
		case scenario.WorkloadVideo:
			video = append(video, fmt.Sprintf("%s: chunk p99 EdAR-o %.2f s, best heuristic %s %.2f s; rebuffering EdAR-o %.2f s, best heuristic %s %.2f s",
				v.setting, v.chunkO, v.chunkHeur.name, v.chunkHeur.mean, v.rebufO, v.rebufHeur.name, v.rebufHeur.mean))
		}
	}
	if len(rpc) > 0 {
		fmt.Fprintf(w, "- rpc, request p99 under load (mean over the seeds; the lowest is the best): %s.\n", strings.Join(rpc, "; "))
	}
	if len(video) > 0 {
		fmt.Fprintf(w, "- video, chunk p99 and rebuffering (mean over the seeds; the lowest is the best): %s.\n", strings.Join(video, "; "))
	}
}
