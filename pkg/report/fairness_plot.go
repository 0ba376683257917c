package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// ShareBinSec is the interval of the shares-over-time plots, s.
const ShareBinSec = 0.5

// rebin turns a piecewise-constant rate series, rate[i] over (ends[i−1],
// ends[i]] (from 0 for i = 0), into its mean over each whole interval
// [k·width, (k+1)·width) that ends by upTo, splitting a sample that
// straddles two intervals by its overlap with each. Time in s, rate in any
// unit; nil for a bad width or series.
func rebin(ends, rate []float64, width, upTo float64) []float64 {
	if width <= 0 || len(ends) != len(rate) || !(upTo > 0) || math.IsInf(upTo, 0) {
		return nil
	}
	n := int(upTo/width + 1e-9)
	out := make([]float64, n)
	start := 0.0
	for i, end := range ends {
		for k := max(int(start/width), 0); k < n && float64(k)*width < end; k++ {
			lo, hi := max(start, float64(k)*width), min(end, float64(k+1)*width)
			if hi > lo && !math.IsNaN(rate[i]) {
				out[k] += rate[i] * (hi - lo) / width
			}
		}
		start = end
	}
	return out
}

// sharePlot is one shares-over-time figure.
type sharePlot struct {
	p         *plot.Plot
	fig       Figure
	scheduler string
}

// sharesOverTime plots, per scheduler of scenario scn with cross traffic,
// the goodput of the session and of each competitor in ShareBinSec
// intervals, with their sum and the scenario's capacity, in the
// scheduler's run of median goodput (FCT if not timed).
func sharesOverTime(scn string, rs []metrics.Result) []sharePlot {
	tm := timedRuns(scn, rs)
	var out []sharePlot
	for _, sch := range schedulers(rs) {
		var cand []metrics.Result
		for _, r := range rs {
			if r.Scheduler == sch && len(r.CrossSeries) > 0 && len(r.CrossSeriesTimes) > 0 {
				cand = append(cand, r)
			}
		}
		r, ok := representative(cand, sch, tm)
		if !ok {
			continue
		}
		if sp, ok := sharesPlot(scn, r); ok {
			out = append(out, sp)
		}
	}
	return out
}

// sharesPlot draws run r: see sharesOverTime.
func sharesPlot(scn string, r metrics.Result) (sharePlot, bool) {
	ts := seriesTimes(r)
	end := min(ts[len(ts)-1], r.CrossSeriesTimes[len(r.CrossSeriesTimes)-1])
	flows := [][]float64{rebin(ts, r.GoodputSeries, ShareBinSec, end)}
	names := []string{fmt.Sprintf("session (%.2f Mbit/s)", r.GoodputBps/1e6)}
	for i, s := range r.CrossSeries {
		if len(s) != len(r.CrossSeriesTimes) {
			return sharePlot{}, false
		}
		flows = append(flows, rebin(r.CrossSeriesTimes, s, ShareBinSec, end))
		name := fmt.Sprintf("competitor %d", i)
		if i < len(r.CrossNames) && r.CrossNames[i] != "" {
			name = r.CrossNames[i]
		}
		if i < len(r.CrossGoodputBps) {
			name += fmt.Sprintf(" (%.2f Mbit/s)", r.CrossGoodputBps[i]/1e6)
		}
		names = append(names, name)
	}
	n := len(flows[0])
	if n == 0 {
		return sharePlot{}, false
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Shares over time: %s, %s (seed %d)", scn, r.Scheduler, r.Seed)
	p.X.Label.Text = "time since the start (s)"
	p.Y.Label.Text = fmt.Sprintf("goodput per %.1f s (Mbit/s)", ShareBinSec)
	fig := Figure{Kind: "shares", Title: p.Title.Text}
	// step returns a flow's bins as a step curve from 0 at the start.
	step := func(ys []float64) plotter.XYs {
		xys := plotter.XYs{{X: 0, Y: 0}}
		for k, y := range ys {
			xys = append(xys, plotter.XY{X: float64(k+1) * ShareBinSec, Y: y / 1e6})
		}
		return xys
	}
	sum := make([]float64, n)
	for _, f := range flows {
		for k := range sum {
			sum[k] += f[k]
		}
	}
	xmax := float64(n) * ShareBinSec
	if ct, cb, ok := capacity([]metrics.Result{r}); ok {
		if l, err := plotter.NewLine(clipCurve(ct, cb, xmax)); err == nil {
			l.Color = color.Black
			l.Width = vg.Points(1)
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
			p.Add(l)
			p.Legend.Add("capacity", l)
		}
	}
	if l, err := plotter.NewLine(step(sum)); err == nil {
		l.StepStyle = plotter.PreStep
		l.Color = color.NRGBA{R: 140, G: 140, B: 140, A: 255}
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		p.Legend.Add("all flows", l)
	}
	for i, f := range flows {
		l, err := plotter.NewLine(step(f))
		if err != nil {
			continue
		}
		l.StepStyle = plotter.PreStep
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.2)
		if i == 0 {
			l.Width = vg.Points(1.8)
		}
		p.Add(l)
		p.Legend.Add(names[i], l)
	}
	fig.Note = fmt.Sprintf("Goodput in %.1f s intervals of the session (in-order bytes; its series starts when it opens, within milliseconds of the start) and of each competitor, with their sum; the legend gives each flow's goodput over the run. "+
		"One run: the run of median %s among the successful runs of %s.", ShareBinSec, map[bool]string{false: "FCT", true: "goodput"}[timedOf(r)], r.Scheduler)
	p.X.Min, p.X.Max, p.Y.Min = 0, xmax*1.02, 0
	p.Y.Max *= headroom
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return sharePlot{p: p, fig: fig, scheduler: r.Scheduler}, true
}

// timedOf reports whether run r is timed, as it recorded or as the library
// marks its scenario.
func timedOf(r metrics.Result) bool { return timedRuns(r.Scenario, []metrics.Result{r}) }
