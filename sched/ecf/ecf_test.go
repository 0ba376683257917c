package ecf

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

const mss = 1460 // the notes' segment size, bytes

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const ms = time.Millisecond

// path is a snapshot with cwnd and in-flight counted in 1460-byte packets.
func path(id sched.PathID, srtt, rttvar time.Duration, cwnd, inflight uint64) sched.PathInfo {
	return sched.PathInfo{
		ID:               id,
		SmoothedRTT:      srtt,
		MinRTT:           srtt,
		LatestRTT:        srtt,
		RTTVar:           rttvar,
		CongestionWindow: cwnd * mss,
		BytesInFlight:    inflight * mss,
		SegmentsInFlight: inflight,
		MSS:              mss,
	}
}

// conn has k packets of unsent data.
func conn(k uint64) sched.ConnInfo {
	return sched.ConnInfo{Now: t0, SendBufferBytes: k * mss, PeerWindow: 1 << 22, SegmentSize: mss}
}

var (
	wait  = sched.Decision{Action: sched.Wait}
	sendS = sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}
)

// Notes, ECF unit tests: "cwnd_f = cwnd_s = 10, RTT_f = 20 ms, RTT_s = 80 ms,
// δ = 8 ms" and the paper form
//
//	δ = max(σ_f, σ_s);   n = 1 + k/cwnd_f
//	if n·RTT_f < (1 + waiting·β)·(RTT_s + δ):
//	    if (k/cwnd_s)·RTT_s ≥ 2·RTT_f + δ:  waiting = 1; WAIT
//	    else:                               SEND on s      (waiting unchanged)
//	else:                                   waiting = 0; SEND on s
//
// | # | k | waiting in | n·RTT_f vs (1+wβ)(RTT_s+δ) | cond2 | decision / waiting out |
// | 1 | 30 | 0 | 80 < 88 | 240 ≥ 48 | WAIT / 1 |
// | 2 | 40 | 0 | 100 ≮ 88 | – | SEND / 0 |
// | 3 | 40 | 1 | 100 < 110 | 320 ≥ 48 | WAIT / 1 (hysteresis) |
// | 4 | 50 | 1 | 120 ≮ 110 | – | SEND / 0 |
//
// k ≥ cwnd in every row, so the kernel's floor does not matter: both forms
// are checked.
func TestNotesTable(t *testing.T) {
	paths := []sched.PathInfo{
		path(1, 20*ms, 8*ms, 10, 10), // f: full; σ_f = 8 ms
		path(2, 80*ms, 4*ms, 10, 5),  // s: room; σ_s = 4 ms, so δ = 8 ms
	}
	tests := []struct {
		row         int
		k           uint64
		waitingIn   bool
		want        sched.Decision
		waitingWant bool
	}{
		{1, 30, false, wait, true},
		{2, 40, false, sendS, false},
		{3, 40, true, wait, true},
		{4, 50, true, sendS, false},
	}
	for _, paperK := range []bool{false, true} {
		for _, tt := range tests {
			s := New(Options{PaperK: paperK})
			s.waiting = tt.waitingIn
			c := conn(tt.k)
			if got := s.Decide(&c, paths); got != tt.want {
				t.Errorf("PaperK=%v row %d: got %+v, want %+v", paperK, tt.row, got, tt.want)
			}
			if got := s.Waiting(); got != tt.waitingWant {
				t.Errorf("PaperK=%v row %d: got waiting %v, want %v", paperK, tt.row, got, tt.waitingWant)
			}
		}
	}
}

// Notes, test 5 (the floor effect): "RTT_f = 10, RTT_s = 30, δ = 2, k = 5,
// waiting = 0. Paper form: 15 < 32, then 15 ≥ 22 is false, so SEND. Kernel
// form: k is raised to 10, so 20 < 32, then 30 ≥ 22, so WAIT."
func TestFloorOfK(t *testing.T) {
	paths := []sched.PathInfo{
		path(1, 10*ms, 2*ms, 10, 10),
		path(2, 30*ms, 1*ms, 10, 5),
	}
	tests := []struct {
		name        string
		opts        Options
		want        sched.Decision
		waitingWant bool
	}{
		{"default (kernel floor)", Options{}, wait, true},
		{"PaperK", Options{PaperK: true}, sendS, false},
	}
	for _, tt := range tests {
		s := New(tt.opts)
		c := conn(5)
		if got := s.Decide(&c, paths); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		if got := s.Waiting(); got != tt.waitingWant {
			t.Errorf("%s: got waiting %v, want %v", tt.name, got, tt.waitingWant)
		}
	}
}

