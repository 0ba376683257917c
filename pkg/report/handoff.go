package report

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// notRecovered reports whether ev's link came back before the FCT but its
// path did not carry half its pre-event rate by the FCT or by its next
// event (HandoffEvent.NoRecovery "not before ...").
func notRecovered(ev metrics.HandoffEvent) bool {
	return ev.RecoverySec == nil && strings.HasPrefix(ev.NoRecovery, "not before")
}

// handoffs pools the handoff events of a group's successful runs.
type handoffs struct {
	recovery, gap       []float64 // recovery_s of recovered events, failover_gap_s of all, s
	events, unrecovered int       // events, and those whose path did not recover before the FCT
}

// add pools r's events.
func (h *handoffs) add(r metrics.Result) {
	for _, ev := range r.HandoffEvents {
		h.events++
		h.gap = append(h.gap, ev.FailoverGapSec)
		switch {
		case ev.RecoverySec != nil:
			h.recovery = append(h.recovery, *ev.RecoverySec)
		case notRecovered(ev):
			h.unrecovered++
		}
	}
}

// recoveryCell formats a row's recovery: mean ± CI of the recovered events,
// "n/a" without events, and how many did not recover if any.
func recoveryCell(r Row, prec int) string {
	if r.Events == 0 {
		return "n/a"
	}
	s := r.Recovery.Format(1, prec)
	if r.Unrecovered > 0 {
		s += fmt.Sprintf(" (%d of %d unrecovered)", r.Unrecovered, r.Events)
	}
	return s
}

// recoveryPlot plots, for a scenario with outages or handoffs, every event
// of every successful run as a strip per scheduler: the path's recovery
// time (filled circles, left) and the failover gap at the event's start
// (triangles, right), spread sideways so that equal values stay visible,
// with a bar at each strip's median; events whose path did not recover
// before the FCT are crosses at the top.
func recoveryPlot(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	p := plot.New()
	p.Title.Text = "Recovery and failover gap per outage or handoff: " + scn
	p.Y.Label.Text = "time (s)"
	fig := Figure{Kind: "recovery", Title: p.Title.Text}
	tm := timedRuns(scn, rs)
	scheds := schedulers(rs)
	rec, gap, none := make([][]float64, len(scheds)), make([][]float64, len(scheds)), make([]int, len(scheds))
	top, n := 0.0, 0
	window, pre := 0.0, 0.0 // as the runs recorded them, s
	for i, sch := range scheds {
		for _, r := range rs {
			if r.Scheduler != sch || !OK(r, tm) {
				continue
			}
			for _, ev := range r.HandoffEvents {
				n++
				window, pre = ev.RecoveryWindowSec, max(pre, ev.PreEventSec)
				gap[i] = append(gap[i], ev.FailoverGapSec)
				top = max(top, ev.FailoverGapSec)
				switch {
				case ev.RecoverySec != nil:
					rec[i] = append(rec[i], *ev.RecoverySec)
					top = max(top, *ev.RecoverySec)
				case notRecovered(ev):
					none[i]++
				}
			}
		}
	}
	if n == 0 {
		return nil, fig, false
	}
	if top <= 0 {
		top = 1
	}
	recStyle := draw.GlyphStyle{Color: color.NRGBA{R: 20, G: 60, B: 160, A: 200}, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
	gapStyle := draw.GlyphStyle{Color: color.NRGBA{R: 210, G: 110, B: 0, A: 220}, Radius: vg.Points(2.4), Shape: draw.TriangleGlyph{}}
	noneStyle := draw.GlyphStyle{Color: color.NRGBA{R: 200, G: 0, B: 0, A: 255}, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}
	var names []string
	legend := map[string]bool{}
	for i, sch := range scheds {
		names = append(names, sch)
		for _, set := range []struct {
			ys     []float64
			dx     float64
			style  draw.GlyphStyle
			label  string
			median bool
		}{
			{rec[i], -0.18, recStyle, "recovery", true},
			{gap[i], 0.18, gapStyle, "failover gap", true},
			{slices.Repeat([]float64{top * 1.1}, none[i]), 0, noneStyle, "not recovered by the FCT or the next event", false},
		} {
			if len(set.ys) == 0 {
				continue
			}
			xys := make(plotter.XYs, len(set.ys))
			for k, y := range set.ys {
				xys[k] = plotter.XY{X: float64(i) + set.dx + jitter(k, len(set.ys)), Y: y}
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				continue
			}
			sc.GlyphStyle = set.style
			p.Add(sc)
			if !legend[set.label] {
				legend[set.label] = true
				p.Legend.Add(set.label, sc)
			}
			if set.median {
				m := stats.Quantile(set.ys, 0.5)
				if l, err := plotter.NewLine(plotter.XYs{{X: float64(i) + set.dx - 0.14, Y: m}, {X: float64(i) + set.dx + 0.14, Y: m}}); err == nil {
					l.Color, l.Width = color.Black, vg.Points(1.5)
					p.Add(l)
				}
			}
		}
	}
	note := fmt.Sprintf("One circle and one triangle per event of every successful run; the black bars are the medians. Recovery: from the link's return to the start of the first %g s over which the path carries half its rate before the event "+
		"(over up to %g s; 10 ms grid). Failover gap: the longest wait for in-order data during the window, from its start.", window, pre)
	if slices.ContainsFunc(none, func(k int) bool { return k > 0 }) {
		note += " Crosses at the top: the path had not recovered by the FCT or by its next event."
	}
	fig.Note = note
	p.NominalX(names...)
	padX(p, len(names))
	p.Y.Min, p.Y.Max = 0, top*1.1*headroom
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p, fig, true
}

// jitter spreads the k-th of n points of a strip sideways, within ±0.1,
// in a fixed pattern, so that equal values do not hide each other.
func jitter(k, n int) float64 {
	if n < 2 {
		return 0
	}
	return 0.2*float64(k)/float64(n-1) - 0.1
}

// EventTable renders every handoff event of rs's successful runs as a
// Markdown table, one line per scheduler, seed and event; "" if there are
// none.
func EventTable(rs []metrics.Result) string {
	var b strings.Builder
	num := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	for _, sch := range schedulers(rs) {
		for _, r := range rs {
			if r.Scheduler != sch || !OK(r, timedRuns(r.Scenario, rs)) {
				continue
			}
			for _, ev := range r.HandoffEvents {
				if b.Len() == 0 {
					b.WriteString("| scheduler | seed | path | kind | window (s) | pre-event rate (Mbit/s) | recovery (s) | failover gap (s) |\n")
					b.WriteString("|---|---:|---:|---|---|---:|---:|---:|\n")
				}
				pre := num(ev.PreRateBps/1e6, 2)
				if ev.PreRateInherited {
					pre += " (previous event's)"
				}
				rec := ev.NoRecovery
				if ev.RecoverySec != nil {
					rec = num(*ev.RecoverySec, 2)
				}
				fmt.Fprintf(&b, "| %s | %d | %d | %s | %s-%s | %s | %s | %s |\n", mdEscape(sch), r.Seed, ev.Path, ev.Kind,
					num(ev.StartSec, 2), num(ev.EndSec, 2), pre, rec, num(ev.FailoverGapSec, 3))
			}
		}
	}
	return b.String()
}
