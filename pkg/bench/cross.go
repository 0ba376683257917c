package bench

import (
	"fmt"
	"time"

	"github.com/mpqsched/mpqsched/pkg/cross"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// CrossFlow is one flow of cross traffic in a Run (see pkg/cross): a
// download between endpoints of its own, across its own access link and
// then either path Path end to end or shared link Shared only.
type CrossFlow struct {
	Name   string       // label recorded in the Result
	Spec   cross.Spec   // kind, start, stop, on/off times
	Path   int          // crosses every link of path Path, if Shared < 0
	Shared int          // index into Run.Shared, or -1
	Access emu.PathSpec // the flow's own access link (PathSpec{}: ideal)
}

// crossOf returns the shared links and cross flows of a run: those set in
// the Run, or else those of its scenario.
func crossOf(r Run) ([]emu.SharedLink, []CrossFlow, error) {
	if r.Shared != nil || r.Cross != nil || r.Spec == nil {
		return r.Shared, r.Cross, nil
	}
	s := *r.Spec
	shared, err := s.EmuShared()
	if err != nil {
		return nil, nil, err
	}
	var flows []CrossFlow
	for _, x := range s.Cross {
		f := CrossFlow{
			Name: x.Name,
			Spec: cross.Spec{
				Kind:       cross.Kind(x.Kind),
				Start:      x.Start.D(),
				Stop:       x.Stop.D(),
				MeanOn:     x.MeanOn.D(),
				MeanOff:    x.MeanOff.D(),
				CBRRateBps: x.CBRRateBps,
			},
			Shared: -1,
			Access: emu.PathSpec{Up: emu.LinkConfig{Delay: x.AccessDelay.D()}, Down: emu.LinkConfig{Delay: x.AccessDelay.D()}},
		}
		switch {
		case x.Bottleneck != nil:
			f.Shared = *x.Bottleneck
		case x.Path != nil:
			f.Path = *x.Path
		}
		flows = append(flows, f)
	}
	if s.Timed && s.Duration > 0 {
		for i := range flows {
			if flows[i].Spec.Stop == 0 {
				flows[i].Spec.Stop = s.Duration.D()
			}
		}
	}
	return shared, flows, nil
}

// newTopology builds the run's emulated network: disjoint paths, or paths
// behind shared links.
func newTopology(r Run) (*emu.Topology, error) {
	shared, _, err := crossOf(r)
	if err != nil {
		return nil, err
	}
	if len(shared) == 0 {
		return emu.NewTopology(r.Seed, r.Paths...)
	}
	return emu.NewSharedTopology(r.Seed, r.Paths, shared)
}

// crossRun is the cross traffic of one run.
type crossRun struct {
	flows   []*cross.Flow
	names   []string
	stopped bool
}

// startCross starts the run's cross flows on topo, each seeded from the
// run's seed and its index.
func startCross(topo *emu.Topology, r Run) (*crossRun, error) {
	_, flows, err := crossOf(r)
	if err != nil {
		return nil, err
	}
	cr := &crossRun{}
	for k, f := range flows {
		var via []*emu.Link
		switch {
		case f.Shared >= 0 && f.Shared < len(topo.Shared):
			via = []*emu.Link{topo.Shared[f.Shared]}
		case f.Shared < 0 && f.Path >= 0 && f.Path < len(topo.PathLinks):
			via = topo.PathLinks[f.Path]
		default:
			cr.stop()
			return nil, fmt.Errorf("bench: cross flow %d: no path %d or shared link %d", k, f.Path, f.Shared)
		}
		c, s, err := topo.AddFlow(f.Access, via...)
		if err != nil {
			cr.stop()
			return nil, fmt.Errorf("bench: cross flow %d: %w", k, err)
		}
		spec := f.Spec
		if spec.Step == 0 && r.SeriesStep > 0 {
			spec.Step = r.SeriesStep
		}
		fl, err := cross.Start(topo.Net, c, s, spec, uint64(r.Seed)<<16+uint64(k))
		if err != nil {
			cr.stop()
			return nil, fmt.Errorf("bench: cross flow %d: %w", k, err)
		}
		cr.flows = append(cr.flows, fl)
		cr.names = append(cr.names, f.Name)
	}
	return cr, nil
}

// stop stops every flow; it may be called more than once.
func (cr *crossRun) stop() error {
	if cr == nil || cr.stopped {
		return nil
	}
	cr.stopped = true
	var first error
	for _, f := range cr.flows {
		if err := f.Stop(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// record stops the flows and writes their goodput into res: the mean over
// [0, fct] and the series. An error a flow met is not the run's failure; it
// goes into res.Extra as "cross_errors".
func (cr *crossRun) record(res *metrics.Result, fct time.Duration) {
	if cr == nil || len(cr.flows) == 0 {
		return
	}
	if err := cr.stop(); err != nil {
		if res.Extra == nil {
			res.Extra = map[string]float64{}
		}
		res.Extra["cross_errors"]++
	}
	res.CrossNames = cr.names
	for _, f := range cr.flows {
		g := f.Goodput()
		var bytes int64
		for i, end := range g.T {
			if end <= fct.Seconds()+1e-9 {
				bytes += g.Bytes[i]
			}
		}
		secs := fct.Seconds()
		if n := int(fct.Seconds() / g.StepSec); n > 0 {
			secs = float64(n) * g.StepSec // whole intervals only
		}
		bps := 0.0
		if secs > 0 {
			bps = float64(bytes) * 8 / secs
		}
		res.CrossGoodputBps = append(res.CrossGoodputBps, bps)
		series := make([]float64, len(g.Bytes))
		for i, b := range g.Bytes {
			series[i] = float64(b) * 8 / g.StepSec
		}
		res.CrossSeries = append(res.CrossSeries, series)
		if len(g.T) > len(res.CrossSeriesTimes) {
			res.CrossSeriesTimes = g.T
		}
	}
}
