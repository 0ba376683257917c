package scenario

import (
	"math"
	"testing"
	"time"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }

// The default scenario: 20 Mbit/s with 10 ms RTT + 10 Mbit/s with 30 ms RTT,
// 20 MB. FCT ≥ 1 RTT of the fast path + 20·2^20·8 bits / 30 Mbit/s + its
// one-way delay = 10 ms + 5.592405 s + 5 ms.
func TestBoundsDefault(t *testing.T) {
	s, _ := Get(Default)
	if got := s.CapacityBps(); !near(got, 30e6, 1e-9) {
		t.Errorf("CapacityBps = %v, want 30e6", got)
	}
	fluid := 20 * MB * 8 / 30e6 // s
	want := 10*time.Millisecond + time.Duration(fluid*1e9) + 5*time.Millisecond
	if got := s.FCTLowerBound(); absDur(got-want) > time.Microsecond {
		t.Errorf("FCTLowerBound = %v, want %v", got, want)
	}
}

// An outage halves the average: one 10 Mbit/s path, down from 1 s to 2 s; a
// transfer of 2.5 Mbit starting after a 10 ms RTT crosses 9.9 Mbit by 1 s...
// so pick sizes on either side of the outage.
func TestBoundsOutage(t *testing.T) {
	l := link(10, 5, 0)
	l.Outages = []Window{win(1, 2)}
	s := Scenario{Name: "o", Paths: []PathSpec{sym("p", l)}, Duration: sec(10)}
	// 15 Mbit: 0.01..1 s carries 9.9 Mbit, 2..2.51 s carries the other 5.1.
	s.Bytes = 15e6 / 8
	if got, want := s.FCTLowerBound(), 2510*time.Millisecond+5*time.Millisecond; absDur(got-want) > time.Microsecond {
		t.Errorf("FCTLowerBound = %v, want %v", got, want)
	}
	if got, want := s.CapacityBps(), 15e6/2.5; !near(got, want, 1e-6) {
		t.Errorf("CapacityBps = %v, want %v", got, want)
	}
	s.Timed = true
	if got := s.CapacityBps(); !near(got, 9e6, 1e-6) {
		t.Errorf("timed CapacityBps = %v, want 9e6", got)
	}
}

// A ramp from 10 to 20 Mbit/s over [1 s, 3 s] averages 15 Mbit/s there.
func TestBoundsRamp(t *testing.T) {
	l := link(10, 0, 0)
	l.Schedule = []Step{{At: sec(1), Ramp: sec(2), RateBps: f64(20e6)}}
	s := Scenario{Name: "r", Paths: []PathSpec{sym("p", l)}, Duration: sec(5), Timed: true, Bytes: 1}
	// 10 + 30 + 40 = 80 Mbit over 5 s.
	if got := s.CapacityBps(); !near(got, 16e6, 1e-9) {
		t.Errorf("CapacityBps = %v, want 16e6", got)
	}
}

// A handoff window [0 s, 2 s) with 1 s degradation: the rate falls linearly
// to 10% over the first second (mean 55%), then 0.
func TestBoundsHandoff(t *testing.T) {
	l := link(10, 0, 0)
	l.Handoffs = []Window{win(0, 2)}
	s := Scenario{Name: "h", Paths: []PathSpec{sym("p", l)}, Duration: sec(4), Timed: true, Bytes: 1}
	// 5.5 + 0 + 20 Mbit over 4 s.
	if got := s.CapacityBps(); !near(got, 25.5e6/4, 1e-9) {
		t.Errorf("CapacityBps = %v, want %v", got, 25.5e6/4)
	}
}

func TestShortKeepsBehaviour(t *testing.T) {
	for _, s := range Library() {
		sh := Short(s, 2*MB, sec(20))
		if err := sh.Validate(); err != nil {
			t.Errorf("%s: %v", sh.Name, err)
			continue
		}
		if sh.Bytes > 2*MB || sh.Duration > sec(20) {
			t.Errorf("%s: %d bytes, %v", sh.Name, sh.Bytes, sh.Duration)
		}
		vs, err := sh.Expand()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if _, err := v.Resolve(1); err != nil {
				t.Errorf("%s: %v", v.Name, err)
			}
		}
	}
	// The walk dropout keeps its outage at the same fraction of the run.
	s, _ := Get("wifi-walk-dropout")
	sh := Short(s, 8*MB, 0)
	w := sh.Paths[0].Down.Outages[0]
	if f := w.Start.Seconds() / sh.Duration.Seconds(); !near(f, 8.0/60, 1e-6) {
		t.Errorf("outage at fraction %v, want %v", f, 8.0/60)
	}
	if sh.Paths[0].Down.RateBps != s.Paths[0].Down.RateBps || sh.Paths[0].Down.Delay != s.Paths[0].Down.Delay {
		t.Error("Short changed the link")
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
