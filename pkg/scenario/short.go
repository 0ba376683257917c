package scenario

import "math"

// Short returns a smaller copy of s for CI, keeping its link behaviour: rates,
// delays, loss and queues are unchanged, while the transfer size and the
// whole timeline are scaled by one factor
//
//	f = min(1, maxBytes/B, maxDuration/Duration)
//
// where B is Bytes (or the largest size Ranges can draw, if larger). Bytes
// and any bytes range or sweep sizes scale by f (at least 1 byte); Duration,
// schedule step times and ramps, outage and handoff windows, handoff
// degradation, a video workload's chunk duration, startup buffer and
// buffer target, a web workload's object sizes, think time and number of
// loads, an rpc workload's number of requests, response and bulk sizes and
// bulk start, the periods and lengths in Ranges (outage processes
// included), bottleneck links' timelines and cross-traffic start, stop and
// mean on/off times scale by f too, so each event still happens at the same
// fraction of an ideal transfer. A
// non-positive limit is ignored. The name gets the suffix ".short" when
// anything shrank.
func Short(s Scenario, maxBytes int64, maxDuration Duration) Scenario {
	out := s.clone()
	big := s.Bytes
	if s.Ranges != nil && s.Ranges.Bytes != nil {
		big = max(big, s.Ranges.Bytes.Max)
	}
	if s.Sweep != nil {
		for _, b := range s.Sweep.Bytes {
			big = max(big, b)
		}
	}
	f := 1.0
	if maxBytes > 0 && big > maxBytes {
		f = min(f, float64(maxBytes)/float64(big))
	}
	if maxDuration > 0 && s.Duration > maxDuration {
		f = min(f, float64(maxDuration)/float64(s.Duration))
	}
	if f >= 1 {
		return out
	}
	out.Name += ".short"
	sb := func(b int64) int64 { return max(1, int64(math.Floor(float64(b)*f))) }
	sd := func(d Duration) Duration { return Duration(math.Floor(float64(d) * f)) }
	out.Bytes = sb(out.Bytes)
	out.Duration = max(sd(out.Duration), 1)
	for i := range out.Paths {
		shortenLink(&out.Paths[i].Up, sd)
		shortenLink(&out.Paths[i].Down, sd)
	}
	for k := range out.Bottlenecks {
		shortenLink(&out.Bottlenecks[k].Up, sd)
		shortenLink(&out.Bottlenecks[k].Down, sd)
	}
	for k := range out.Cross {
		x := &out.Cross[k]
		x.Start, x.Stop = sd(x.Start), sd(x.Stop)
		if x.MeanOn > 0 {
			x.MeanOn, x.MeanOff = max(sd(x.MeanOn), 1), max(sd(x.MeanOff), 1)
		}
	}
	if r := out.Ranges; r != nil {
		if r.Bytes != nil {
			r.Bytes.Min, r.Bytes.Max = sb(r.Bytes.Min), sb(r.Bytes.Max)
		}
		for i := range r.Paths {
			r.Paths[i].Every = sd(r.Paths[i].Every)
			if h := r.Paths[i].Handoff; h != nil {
				h.Every, h.Offset, h.MinLen, h.MaxLen = sd(h.Every), sd(h.Offset), max(sd(h.MinLen), 1), max(sd(h.MaxLen), 1)
			}
			if o := r.Paths[i].Outages; o != nil {
				o.MeanGap, o.Offset, o.MinLen, o.MaxLen = max(sd(o.MeanGap), 1), sd(o.Offset), max(sd(o.MinLen), 1), max(sd(o.MaxLen), 1)
			}
		}
	}
	if w := out.Workload; w != nil {
		switch w.Kind {
		case WorkloadWeb:
			// A page keeps its objects and priorities; every object, the
			// think time and the number of loads (at least one) shrink by
			// f.
			p := w.WebPage()
			p.HTMLBytes = sb(p.HTMLBytes)
			for i := range p.Groups {
				p.Groups[i].Bytes = sb(p.Groups[i].Bytes)
			}
			w.Page, w.ThinkTime = &p, sd(w.ThinkTime)
			w.Pages = int(math.Ceil(float64(w.PageLoads()) * f))
		case WorkloadRPC:
			// The requests keep their rate and request size; their number
			// (at least one), the responses, the bulk transfer and its
			// start shrink by f.
			if r := w.RPC; r != nil {
				r.Requests = int(math.Ceil(float64(r.Requests) * f))
				r.ResponseBytes, r.BulkBytes, r.BulkStart = sb(r.ResponseBytes), sb(r.BulkBytes), sd(r.BulkStart)
			}
		default:
			// A video keeps its chunk count and bitrate; its chunks (and
			// so its size and play time) shrink by f.
			w.ChunkDuration = max(sd(w.ChunkDuration), 1)
			w.StartupBuffer, w.BufferTarget = sd(w.StartupBuffer), sd(w.BufferTarget)
		}
		out.Bytes = w.TotalBytes()
	}
	if out.Sweep != nil {
		for i := range out.Sweep.Bytes {
			out.Sweep.Bytes[i] = sb(out.Sweep.Bytes[i])
		}
	}
	return out
}

// shortenLink scales every time of l (schedule steps, outage and handoff
// windows, the handoff degradation) with sd.
func shortenLink(l *Link, sd func(Duration) Duration) {
	for j := range l.Schedule {
		l.Schedule[j].At = sd(l.Schedule[j].At)
		l.Schedule[j].Ramp = sd(l.Schedule[j].Ramp)
	}
	for _, ws := range [][]Window{l.Outages, l.Handoffs} {
		for j := range ws {
			ws[j].Start, ws[j].End = sd(ws[j].Start), sd(ws[j].End)
		}
	}
	l.HandoffDegrade = sd(l.HandoffDegrade)
}