// Paper form: cond2 is "(k/cwnd_s)·RTT_s ≥ 2·RTT_f + δ", so equality waits;
// and a SEND from the second test leaves waiting unchanged. With cwnd_s = 16,
// RTT_s = 64 ms, RTT_f = 20 ms, δ = 8 ms: k = 12 gives 48 ≥ 48; k = 11 gives
// 44 < 48.
func TestSecondCondition(t *testing.T) {
	paths := []sched.PathInfo{
		path(1, 20*ms, 8*ms, 10, 10),
		path(2, 64*ms, 8*ms, 16, 5),
	}
	tests := []struct {
		name        string
		k           uint64
		waitingIn   bool
		want        sched.Decision
		waitingWant bool
	}{
		{"equality waits", 12, false, wait, true},
		{"below sends, waiting stays 0", 11, false, sendS, false},
		{"below sends, waiting stays 1", 11, true, sendS, true},
	}
	for _, tt := range tests {
		s := New(Options{PaperK: true})
		s.waiting = tt.waitingIn
		c := conn(tt.k)
		if got := s.Decide(&c, paths); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		if got := s.Waiting(); got != tt.waitingWant {
			t.Errorf("%s: got waiting %v, want %v", tt.name, got, tt.waitingWant)
		}
	}
}

// Brief: "k = unsent bytes (ConnInfo.SendBufferBytes + RetransmitQueued·
// SegmentSize) in packets". 20 new packets alone give n = 3: 60 < 88 and
// 160 ≥ 48, so WAIT; with 20 queued re-sends k = 40 and 100 ≮ 88, so SEND.
func TestRetransmissionsCountInK(t *testing.T) {
	paths := []sched.PathInfo{
		path(1, 20*ms, 8*ms, 10, 10),
		path(2, 80*ms, 4*ms, 10, 5),
	}
	tests := []struct {
		resends uint64
		want    sched.Decision
	}{
		{0, wait},
		{20, sendS},
	}
	for _, tt := range tests {
		s := New(Options{})
		c := conn(20)
		c.RetransmitQueued = tt.resends
		if got := s.Decide(&c, paths); got != tt.want {
			t.Errorf("%d re-sends: got %+v, want %+v", tt.resends, got, tt.want)
		}
	}
}

// Notes, "Shared setup": "If f has cwnd room, send on f." Sending on f does
// not touch the waiting bit ("It changes only here").
func TestFastHasRoom(t *testing.T) {
	s := New(Options{})
	s.waiting = true
	paths := []sched.PathInfo{
		path(1, 80*ms, 4*ms, 10, 5),
		path(2, 20*ms, 8*ms, 10, 9),
	}
	c := conn(30)
	if got, want := s.Decide(&c, paths), sendS; got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if !s.Waiting() {
		t.Errorf("sending on f cleared the waiting bit")
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) {
		schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New(Options{}) })
	})
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New(Options{}) })
}

// Testable: ECF's tests need an RTT sample, an MSS and a window on both
// paths; a path missing any of them is sent on without the tests.
func TestTestable(t *testing.T) {
	ok := schedtest.Path(1, 10*time.Millisecond, 10, 0)
	if !Testable(&ok, &ok) {
		t.Fatalf("a measured path is not testable: %+v", ok)
	}
	for name, spoil := range map[string]func(*sched.PathInfo){
		"no RTT sample": func(p *sched.PathInfo) { p.SmoothedRTT = 0 },
		"no MSS":        func(p *sched.PathInfo) { p.MSS = 0 },
		"no window":     func(p *sched.PathInfo) { p.CongestionWindow = 0 },
	} {
		bad := ok
		spoil(&bad)
		if Testable(&bad, &ok) || Testable(&ok, &bad) {
			t.Errorf("%s: testable", name)
		}
	}
}
