package bench

import (
	"math"
	"testing"
	"time"
)

const ms = time.Millisecond

// Worked example: the request at 0, reads at 50, 60, 1060 and 1070 ms. The
// longest wait for in-order data is 60→1060 ms (1 s); a timed run whose FCT
// comes 1.13 s after the last read ends with a longer one.
func TestStallLog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fct     time.Duration
		wantMax time.Duration
		wantN   int // gaps kept (1 ms or longer)
	}{
		{"download ends at the last read", 1070 * ms, 1000 * ms, 4},
		{"timed run ends waiting", 2200 * ms, 1130 * ms, 5},
	} {
		var l stallLog
		l.begin(0)
		for _, at := range []time.Duration{50 * ms, 60 * ms, 1060 * ms, 1070 * ms} {
			l.delivered(at)
		}
		l.end(tc.fct)
		if l.max != tc.wantMax {
			t.Errorf("%s: max stall = %v, want %v", tc.name, l.max, tc.wantMax)
		}
		if len(l.gaps) != tc.wantN {
			t.Errorf("%s: %d gaps kept, want %d: %v", tc.name, len(l.gaps), tc.wantN, l.gaps)
		}
	}
}

// Reads 0.5 ms apart are no stall worth keeping, but they still count for
// the maximum.
func TestStallLogFloor(t *testing.T) {
	var l stallLog
	l.begin(0)
	for k := 1; k <= 10; k++ {
		l.delivered(time.Duration(k) * 500 * time.Microsecond)
	}
	l.end(5 * ms)
	if len(l.gaps) != 0 || l.max != 500*time.Microsecond {
		t.Errorf("gaps %v, max %v: want none kept and a 0.5 ms maximum", l.gaps, l.max)
	}
}

// The failover gap of a window [start, end) is its longest delivery gap,
// counted from start at the earliest.
func TestFailoverGap(t *testing.T) {
	s := func(a, b float64) [2]time.Duration {
		return [2]time.Duration{time.Duration(a * float64(time.Second)), time.Duration(b * float64(time.Second))}
	}
	gaps := [][2]time.Duration{s(0.9, 1.0), s(1.05, 1.7), s(3.0, 3.2), s(4.8, 5.3)}
	for _, tc := range []struct {
		start, end float64
		want       float64
	}{
		{1.0, 3.0, 0.65}, // the gap ending at the start and the one starting at the end are outside
		{5.0, 6.0, 0.3},  // a gap under way at the start counts from the start
		{6.0, 7.0, 0},    // delivery never paused
		{0.95, 3.5, 0.65},
	} {
		got := failoverGap(gaps, time.Duration(tc.start*float64(time.Second)), time.Duration(tc.end*float64(time.Second)))
		if math.Abs(got.Seconds()-tc.want) > 1e-9 {
			t.Errorf("window [%v, %v): failover gap %v, want %v s", tc.start, tc.end, got, tc.want)
		}
	}
}

// synthTrace builds a 10 ms path trace of path 0 from rates (bits/s) over
// [from, to) pieces, and a path 1 that never receives anything.
func synthTrace(until time.Duration, rate func(t time.Duration) float64) *pathTrace {
	var tr pathTrace
	var b uint64
	for t := time.Duration(0); t <= until; t += PathSampleStep {
		if t > 0 {
			b += uint64(rate(t-PathSampleStep) * PathSampleStep.Seconds() / 8)
		}
		tr.add(t, []uint64{b, 0})
	}
	return &tr
}

