package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// The workloads' CDF plots: per scheduler, the empirical CDF of a per-item
// time (objects, page loads, requests, chunks), pooled over the scheduler's
// successful runs of the scenario.

// objectCDF plots the web workload's object completion times.
func objectCDF(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	return timesCDF(scn, rs, "object-cdf", "Object completion time, CDF over every object of every load: "+scn, "object completion time (s)",
		func(r metrics.Result) []float64 {
			if r.Web == nil {
				return nil
			}
			return r.Web.ObjectTimesSec
		})
}

// pageLoadCDF plots the web workload's page load times.
func pageLoadCDF(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	return timesCDF(scn, rs, "plt-cdf", "Page load time, CDF over every load: "+scn, "page load time (s)",
		func(r metrics.Result) []float64 {
			if r.Web == nil {
				return nil
			}
			return r.Web.PageLoadSec
		})
}

// rpcCDF plots the rpc workload's latencies while the bulk transfer runs.
func rpcCDF(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	return cdfPlot(rs, "rpc-cdf", "Request latency during the bulk transfer, CDF: "+scn, "request latency (s, log scale)", true,
		func(r metrics.Result) []float64 {
			if r.RPC == nil {
				return nil
			}
			return r.RPC.LoadedLatency
		})
}

// chunkCDF plots the video workload's chunk completion times.
func chunkCDF(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	return timesCDF(scn, rs, "chunk-cdf", "Chunk completion time, CDF over every chunk: "+scn, "chunk completion time (s)",
		func(r metrics.Result) []float64 {
			if r.Video == nil {
				return nil
			}
			return r.Video.ChunkTimesSec
		})
}

// timesCDF plots, per scheduler, the ECDF of the values of its OK runs of
// the scenario, pooled; false if no run has any.
func timesCDF(_ string, rs []metrics.Result, kind, title, xlabel string, values func(metrics.Result) []float64) (*plot.Plot, Figure, bool) {
	return cdfPlot(rs, kind, title, xlabel, false, values)
}

// cdfPlot is timesCDF with a choice of a logarithmic x axis (for values
// over several decades; they must be > 0).
func cdfPlot(rs []metrics.Result, kind, title, xlabel string, logX bool, values func(metrics.Result) []float64) (*plot.Plot, Figure, bool) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = "fraction"
	fig := Figure{Kind: kind, Title: title, Note: "Pooled over the successful runs of each scheduler."}
	lo, hi := math.Inf(1), math.Inf(-1)
	drawn := false
	for i, sch := range schedulers(rs) {
		var xs []float64
		for _, r := range rs {
			if r.Scheduler == sch && OK(r, false) {
				xs = append(xs, values(r)...)
			}
		}
		if len(xs) == 0 {
			continue
		}
		x, q := stats.ECDF(xs)
		lo, hi = math.Min(lo, x[0]), math.Max(hi, x[len(x)-1])
		xys := plotter.XYs{{X: x[0], Y: 0}}
		for j := range x {
			xys = append(xys, plotter.XY{X: x[j], Y: q[j]})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		l.StepStyle = plotter.PostStep
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", sch, len(xs)), l)
		drawn = true
	}
	if !drawn {
		return nil, fig, false
	}
	p.Y.Min, p.Y.Max = 0, 1.05
	if logX && lo > 0 {
		// The legend's room is a fraction of the axis in log space.
		span := 1.05*math.Log(hi/lo) + 1e-9
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = lo, lo*math.Exp(span/(1-legendRoom))
	} else {
		span := 1.05*(hi-lo) + 1e-9
		p.X.Min, p.X.Max = lo, lo+span/(1-legendRoom)
	}
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.YOffs = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p, fig, true
}
