package bench

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// Handoff metrics: how long the application waited for data, and how fast a
// path came back after an outage or handoff. The computations here are pure
// functions of two timelines a run records (handoff_probe.go):
//
//   - a stall log: the time of every read that returned new in-order bytes,
//     from the request to the FCT, kept as its gaps (exact: no sampling);
//   - a path trace: each path's received bytes (segment payload bytes,
//     duplicates included) sampled every PathSampleStep.
//
// All times are offsets from the emulator's start, the frame in which a
// scenario's outage and handoff windows are given.
const (
	// PathSampleStep is the grid of the path trace: recovery times are
	// multiples of it (rounded up to the first sample after the link's
	// return).
	PathSampleStep = 10 * time.Millisecond
	// PreEventWindow is how far before an event its path's rate is taken
	// (shortened by a previous event on the same path or by the open).
	PreEventWindow = 2 * time.Second
	// RecoveryWindow is the window over which a recovering path must carry
	// RecoveryFraction of its pre-event rate; it smooths the burstiness of
	// one congestion window per RTT.
	RecoveryWindow = 200 * time.Millisecond
	// RecoveryFraction of the pre-event rate counts as recovered.
	RecoveryFraction = 0.5
	// stallFloor: gaps between deliveries shorter than this are not kept in
	// the stall log (they still count for the maximum).
	stallFloor = time.Millisecond
)

// stallLog records in-order deliveries: begin at the request, delivered at
// each read that returned new bytes, end at the FCT. The zero value is ready.
type stallLog struct {
	on   bool               // begun
	last time.Duration      // the request or the latest delivery
	max  time.Duration      // longest gap so far
	gaps [][2]time.Duration // gaps of stallFloor or more: [last delivery, next delivery)
}

// begin starts the log at the request, now.
func (l *stallLog) begin(now time.Duration) { l.on, l.last = true, now }

// delivered records new in-order bytes read at now.
func (l *stallLog) delivered(now time.Duration) {
	if !l.on {
		l.begin(now)
		return
	}
	g := now - l.last
	if g > l.max {
		l.max = g
	}
	if g >= stallFloor {
		l.gaps = append(l.gaps, [2]time.Duration{l.last, now})
	}
	l.last = now
}

// end closes the log at the FCT, now: the wait since the last delivery
// counts (a timed run ends while data is still outstanding).
func (l *stallLog) end(now time.Duration) {
	if l.on && now > l.last {
		l.delivered(now)
	}
	l.on = false
}

// failoverGap is the longest gap of gaps that begins or is under way within
// [start, end), counted from start at the earliest; 0 if none.
func failoverGap(gaps [][2]time.Duration, start, end time.Duration) time.Duration {
	var best time.Duration
	for _, g := range gaps {
		if g[1] <= start || g[0] >= end {
			continue
		}
		best = max(best, g[1]-max(g[0], start))
	}
	return best
}

// pathTrace is each path's cumulative received bytes on a time grid.
type pathTrace struct {
	t     []time.Duration // sample times, increasing
	bytes [][]uint64      // bytes[i][k]: path i's bytes received by t[k]
}

// add appends a sample at now; per[i] is path i's bytes received so far
// (paths not yet joined are absent or 0).
func (tr *pathTrace) add(now time.Duration, per []uint64) {
	if n := len(tr.t); n > 0 && now <= tr.t[n-1] {
		return
	}
	for len(tr.bytes) < len(per) {
		tr.bytes = append(tr.bytes, make([]uint64, len(tr.t)))
	}
	tr.t = append(tr.t, now)
	for i := range tr.bytes {
		var b uint64
		if i < len(per) {
			b = per[i]
		}
		tr.bytes[i] = append(tr.bytes[i], b)
	}
}

// at returns path i's bytes received by t: the last sample at or before t,
// 0 before the first or for an unknown path.
func (tr *pathTrace) at(i int, t time.Duration) uint64 {
	if i < 0 || i >= len(tr.bytes) {
		return 0
	}
	k := sort.Search(len(tr.t), func(k int) bool { return tr.t[k] > t }) - 1
	if k < 0 {
		return 0
	}
	return tr.bytes[i][k]
}

