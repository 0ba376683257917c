package mpfile

import (
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Meta is what a Result records beyond the measurements.
type Meta struct {
	Scheduler   string  // scheduler name recorded
	Scenario    string  // scenario name recorded
	Seed        int64   // seed recorded
	CapacityBps float64 // capacity recorded, bits/s (the sum of the paths' bottleneck rates)
}

// NewResult turns a download into a metrics.Result: fct is the time from
// the start of the dial to the last byte, client the receiving session's
// stats and series; server figures come from d.Server when present,
// otherwise from what the client received per path.
func NewResult(m Meta, d Download, fct time.Duration, client session.Stats, series []session.Sample, err error) metrics.Result {
	r := metrics.Result{
		Scheduler:   m.Scheduler,
		Scenario:    m.Scenario,
		Seed:        m.Seed,
		CapacityBps: m.CapacityBps,
		Bytes:       uint64(d.Received),
		FCTSeconds:  fct.Seconds(),
		SHA256OK:    d.SHA256OK && err == nil,
		OOOSegments: client.OOOSegments,
	}
	r.HoLBlockedSec = client.HoLBlocked.Seconds()
	if fct > 0 {
		r.GoodputBps = float64(d.Received) * 8 / fct.Seconds()
	}
	if err != nil {
		r.Error = err.Error()
	}
	r.Extra = map[string]float64{
		"size_bytes":        float64(d.Size),
		"duplicate_bytes":   float64(client.DuplicateBytes),
		"max_reorder_bytes": float64(client.MaxReorderBytes),
		"paths":             float64(len(client.Paths)),
	}
	if ss := d.Server; ss != nil {
		r.SentBytes = ss.SentBytes
		r.RedundantBytes = ss.RedundantBytes
		r.RetransPackets = ss.PacketsLost + ss.RetransSegments
		r.PerPathBytes = ss.PerPathBytes
		r.Extra["reinjected_segments"] = float64(ss.ReinjectedSegs)
		r.Extra["path_failures"] = float64(ss.PathFailures)
		r.Extra["coupling_cuts"] = float64(ss.CouplingCuts)
		r.Extra["coupling_undos"] = float64(ss.CouplingUndos)
		r.Extra["coupled_acked_bytes"] = float64(ss.CoupledAcked)
		r.Extra["coupled_governed_bytes"] = float64(ss.CoupledGoverned)
	} else {
		for _, p := range client.Paths {
			for int(p.ID) >= len(r.PerPathBytes) {
				r.PerPathBytes = append(r.PerPathBytes, 0)
			}
			r.PerPathBytes[p.ID] += p.BytesReceived
			r.SentBytes += p.BytesReceived
		}
	}
	if len(series) > 1 {
		r.SeriesStepSec = (series[1].T - series[0].T).Seconds()
		for _, smp := range series {
			r.GoodputSeries = append(r.GoodputSeries, smp.GoodputBps)
		}
	}
	return r
}
