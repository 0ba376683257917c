package session

import "time"

// InflightSample is one scheduler snapshot of a path: quic-go's bytes in
// flight from the tracer, and the session's estimates without one.
type InflightSample struct {
	Path                        int
	Qlog, Cwnd                  uint64
	Acked, TimeSRTT, TimeLatest uint64
	SRTT                        time.Duration
}

// RecordInflight gives every path a tracer and records every snapshot until
// the returned stop is called.
func RecordInflight() (stop func() []InflightSample) {
	forceTracer = true
	var out []InflightSample
	viewTap = func(p *path, now time.Time, v linkView) {
		out = append(out, InflightSample{Path: p.slot, Qlog: v.inflight, Cwnd: v.cwnd,
			Acked: p.inflightByAcks(), TimeSRTT: p.inflightByTime(now, v.srtt, v.lastRecv), TimeLatest: p.inflightByTime(now, v.latestRTT, v.lastRecv), SRTT: v.srtt})
	}
	return func() []InflightSample {
		forceTracer, viewTap = false, nil
		return out
	}
}
