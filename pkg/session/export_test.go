package session

import (
	"sync"
	"time"
)

// InflightSample is one scheduler snapshot of a path with a tracer:
// quic-go's bytes in flight (qlog's MetricsUpdated, less the packets it
// declared lost since), its congestion window, and the session's two
// estimates without a tracer, both as a tracer-less path computes them from
// ConnectionStats: ByTime (inflightByTime, the one the session uses) and
// ByAcks (inflightByAcks).
type InflightSample struct {
	Path           int
	Qlog, Cwnd     uint64 // bytes
	ByTime, ByAcks uint64 // bytes
	LatestRTT      time.Duration
	PacketsLost    uint64
}

// RecordInflight gives every path of the sessions started from now on a
// tracer and records every scheduler snapshot of a path until stop is
// called (before any session starts and after the last one ended).
func RecordInflight() (stop func() []InflightSample) {
	forceTracer = true
	var mu sync.Mutex // both ends' send passes record
	var out []InflightSample
	viewTap = func(p *path, now time.Time, v linkView) {
		if p.conn == nil {
			return
		}
		st := p.conn.ConnectionStats()
		p.sv.update(&st, now) // as viewLocked does without a tracer
		mu.Lock()
		defer mu.Unlock()
		out = append(out, InflightSample{
			Path: p.slot, Qlog: v.inflight, Cwnd: v.cwnd,
			ByTime:    p.inflightByTime(now, st.LatestRTT, p.sv.lastRecv),
			ByAcks:    p.inflightByAcks(),
			LatestRTT: st.LatestRTT, PacketsLost: st.PacketsLost,
		})
	}
	return func() []InflightSample {
		forceTracer, viewTap = false, nil
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}
