package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/mpqsched/mpqsched/pkg/metrics"
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

// recoveryPlot plots, for a scenario with outages or handoffs, each event of
// every successful run at the time its link came back: the path's recovery
// time (filled circle) and the failover gap at its start (triangle), per
// scheduler; events whose path did not recover before the FCT are crosses
// at the top.
func recoveryPlot(scn string, rs []metrics.Result, _ []Row) (*plot.Plot, Figure, bool) {
	p := plot.New()
	p.Title.Text = "Recovery and failover gap per outage or handoff: " + scn
	p.X.Label.Text = "link back (end of the window), s since the start"
	p.Y.Label.Text = "time (s)"
	fig := Figure{Kind: "recovery", Title: p.Title.Text}
	tm := timedRuns(scn, rs)
	type pts struct{ rec, gap, none plotter.XYs }
	scheds := schedulers(rs)
	per := make([]pts, len(scheds))
	top, xmax, n := 0.0, 0.0, 0
	window, pre := 0.0, 0.0 // as the runs recorded them, s
	for i, sch := range scheds {
		for _, r := range rs {
			if r.Scheduler != sch || !OK(r, tm) {
				continue
			}
			for _, ev := range r.HandoffEvents {
				n++
				window, pre = ev.RecoveryWindowSec, max(pre, ev.PreEventSec)
				xmax = max(xmax, ev.EndSec)
				per[i].gap = append(per[i].gap, plotter.XY{X: ev.EndSec, Y: ev.FailoverGapSec})
				top = max(top, ev.FailoverGapSec)
				switch {
				case ev.RecoverySec != nil:
					per[i].rec = append(per[i].rec, plotter.XY{X: ev.EndSec, Y: *ev.RecoverySec})
					top = max(top, *ev.RecoverySec)
				case notRecovered(ev):
					per[i].none = append(per[i].none, plotter.XY{X: ev.EndSec})
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
	// Schedulers side by side around each event's time.
	off := math.Max(xmax, 1) * 0.006
	unrec := false
	for i, sch := range scheds {
		dx := (float64(i) - float64(len(scheds)-1)/2) * off
		for _, set := range []struct {
			xys   plotter.XYs
			shape draw.GlyphDrawer
			label string
		}{
			{per[i].rec, draw.CircleGlyph{}, sch + " recovery"},
			{per[i].gap, draw.TriangleGlyph{}, sch + " failover gap"},
			{per[i].none, draw.CrossGlyph{}, ""},
		} {
			if len(set.xys) == 0 {
				continue
			}
			xys := make(plotter.XYs, len(set.xys))
			for k, xy := range set.xys {
				xys[k] = plotter.XY{X: xy.X + dx, Y: xy.Y}
				if set.label == "" {
					xys[k].Y = top * 1.1
					unrec = true
				}
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				continue
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(i), Radius: vg.Points(3), Shape: set.shape}
			p.Add(sc)
			if set.label != "" {
				p.Legend.Add(set.label, sc)
			}
		}
	}
	note := fmt.Sprintf("Recovery: from the link's return to the start of the first %g s over which the path carries half its rate before the event "+
		"(over up to %g s; 10 ms grid). Failover gap: the longest wait for in-order data during the window, from its start.", window, pre)
	if unrec {
		note += " Crosses at the top: the path had not recovered by the FCT or by its next event."
	}
	fig.Note = note
	p.Y.Min, p.Y.Max = 0, top*1.1*headroom
	p.X.Min = 0
	p.X.Max = xmax * 1.05
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p, fig, true
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
