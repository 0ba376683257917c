package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// Figure is one plot written in both PNG and SVG.
type Figure struct {
	Scenario string // scenario the figure is about
	Kind     string // "goodput", "fct", "goodput-bars", "ooo-cdf", "path-share", "recovery", "shares" (one per scheduler), or a workload's "object-cdf", "plt-cdf", "rpc-cdf", "chunk-cdf"
	Title    string // figure title
	PNG, SVG string // file paths relative to the results directory
	Note     string // caveat shown under the figure, if any
}

// PlotsDir is the subdirectory of a results directory that holds the plots.
const PlotsDir = "plots"

// Figure size.
const (
	figW = 6.4 * vg.Inch
	figH = 3.6 * vg.Inch
)

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// slug turns a scenario name into a file-name part.
func slug(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// Plots writes every figure for results into dir/plots and returns them, in
// scenario order.
func Plots(dir string, results []metrics.Result) ([]Figure, error) {
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return nil, err
	}
	rows := Summarize(results)
	var figs []Figure
	for _, scn := range scenarios(results) {
		var rs []metrics.Result
		for _, r := range results {
			if r.Scenario == scn {
				rs = append(rs, r)
			}
		}
		var srows []Row
		for _, r := range rows {
			if r.Scenario == scn {
				srows = append(srows, r)
			}
		}
		if p, f, ok := goodputOverTime(scn, rs, srows); ok { // timepanels.go: small multiples
			f.Scenario = scn
			if err := save(dir, p, &f, f.Kind+"_"+slug(scn)); err != nil {
				return nil, err
			}
			figs = append(figs, f)
		}
		for _, mk := range []func(string, []metrics.Result, []Row) (*plot.Plot, Figure, bool){
			completionBars, oooCDF, pathShare, recoveryPlot,
			objectCDF, pageLoadCDF, rpcCDF, chunkCDF, // workload_plots.go
		} {
			p, f, ok := mk(scn, rs, srows)
			if !ok {
				continue
			}
			f.Scenario = scn
			if err := save(dir, p, &f, f.Kind+"_"+slug(scn)); err != nil {
				return nil, err
			}
			figs = append(figs, f)
		}
		for _, sp := range sharesOverTime(scn, rs) { // fairness_plot.go: scenarios with cross traffic
			sp.fig.Scenario = scn
			if err := save(dir, sp.p, &sp.fig, sp.fig.Kind+"_"+slug(scn)+"_"+slug(sp.scheduler)); err != nil {
				return nil, err
			}
			figs = append(figs, sp.fig)
		}
	}
	return figs, nil
}

// saver is a figure that can be written to a file: a *plot.Plot, or a
// figure of panels.
type saver interface {
	Save(w, h vg.Length, file string) error
}

// save writes p as dir/plots/base.png and .svg and records both paths in f.
func save(dir string, p saver, f *Figure, base string) error {
	base = filepath.Join(PlotsDir, base)
	f.PNG, f.SVG = base+".png", base+".svg"
	for _, name := range []string{f.PNG, f.SVG} {
		if err := p.Save(figW, figH, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("report: %s: %w", name, err)
		}
	}
	return nil
}

// headroom scales the top of the y axis so that the legend, drawn in the top
// corner, does not cover the data.
const headroom = 1.35

// barTicks are the y ticks of percentage plots, which stop at 100 although
// the axis goes higher to leave room for the legend.
var barTicks = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 25, Label: "25"}, {Value: 50, Label: "50"}, {Value: 75, Label: "75"}, {Value: 100, Label: "100"}})

// padX leaves half a bar slot on either side of n nominal bars, and slants
// the bars' labels so that long scheduler names (eleven of them in the main
// job) do not run into each other.
func padX(p *plot.Plot, n int) {
	p.X.Min, p.X.Max = -0.6, float64(n)-0.4
	p.X.Tick.Label.Rotation = labelSlant
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
}

