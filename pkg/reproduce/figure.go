package reproduce

// The claim figures, and the file names of the figures report.Plots writes.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/mpqsched/mpqsched/pkg/stats"
)

// baselineRef is the baseline the claim figure normalises by: minRTT if it
// is one of the claim's baselines, else the first.
func (v verdictRow) baselineRef() string {
	if slices.Contains(v.c.baselines, "minrtt") {
		return "minrtt"
	}
	return v.c.baselines[0]
}

// claimFigure plots, per scenario, each scheduler's mean of the claim's
// metric relative to the reference baseline's mean, with 95% CI whiskers.
func claimFigure(path string, vs []verdictRow) (bool, string, error) {
	ref := vs[0].baselineRef()
	scheds := append([]string{vs[0].c.sched}, vs[0].c.baselines...)
	var scens []string
	sum := map[[2]string]stats.Summary{}
	for _, v := range vs {
		for _, c := range v.comps {
			scens = append(scens, c.scenario)
			sum[[2]string{c.scenario, v.c.sched}] = c.x
			sum[[2]string{c.scenario, v.baseline}] = c.b
		}
	}
	slices.Sort(scens)
	scens = slices.Compact(scens)
	if len(scens) == 0 {
		return false, "", nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, "", err
	}
	var off []string // points beyond offChart, left out so that the rest stay readable
	p := plot.New()
	m := vs[0].c.metric
	p.Title.Text = fmt.Sprintf("%s relative to %s", m.name, ref)
	p.Y.Label.Text = fmt.Sprintf("%s / %s's", m.name, ref)
	k := float64(len(scheds))
	for i, s := range scheds {
		var pts plotter.XYs
		var errs plotter.YErrors
		for j, scn := range scens {
			x, okx := sum[[2]string{scn, s}]
			r, okr := sum[[2]string{scn, ref}]
			if !okx || !okr || r.Mean == 0 || math.IsNaN(x.Mean) {
				continue
			}
			ci := x.CI95 / r.Mean
			if math.IsNaN(ci) {
				ci = 0
			}
			if q := x.Mean / r.Mean; q > offChart {
				off = append(off, fmt.Sprintf("%s %.2f× in %s", s, q, scn))
				continue
			}
			pts = append(pts, plotter.XY{X: float64(j) + 0.7*((float64(i)+0.5)/k-0.5), Y: x.Mean / r.Mean})
			errs = append(errs, struct{ Low, High float64 }{ci, ci})
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return false, "", err
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add(s, sc)
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err == nil {
			eb.LineStyle.Color = plotutil.Color(i)
			p.Add(eb)
		}
	}
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(scens)) - 0.5, Y: 1}})
	if err == nil {
		one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(one)
	}
	names := make([]string, len(scens))
	for i, s := range scens {
		names[i] = s
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(scens))-0.4
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.Legend.Top = true
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	w := max(6.4*vg.Inch, vg.Length(len(scens))*0.75*vg.Inch)
	if err := p.Save(w, 4.2*vg.Inch, path); err != nil {
		return false, "", err
	}
	note := ""
	if len(off) > 0 {
		note = fmt.Sprintf(" Left out as more than %g× the reference: %s.", offChart, strings.Join(off, "; "))
	}
	return true, note, nil
}

// offChart is the largest ratio to the reference baseline a claim figure
// shows; larger ones (the redundant scheduler's FCT) would flatten the rest.
const offChart = 2.0

// Slug is name as a file name: every run of characters other than ASCII
// letters, digits, '.', '_' and '-' becomes one '_' (report's rule for
// scenario names in plot file names).
func Slug(name string) string { return slugRE.ReplaceAllString(name, "_") }

// reportFigure names a figure written by report.Plots: kind and scenario.
func reportFigure(kind, scn string) string { return kind + "_" + slugRE.ReplaceAllString(scn, "_") }

var slugRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`) // report's file-name rule for scenario names
