package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // PNG
	_ "gonum.org/v1/plot/vg/vgsvg" // SVG

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// SmoothSec is the interval over which the goodput-over-time panels average
// the in-order goodput, s: long enough to even out the bursts of data
// released when a missing segment arrives, short enough to show a
// recovery.
const SmoothSec = 0.25

// panelCols is the number of panels per row of a small-multiples figure.
const panelCols = 4

// Sizes of a small-multiples figure.
const (
	panelW    = 2.4 * vg.Inch // width of one panel
	panelH    = 1.75 * vg.Inch
	headerH   = 0.55 * vg.Inch // the title and legend strip above the panels
	panelFont = 8              // points, for tick labels and panel titles
)

// Colours of the goodput-over-time panels.
var (
	rawColor     = color.NRGBA{R: 120, G: 150, B: 200, A: 255}
	smoothColor  = color.NRGBA{R: 20, G: 60, B: 160, A: 255}
	outageColor  = color.NRGBA{R: 120, G: 120, B: 120, A: 70}
	handoffColor = color.NRGBA{R: 230, G: 150, B: 30, A: 70}
)

// panels is a figure of plots in a grid below one title and one legend,
// both outside every plot's data area.
type panels struct {
	title  string
	legend []legendEntry
	grid   [][]*plot.Plot // rows of panelCols; nil cells stay blank
}

// legendEntry is one item of a panels figure's legend.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// Save writes the figure to file, in the format its extension names (png
// or svg), at its natural size (w and h are ignored: a figure of panels is
// as large as its grid).
func (f *panels) Save(_, _ vg.Length, file string) error {
	rows := len(f.grid)
	w, h := panelW*panelCols, headerH+panelH*vg.Length(rows)
	format := "png"
	if len(file) > 4 && file[len(file)-4:] == ".svg" {
		format = "svg"
	}
	cw, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return err
	}
	dc := draw.New(cw)
	fillWhite(dc)
	body := dc
	body.Max.Y -= headerH
	tiles := draw.Tiles{Rows: rows, Cols: panelCols, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 6, PadX: 6, PadY: 6}
	cells := plot.Align(f.grid, tiles, body)
	for j, row := range f.grid {
		for i, p := range row {
			if p != nil {
				p.Draw(cells[j][i])
			}
		}
	}
	f.drawHeader(dc, h)
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := cw.WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// fillWhite paints c's whole area white (PNG backgrounds are transparent).
func fillWhite(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
}

// drawHeader writes the title and, below it, the legend in one row across
// the strip at the top of dc (of height h).
func (f *panels) drawHeader(dc draw.Canvas, h vg.Length) {
	ts := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 11), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	dc.FillText(ts, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Min.Y + h - 4}, f.title)
	if len(f.legend) == 0 {
		return
	}
	cellW := (dc.Max.X - dc.Min.X) / vg.Length(len(f.legend))
	for k, e := range f.legend {
		l := plot.NewLegend()
		l.Left, l.Top = true, true
		l.TextStyle.Font.Size = panelFont + 1
		l.Add(e.name, e.thumb)
		c := dc
		c.Min.X = dc.Min.X + cellW*vg.Length(k) + 8
		c.Max.X = c.Min.X + cellW
		c.Max.Y = dc.Min.Y + h - 22
		c.Min.Y = c.Max.Y - 14
		l.Draw(c)
	}
}