// labelSlant is the angle of the bar plots' x labels, radians.
const labelSlant = math.Pi / 6

// legendRoom is the fraction of the CDF's x axis left free on the right for
// its legend (one line per scheduler, drawn bottom right), so that the
// legend covers no curve.
const legendRoom = 0.4

// shade fills vertical bands over the whole height of the plot.
type shade struct {
	spans [][2]float64 // [start, end) in data x units
	color color.Color
}

// Plot implements plot.Plotter.
func (s *shade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, w := range s.spans {
		x0, x1 := max(trX(w[0]), c.Min.X), min(trX(w[1]), c.Max.X)
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(s.color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (s *shade) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.color, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// ciBars are bar tops with symmetric error half-widths.
type ciBars struct {
	y, ci []float64
}

func (b ciBars) Len() int                    { return len(b.y) }
func (b ciBars) XY(i int) (float64, float64) { return float64(i), b.y[i] }
func (b ciBars) YError(i int) (float64, float64) {
	if math.IsNaN(b.ci[i]) {
		return 0, 0
	}
	return b.ci[i], b.ci[i]
}

// completionBars plots each scheduler's mean FCT with 95% CI whiskers and the
// FCT lower bound as a dashed line; for a timed scenario it plots mean
// goodput and the capacity instead.
func completionBars(scn string, _ []metrics.Result, rows []Row) (*plot.Plot, Figure, bool) {
	p := plot.New()
	tm := len(rows) > 0 && rows[0].Timed
	fig := Figure{Kind: "fct"}
	var y, ci []float64
	var names []string
	bound := math.NaN()
	for _, r := range rows {
		s, b, scale := r.FCT, r.FCTLowerBoundSec, 1.0
		if tm {
			s, b, scale = r.Goodput, r.CapacityBps, 1e-6
		}
		if math.IsNaN(s.Mean) {
			continue
		}
		names = append(names, r.Scheduler)
		y = append(y, s.Mean*scale)
		ci = append(ci, s.CI95*scale)
		if !math.IsNaN(b) {
			bound = b * scale
		}
	}
	if len(y) == 0 {
		return nil, fig, false
	}
	if tm {
		fig.Kind = "goodput-bars"
		p.Title.Text = "Mean goodput (95% CI): " + scn
		p.Y.Label.Text = "goodput (Mbit/s)"
	} else {
		p.Title.Text = "Flow completion time (mean, 95% CI): " + scn
		p.Y.Label.Text = "FCT (s)"
	}
	fig.Title = p.Title.Text
	bars, err := plotter.NewBarChart(plotter.Values(y), vg.Points(28))
	if err != nil {
		return nil, fig, false
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	if eb, err := plotter.NewYErrorBars(ciBars{y, ci}); err == nil {
		eb.LineStyle.Width = vg.Points(1.2)
		p.Add(eb)
	}
	if !math.IsNaN(bound) {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: bound}, {X: float64(len(y)) - 0.5, Y: bound}})
		if err == nil {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			l.Color = color.NRGBA{R: 200, A: 255}
			p.Add(l)
			if tm {
				p.Legend.Add("capacity", l)
			} else {
				p.Legend.Add("FCT lower bound", l)
			}
			p.Legend.Top = true
		}
	}
	p.NominalX(names...)
	padX(p, len(names))
	p.Y.Min = 0
	top := 0.0
	if !math.IsNaN(bound) {
		top = bound
	}
	for i := range y {
		w := ci[i]
		if math.IsNaN(w) {
			w = 0
		}
		top = math.Max(top, y[i]+w)
	}
	p.Y.Max = top * 1.2
	p.Add(plotter.NewGrid())
	return p, fig, true
}

// oooCDF plots, per scheduler, the empirical CDF of out-of-order segments per
// OK run.
func oooCDF(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	p := plot.New()
	p.Title.Text = "Out-of-order segments per run, CDF: " + scn
	p.X.Label.Text = "out-of-order segments"
	p.Y.Label.Text = "fraction of runs"
	fig := Figure{Kind: "ooo-cdf", Title: p.Title.Text}
	tm := timedRuns(scn, rs)
	drawn := false
	for i, sch := range schedulers(rs) {
		var xs []float64
		for _, r := range rs {
			if r.Scheduler == sch && OK(r, tm) {
				xs = append(xs, float64(r.OOOSegments))
			}
		}
		if len(xs) == 0 {
			continue
		}
		x, q := stats.ECDF(xs)
		xys := plotter.XYs{{X: x[0], Y: 0}}
		for j := range x {
			xys = append(xys, plotter.XY{X: x[j], Y: q[j]})
		}
		// Carry the last step a little to the right so that it shows.
		xys = append(xys, plotter.XY{X: x[len(x)-1] + 0.05*(x[len(x)-1]-x[0]+1), Y: 1})
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
	p.Y.Min, p.Y.Max = 0, 1.05
	// The legend goes bottom right, in room the curves leave free.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		lo, hi = math.Min(lo, float64(r.OOOSegments)), math.Max(hi, float64(r.OOOSegments))
	}
	if drawn {
		span := 1.1*(hi-lo) + 1 // the curves' extent, their last step included
		p.X.Min, p.X.Max = lo, lo+span/(1-legendRoom)
	}
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.YOffs = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p, fig, drawn
}

// pathShare plots, per scheduler, each path's share of the bytes sent over
// all its OK runs, as stacked bars.
func pathShare(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	p := plot.New()
	p.Title.Text = "Share of bytes sent per path: " + scn
	p.Y.Label.Text = "share of bytes sent (%)"
	fig := Figure{Kind: "path-share", Title: p.Title.Text}
	tm := timedRuns(scn, rs)
	scheds := schedulers(rs)
	npaths := 0
	totals := make([][]float64, len(scheds)) // [scheduler][path] bytes
	for i, sch := range scheds {
		for _, r := range rs {
			if r.Scheduler != sch || !OK(r, tm) {
				continue
			}
			for j, b := range r.PerPathBytes {
				for len(totals[i]) <= j {
					totals[i] = append(totals[i], 0)
				}
				totals[i][j] += float64(b)
			}
		}
		npaths = max(npaths, len(totals[i]))
	}
	if npaths == 0 {
		return nil, fig, false
	}
	names := pathNames(rs, npaths)
	var below *plotter.BarChart
	for j := range npaths {
		vals := make(plotter.Values, len(scheds))
		for i := range scheds {
			var sum float64
			for _, b := range totals[i] {
				sum += b
			}
			if j < len(totals[i]) && sum > 0 {
				vals[i] = 100 * totals[i][j] / sum
			}
		}
		bars, err := plotter.NewBarChart(vals, vg.Points(28))
		if err != nil {
			return nil, fig, false
		}
		bars.Color = plotutil.Color(j)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(names[j], bars)
	}
	p.NominalX(scheds...)
	padX(p, len(scheds))
	p.Y.Min, p.Y.Max = 0, 100*headroom
	p.Y.Tick.Marker = barTicks
	p.Legend.Top = true
	p.Legend.Left = false
	return p, fig, true
}

// pathNames labels n paths "path j (name)" with the scenario's path names:
// those the runs recorded, else the library scenario's when the name is
// known there, else "path j" alone.
func pathNames(rs []metrics.Result, n int) []string {
	var s []string
	for _, r := range rs {
		if len(r.PathNames) > len(s) {
			s = r.PathNames
		}
	}
	if len(s) == 0 && len(rs) > 0 {
		if sc, ok := lookup(rs[0].Scenario, rs[0].Seed); ok {
			for _, p := range sc.Paths {
				s = append(s, p.Name)
			}
		}
	}
	out := make([]string, n)
	for j := range out {
		out[j] = fmt.Sprintf("path %d", j)
		if j < len(s) && s[j] != "" {
			out[j] += " (" + s[j] + ")"
		}
	}
	return out
}