// rate is path i's mean receive rate over [from, to), bits/s; 0 for an
// empty interval.
func (tr *pathTrace) rate(i int, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	return float64(tr.at(i, to)-tr.at(i, from)) * 8 / (to - from).Seconds()
}

// recovery returns the time from back until path i carries needBps again:
// the first sample time t ≥ back, such that the path receives at least
// needBps over [t, t+w] with t+w no later than the last sample and limit,
// minus back. false if there is none.
func (tr *pathTrace) recovery(i int, back, limit time.Duration, needBps float64, w time.Duration) (time.Duration, bool) {
	if i < 0 || i >= len(tr.bytes) || len(tr.t) == 0 || w <= 0 {
		return 0, false
	}
	limit = min(limit, tr.t[len(tr.t)-1])
	need := needBps * w.Seconds() / 8 // bytes
	for k := sort.Search(len(tr.t), func(k int) bool { return tr.t[k] >= back }); k < len(tr.t); k++ {
		t := tr.t[k]
		if t+w > limit {
			break
		}
		if float64(tr.at(i, t+w)-tr.bytes[i][k]) >= need {
			return t - back, true
		}
	}
	return 0, false
}

// notBeforeNext is HandoffEvent.NoRecovery for a path still recovering when
// its next event began.
const notBeforeNext = "not before the path's next event"

// eventWindow is one Down outage or handoff of one path.
type eventWindow struct {
	path       int
	kind       string // "outage" or "handoff"
	start, end time.Duration
}

// handoffEvents measures every window that began before fct (times in the
// emulator's frame) from the stall log and the path trace. A path's recovery
// must happen before the FCT and before the path's next event; its
// pre-event rate is taken after its previous event, or is that event's when
// the path had not recovered from it.
func handoffEvents(ws []eventWindow, log *stallLog, tr *pathTrace, fct time.Duration) []metrics.HandoffEvent {
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b eventWindow) int {
		return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.start, b.start))
	})
	var out []metrics.HandoffEvent
	for k, w := range ws {
		if w.start >= fct || w.end <= w.start {
			continue
		}
		from := max(w.start-PreEventWindow, 0)
		if len(tr.t) > 0 {
			from = max(from, tr.t[0])
		}
		limit, why := fct, "not before the FCT"
		for j, p := range ws {
			switch {
			case j < k && p.path == w.path && p.end <= w.start:
				from = max(from, p.end)
			case j > k && p.path == w.path && p.start < limit:
				limit, why = p.start, notBeforeNext
			}
		}
		ev := metrics.HandoffEvent{
			Path: w.path, Kind: w.kind, StartSec: w.start.Seconds(), EndSec: w.end.Seconds(),
			PreEventSec:       max(w.start-from, 0).Seconds(),
			RecoveryWindowSec: RecoveryWindow.Seconds(),
			FailoverGapSec:    failoverGap(log.gaps, w.start, w.end).Seconds(),
		}
		ev.PreRateBps = tr.rate(w.path, from, w.start)
		if n := len(out); n > 0 && out[n-1].Path == w.path && out[n-1].NoRecovery == notBeforeNext {
			// Still recovering from the previous event: measure against the
			// rate the path had before that one.
			ev.PreRateBps, ev.PreEventSec, ev.PreRateInherited = out[n-1].PreRateBps, out[n-1].PreEventSec, true
		}
		switch {
		case ev.PreRateBps <= 0:
			ev.NoRecovery = "no traffic on the path before the event"
		case w.end >= fct:
			ev.NoRecovery = "link back after the FCT"
		default:
			if d, ok := tr.recovery(w.path, w.end, limit, RecoveryFraction*ev.PreRateBps, RecoveryWindow); ok {
				s := d.Seconds()
				ev.RecoverySec = &s
			} else {
				ev.NoRecovery = why
			}
		}
		out = append(out, ev)
	}
	return out
}