// goodputOverTime draws, per scheduler, one panel of the goodput series
// of its representative run (the OK run of median FCT, or of median goodput
// for a timed scenario), on its recorded time axis from the session's open
// to its FCT: the raw series (one step per sample interval) thin and pale,
// its mean over SmoothSec intervals bold, the summed capacity of the paths
// dashed, and the outage and handoff windows shaded. Every panel has the
// same axes; raw bursts above the top are clipped (the figure's note says
// by how much).
func goodputOverTime(scn string, rs []metrics.Result, _ []Row) (*panels, Figure, bool) {
	title := "Goodput over time: " + scn
	fig := Figure{Kind: "goodput", Title: title}
	tm := timedRuns(scn, rs)
	var picked []metrics.Result
	for _, sch := range schedulers(rs) {
		if r, ok := representative(rs, sch, tm); ok {
			picked = append(picked, r)
		}
	}
	if len(picked) == 0 {
		return nil, fig, false
	}
	xmax, rawMax, smoothMax := 0.0, 0.0, 0.0
	smooth := make([][]float64, len(picked))
	for i, r := range picked {
		ts := seriesTimes(r)
		xmax = max(xmax, ts[len(ts)-1])
		for _, v := range r.GoodputSeries {
			rawMax = max(rawMax, v/1e6)
		}
		smooth[i] = rebin(ts, r.GoodputSeries, SmoothSec, ts[len(ts)-1])
		for _, v := range smooth[i] {
			smoothMax = max(smoothMax, v/1e6)
		}
	}
	var notes []string
	outages, handoffs, same := windows(picked)
	if !same {
		notes = append(notes, "Outage and handoff windows differ between the runs shown and are not shaded.")
	}
	ct, cb, capOK := capacity(picked)
	capMax := 0.0
	if capOK {
		for _, v := range cb {
			capMax = max(capMax, v/1e6)
		}
	} else {
		notes = append(notes, "The runs shown have different capacities over time; none is drawn.")
	}
	ymax := max(capMax, smoothMax) * 1.15
	if rawMax > ymax {
		notes = append(notes, fmt.Sprintf("Raw intervals above %.0f Mbit/s are clipped at the top (the highest reached %.0f Mbit/s).", ymax, rawMax))
	}
	f := &panels{title: title}
	rawStyle, smoothStyle, capStyle := lineStyle(rawColor, 0.6, nil), lineStyle(smoothColor, 1.6, nil), lineStyle(color.Black, 0.9, []vg.Length{vg.Points(4), vg.Points(2)})
	f.legend = append(f.legend, legendEntry{fmt.Sprintf("in-order goodput per %.0f ms sample", sampleMillis(picked[0])), rawStyle},
		legendEntry{fmt.Sprintf("mean over %.2f s", SmoothSec), smoothStyle})
	if capOK {
		f.legend = append(f.legend, legendEntry{"capacity (sum of paths)", capStyle})
	}
	if same && len(outages) > 0 {
		f.legend = append(f.legend, legendEntry{"outage", &shade{color: outageColor}})
	}
	if same && len(handoffs) > 0 {
		f.legend = append(f.legend, legendEntry{"handoff", &shade{color: handoffColor}})
	}
	rows := (len(picked) + panelCols - 1) / panelCols
	f.grid = make([][]*plot.Plot, rows)
	for j := range f.grid {
		f.grid[j] = make([]*plot.Plot, panelCols)
	}
	for i, r := range picked {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s (seed %d, FCT %.2f s)", r.Scheduler, r.Seed, r.FCTSeconds)
		if tm {
			p.Title.Text = fmt.Sprintf("%s (seed %d, %.1f Mbit/s)", r.Scheduler, r.Seed, r.GoodputBps/1e6)
		}
		p.Title.TextStyle.Font.Size = panelFont + 1
		for _, a := range []*plot.Axis{&p.X, &p.Y} {
			a.Tick.Label.Font.Size = panelFont
			a.Label.TextStyle.Font.Size = panelFont
		}
		p.Y.Tick.Marker = plainTicks{}
		if i/panelCols == rows-1 || i+panelCols >= len(picked) {
			p.X.Label.Text = "time since open (s)"
		}
		if i%panelCols == 0 {
			p.Y.Label.Text = "Mbit/s"
		}
		if same && len(outages) > 0 {
			p.Add(&shade{spans: outages, color: outageColor})
		}
		if same && len(handoffs) > 0 {
			p.Add(&shade{spans: handoffs, color: handoffColor})
		}
		p.Add(plotter.NewGrid())
		ts := seriesTimes(r)
		raw := make(plotter.XYs, 0, len(ts)+2)
		raw = append(raw, plotter.XY{X: 0, Y: 0})
		for k, t := range ts {
			raw = append(raw, plotter.XY{X: t, Y: min(r.GoodputSeries[k]/1e6, ymax)})
		}
		raw = append(raw, plotter.XY{X: ts[len(ts)-1], Y: 0})
		addLine(p, raw, rawStyle, plotter.PreStep)
		sm := make(plotter.XYs, 0, 2*len(smooth[i]))
		for k, v := range smooth[i] {
			sm = append(sm, plotter.XY{X: float64(k) * SmoothSec, Y: v / 1e6}, plotter.XY{X: float64(k+1) * SmoothSec, Y: v / 1e6})
		}
		addLine(p, sm, smoothStyle, plotter.NoStep)
		if capOK {
			addLine(p, clipCurve(ct, cb, xmax), capStyle, plotter.NoStep)
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xmax*1.02, 0, ymax
		f.grid[i/panelCols][i%panelCols] = p
	}
	notes = append(notes, "One run per scheduler: the run of median "+map[bool]string{false: "FCT", true: "goodput"}[tm]+" among its successful runs. "+spikeNote+
		fmt.Sprintf(" The bold line averages them over %.2f s intervals.", SmoothSec))
	fig.Note = joinNotes(notes)
	return f, fig, true
}

// lineStyle is a line of the given colour, width (points) and dashes.
func lineStyle(c color.Color, width float64, dashes []vg.Length) *plotter.Line {
	l := &plotter.Line{}
	l.Color, l.Width, l.Dashes = c, vg.Points(width), dashes
	return l
}

// addLine adds to p the line through xys drawn as style, with step.
func addLine(p *plot.Plot, xys plotter.XYs, style *plotter.Line, step plotter.StepKind) {
	if len(xys) == 0 {
		return
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	l.LineStyle, l.StepStyle = style.LineStyle, step
	p.Add(l)
}

// sampleMillis is r's sample interval, ms (100 if unrecorded).
func sampleMillis(r metrics.Result) float64 {
	if r.SeriesStepSec > 0 {
		return math.Round(r.SeriesStepSec * 1000)
	}
	return 100
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("25", not "25.00").
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', -1, 64)
		}
	}
	return ts
}