// Worked example: path 0 carries 8 Mbit/s (10 000 B per 10 ms), is out from
// 3 s to 5 s, receives nothing until 5.3 s, then 2 Mbit/s (a quarter) until
// 6 s, then 8 Mbit/s again. Half of the pre-event rate over 200 ms is
// 100 000 B: the window from 5.86 s holds 14 steps at 2 500 B and 6 at
// 10 000 B (95 000 B), the one from 5.87 s 13 and 7 (102 500 B), so the path
// recovers 0.87 s after the link's return. The failover gap is the 2 s of the
// outage when no other path delivers.
func TestHandoffEventsWorked(t *testing.T) {
	rate := func(t time.Duration) float64 {
		switch {
		case t < 3000*ms:
			return 8e6
		case t < 5300*ms:
			return 0
		case t < 6000*ms:
			return 2e6
		}
		return 8e6
	}
	tr := synthTrace(10*time.Second, rate)
	var l stallLog
	l.begin(0)
	for t := 10 * ms; t <= 3000*ms; t += 10 * ms {
		l.delivered(t)
	}
	for t := 5310 * ms; t <= 10000*ms; t += 10 * ms {
		l.delivered(t)
	}
	l.end(10 * time.Second)
	ws := []eventWindow{{path: 0, kind: "outage", start: 3 * time.Second, end: 5 * time.Second}}

	for _, tc := range []struct {
		name     string
		fct      time.Duration
		recovery float64 // s; < 0: none
		reason   string
	}{
		{"recovers", 10 * time.Second, 0.87, ""},
		{"the transfer ends first", 5900 * ms, -1, "not before the FCT"},
		{"the window must fit before the FCT", 6069 * ms, -1, "not before the FCT"},
		{"just fits", 6070 * ms, 0.87, ""},
		{"link back after the FCT", 4 * time.Second, -1, "link back after the FCT"},
	} {
		evs := handoffEvents(ws, &l, tr, tc.fct)
		if len(evs) != 1 {
			t.Fatalf("%s: %d events, want 1", tc.name, len(evs))
		}
		ev := evs[0]
		if math.Abs(ev.PreRateBps-8e6) > 1 || ev.PreEventSec != 2 {
			t.Errorf("%s: pre-event rate %v bit/s over %v s, want 8e6 over 2 s", tc.name, ev.PreRateBps, ev.PreEventSec)
		}
		switch {
		case tc.recovery < 0 && ev.RecoverySec != nil:
			t.Errorf("%s: recovery %v s, want none", tc.name, *ev.RecoverySec)
		case tc.recovery >= 0 && (ev.RecoverySec == nil || math.Abs(*ev.RecoverySec-tc.recovery) > 1e-9):
			t.Errorf("%s: recovery %v (%q), want %v s", tc.name, ev.RecoverySec, ev.NoRecovery, tc.recovery)
		}
		if ev.NoRecovery != tc.reason {
			t.Errorf("%s: no_recovery %q, want %q", tc.name, ev.NoRecovery, tc.reason)
		}
		if math.Abs(ev.FailoverGapSec-2.31) > 1e-9 && tc.fct > 5*time.Second {
			t.Errorf("%s: failover gap %v s, want 2.31 (3.0 → 5.31 s)", tc.name, ev.FailoverGapSec)
		}
	}

	// A next outage of the same path at 6.05 s ends the search: the
	// recovering window (5.87-6.07 s) would overlap it. One at 6.07 s lets
	// it through.
	for _, tc := range []struct {
		next     time.Duration
		recovery float64
		reason   string
	}{
		{6050 * ms, -1, "not before the path's next event"},
		{6070 * ms, 0.87, ""},
	} {
		ws2 := append(ws, eventWindow{path: 0, kind: "outage", start: tc.next, end: tc.next + time.Second})
		evs := handoffEvents(ws2, &l, tr, 10*time.Second)
		ev := evs[0]
		// The second outage measures against the 8 Mbit/s before the first
		// when the path had not recovered from it, else against its own
		// 5-6.05 s or 5-6.07 s (≤ 2.5 Mbit/s).
		if in := evs[1]; in.PreRateInherited != (tc.recovery < 0) || (in.PreRateInherited && in.PreRateBps != 8e6) || (!in.PreRateInherited && in.PreRateBps > 2.5e6) {
			t.Errorf("next event at %v: pre-event rate %v (inherited %v)", tc.next, in.PreRateBps, in.PreRateInherited)
		}
		got := -1.0
		if ev.RecoverySec != nil {
			got = *ev.RecoverySec
		}
		if math.Abs(got-tc.recovery) > 1e-9 || ev.NoRecovery != tc.reason {
			t.Errorf("next event at %v: recovery %v (%q), want %v (%q)", tc.next, got, ev.NoRecovery, tc.recovery, tc.reason)
		}
	}
}

// A path that carried nothing before its event has nothing to recover; an
// event after the FCT is not reported; a second event on the same path takes
// its pre-event rate from the previous event's end only.
func TestHandoffEventsEdges(t *testing.T) {
	rate := func(t time.Duration) float64 {
		if t >= 3000*ms && t < 4000*ms {
			return 0
		}
		return 4e6
	}
	tr := synthTrace(20*time.Second, rate)
	var l stallLog
	ws := []eventWindow{
		{path: 0, kind: "outage", start: 4500 * ms, end: 5 * time.Second}, // given out of order
		{path: 0, kind: "outage", start: 3 * time.Second, end: 4 * time.Second},
		{path: 1, kind: "handoff", start: 2 * time.Second, end: 3 * time.Second},
		{path: 0, kind: "outage", start: 30 * time.Second, end: 31 * time.Second},
	}
	evs := handoffEvents(ws, &l, tr, 20*time.Second)
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3 (the one after the FCT left out): %+v", len(evs), evs)
	}
	if evs[0].StartSec != 3 || evs[1].StartSec != 4.5 || evs[2].Path != 1 {
		t.Errorf("events not in path then start order: %+v", evs)
	}
	// The second outage's pre-event window is 4 s → 4.5 s (after the first).
	if evs[1].PreEventSec != 0.5 || math.Abs(evs[1].PreRateBps-4e6) > 1 {
		t.Errorf("second outage: pre-event %v s at %v bit/s, want 0.5 s at 4e6", evs[1].PreEventSec, evs[1].PreRateBps)
	}
	// This synthetic path keeps receiving through the second window, so it
	// is back at once.
	if evs[1].RecoverySec == nil || *evs[1].RecoverySec != 0 {
		t.Errorf("second outage: recovery %v, want 0", evs[1].RecoverySec)
	}
	if evs[2].RecoverySec != nil || evs[2].NoRecovery != "no traffic on the path before the event" || evs[2].Kind != "handoff" {
		t.Errorf("idle path's handoff: %+v", evs[2])
	}
}

// Samples out of order or for unknown paths never panic and read as 0.
func TestPathTraceBadInput(t *testing.T) {
	var tr pathTrace
	if tr.at(0, time.Second) != 0 || tr.rate(3, 0, time.Second) != 0 || tr.rate(0, time.Second, 0) != 0 {
		t.Error("an empty trace reads non-zero")
	}
	if _, ok := tr.recovery(0, 0, time.Second, 1, RecoveryWindow); ok {
		t.Error("an empty trace recovers")
	}
	tr.add(time.Second, []uint64{10})
	tr.add(time.Second/2, []uint64{99}) // earlier than the last: dropped
	tr.add(2*time.Second, []uint64{20, 5})
	if got := tr.at(0, 1500*ms); got != 10 {
		t.Errorf("at 1.5 s: %d, want 10", got)
	}
	if got := tr.at(1, 2*time.Second); got != 5 {
		t.Errorf("late path at 2 s: %d, want 5", got)
	}
	if got := tr.at(1, 1500*ms); got != 0 {
		t.Errorf("late path before it appears: %d, want 0", got)
	}
	if got := tr.at(-1, 1500*ms); got != 0 {
		t.Errorf("path -1: %d, want 0", got)
	}
}
