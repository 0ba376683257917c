package report

import (
	"cmp"
	"slices"

	"gonum.org/v1/plot/plotter"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// spikeNote explains, under every goodput-over-time plot, why a curve can
// rise above the capacity line.
const spikeNote = "Each step is the data delivered in order within one sample interval (the area under a curve is the bytes delivered); " +
	"when a missing segment arrives, the data held behind it is delivered at once, so such an interval can rise above the capacity line."

func joinNotes(notes []string) string {
	out := ""
	for i, n := range notes {
		if i > 0 {
			out += " "
		}
		out += n
	}
	return out
}

// representative returns scheduler sch's OK run with a goodput series whose
// FCT (goodput, if timed) is the median: the lower middle one of an even
// count, so that it is a real run.
func representative(rs []metrics.Result, sch string, timed bool) (metrics.Result, bool) {
	var c []metrics.Result
	for _, r := range rs {
		if r.Scheduler == sch && len(r.GoodputSeries) > 0 && OK(r, timed) && len(seriesTimes(r)) == len(r.GoodputSeries) {
			c = append(c, r)
		}
	}
	if len(c) == 0 {
		return metrics.Result{}, false
	}
	slices.SortFunc(c, func(a, b metrics.Result) int {
		if timed {
			return cmp.Or(cmp.Compare(a.GoodputBps, b.GoodputBps), cmp.Compare(a.Seed, b.Seed))
		}
		return cmp.Or(cmp.Compare(a.FCTSeconds, b.FCTSeconds), cmp.Compare(a.Seed, b.Seed))
	})
	return c[(len(c)-1)/2], true
}

// seriesTimes returns the end of each sample interval of r, s since the
// session opened: the recorded series_t_s, or, for records that predate it,
// multiples of the step (which misplace a series that started late).
func seriesTimes(r metrics.Result) []float64 {
	if len(r.SeriesTimes) > 0 || r.SeriesStepSec <= 0 {
		return r.SeriesTimes
	}
	ts := make([]float64, len(r.GoodputSeries))
	for k := range ts {
		ts[k] = float64(k+1) * r.SeriesStepSec
	}
	return ts
}

// capacity returns the summed capacity curve of the runs (recorded, or from
// the library scenario for older records) and whether they all agree.
func capacity(rs []metrics.Result) (t, bps []float64, same bool) {
	for i, r := range rs {
		ct, cb := r.CapacityTimes, r.CapacitySeries
		if len(ct) == 0 {
			s, ok := lookup(r.Scenario, r.Seed)
			if !ok {
				return nil, nil, false
			}
			ct, cb = s.CapacityCurve()
		}
		if i == 0 {
			t, bps = ct, cb
		} else if !slices.Equal(ct, t) || !slices.Equal(cb, bps) {
			return nil, nil, false
		}
	}
	return t, bps, len(t) > 0 && len(t) == len(bps)
}

// clipCurve turns a piecewise-linear curve (t s, bps bits/s) into plot
// points in Mbit/s up to xmax, interpolating its value at xmax; past its last
// point the curve keeps its last value.
func clipCurve(t, bps []float64, xmax float64) plotter.XYs {
	var xys plotter.XYs
	for k := range t {
		if t[k] > xmax {
			if k == 0 {
				return nil
			}
			y := bps[k-1] + (bps[k]-bps[k-1])*(xmax-t[k-1])/(t[k]-t[k-1])
			return append(xys, plotter.XY{X: xmax, Y: y / 1e6})
		}
		xys = append(xys, plotter.XY{X: t[k], Y: bps[k] / 1e6})
	}
	return append(xys, plotter.XY{X: xmax, Y: bps[len(bps)-1] / 1e6})
}

// windows returns the Down outages and handoffs, s, of the runs' scenario,
// as the runs recorded them (or from the library scenario for older
// records), and whether they are the same for every run.
func windows(rs []metrics.Result) (outages, handoffs [][2]float64, same bool) {
	for i, r := range rs {
		o, h := r.Outages, r.Handoffs
		if len(r.CapacityTimes) == 0 { // an older record: no scenario data
			s, ok := lookup(r.Scenario, r.Seed)
			if !ok {
				return nil, nil, true
			}
			for _, p := range s.Paths {
				for _, w := range p.Down.Outages {
					o = append(o, [2]float64{w.Start.Seconds(), w.End.Seconds()})
				}
				for _, w := range p.Down.Handoffs {
					h = append(h, [2]float64{w.Start.Seconds(), w.End.Seconds()})
				}
			}
		}
		if i == 0 {
			outages, handoffs = o, h
		} else if !slices.Equal(o, outages) || !slices.Equal(h, handoffs) {
			return nil, nil, false
		}
	}
	return outages, handoffs, true
}
