package blest

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

const mss = 1460 // the notes' segment size, bytes

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// path is a snapshot with cwnd and in-flight counted in 1460-byte packets.
func path(id sched.PathID, srtt time.Duration, cwnd, inflight uint64) sched.PathInfo {
	return sched.PathInfo{
		ID:               id,
		SmoothedRTT:      srtt,
		MinRTT:           srtt,
		LatestRTT:        srtt,
		CongestionWindow: cwnd * mss,
		BytesInFlight:    inflight * mss,
		SegmentsInFlight: inflight,
		MSS:              mss,
	}
}

// notesPaths is the notes' unit-test setup: f (20 ms, cwnd 10, full) and
// s (80 ms, cwnd 20, 10 packets in flight).
func notesPaths() []sched.PathInfo {
	return []sched.PathInfo{
		path(1, 20*time.Millisecond, 10, 10),
		path(2, 80*time.Millisecond, 20, 10),
	}
}

// conn returns a snapshot whose send window SW = PeerWindow + InFlightBytes
// is sw, with both paths' 20 packets in flight; sw = 0 gives a peer window of
// 0 (window-limited).
func conn(now time.Time, sw uint64) sched.ConnInfo {
	inflight := uint64(20 * mss)
	if sw == 0 {
		sw = inflight
	}
	return sched.ConnInfo{
		Now:             now,
		SendBufferBytes: 100 * mss,
		InFlightBytes:   inflight,
		PeerWindow:      sw - inflight,
		SegmentSize:     mss,
	}
}

// Notes, BLEST unit test: "MSS = 1460, RTT_f = 20 ms, RTT_s = 80 ms,
// cwnd_f = 10, inflight_s = 10 pkts, λ = 1.2, SW = 65536.
// Paper form: rtts = 4, X = 1460·11.5·4 = 67160, λX = 80592.
// RHS = 65536 − 16060 = 49476, so WAIT. With SW = 262144, RHS = 246084, so SEND."
// Paper: "WAIT iff λ·X > SW − MSS_s·(inflight_s + 1)".
func TestNotesExample(t *testing.T) {
	tests := []struct {
		name string
		sw   uint64
		want sched.Decision
	}{
		{"SW=65536", 65536, sched.Decision{Action: sched.Wait}},
		{"SW=262144", 262144, sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
		// λX = 80592 = RHS + MSS_s·(inflight_s+1) gives SW = 96652: equality is not ">", so SEND.
		{"SW=96652 (equality)", 96652, sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
		{"SW=96651", 96651, sched.Decision{Action: sched.Wait}},
	}
	for _, tt := range tests {
		s := New(Options{})
		c := conn(t0, tt.sw)
		if got := s.Decide(&c, notesPaths()); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		if got, want := s.Lambda(), 1.2; got != want {
			t.Errorf("%s: λ after the first check = %v, want %v", tt.name, got, want)
		}
	}
}

// Notes, "Shared setup": "f = path with the lowest smoothed RTT (SRTT). If f
// has cwnd room, send on f." Even with a window that would make BLEST wait.
func TestFastHasRoom(t *testing.T) {
	tests := []struct {
		name  string
		paths []sched.PathInfo
		want  sched.Decision
	}{
		{"f has room", []sched.PathInfo{
			path(1, 80*time.Millisecond, 20, 10),
			path(2, 20*time.Millisecond, 10, 9),
		}, sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
		{"no path has room", []sched.PathInfo{
			path(1, 20*time.Millisecond, 10, 10),
			path(2, 80*time.Millisecond, 20, 20),
		}, sched.Decision{Action: sched.Wait}},
		{"s unmeasured: probe it", []sched.PathInfo{
			path(1, 20*time.Millisecond, 10, 10),
			path(2, 0, 20, 0),
		}, sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
	}
	for _, tt := range tests {
		s := New(Options{})
		c := conn(t0, 65536)
		if got := s.Decide(&c, tt.paths); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// Notes, λ: "Start 1.2, minimum 1.0, maximum 1.3. If a "bad" event happened
// since the last update: +0.04. Otherwise: −0.01. Then clamp to [1.0, 1.3]
// and clear the flag. Updates at most once per min_srtt of s, only when the
// slow-path check runs."
// "λ trace: 1.20 → bad → 1.24 → bad → 1.28 → good → 1.27. One bad step from
// 1.28 clamps at 1.30."
func TestLambdaTrace(t *testing.T) {
	const minRTTs = 80 * time.Millisecond
	type step struct {
		at   time.Duration // time of the Decide after t0
		lost bool          // a SegmentLost arrives before that Decide
		want float64       // λ after the Decide
	}
	tests := []struct {
		name  string
		init  float64
		sw    uint64 // 0: window-limited, so a loss is a bad event
		steps []step
	}{
		{"notes trace", 0, 0, []step{
			{0, false, 1.20}, // first check starts the clock
			{minRTTs, true, 1.24},
			{2 * minRTTs, true, 1.28},
			{3 * minRTTs, false, 1.27},
		}},
		{"clamp at 1.30", 1.28, 0, []step{
			{0, false, 1.28},
			{minRTTs, true, 1.30},
			{2 * minRTTs, true, 1.30},
		}},
		{"clamp at 1.00", 1.01, 0, []step{
			{0, false, 1.01},
			{minRTTs, false, 1.00},
			{2 * minRTTs, false, 1.00},
		}},
		{"at most once per min RTT of s", 0, 0, []step{
			{0, false, 1.20},
			{minRTTs - 1, true, 1.20},
			{minRTTs + 1, false, 1.24}, // the flag survived until the update
			{2 * minRTTs, false, 1.24},
		}},
		{"a loss while the window has room is not bad", 0, 262144, []step{
			{0, false, 1.20},
			{minRTTs, true, 1.19},
		}},
	}
	for _, tt := range tests {
		s := New(Options{Lambda: tt.init})
		for i, st := range tt.steps {
			c := conn(t0.Add(st.at), tt.sw)
			if st.lost {
				s.SegmentLost(c.Now, 2, uint64(i))
			}
			s.Decide(&c, notesPaths())
			if got := s.Lambda(); got != st.want {
				t.Errorf("%s step %d: got λ = %v, want %v", tt.name, i, got, st.want)
			}
		}
	}
}

// Options.FixedLambda: "disables λ adaptation" (the notes' Go port runs with
// "λ fixed at 1"): losses while window-limited leave λ where it started.
func TestFixedLambda(t *testing.T) {
	s := New(Options{Lambda: 1.1, FixedLambda: true})
	for i := range 4 {
		c := conn(t0.Add(time.Duration(i)*time.Second), 0)
		s.SegmentLost(c.Now, 2, uint64(i))
		s.Decide(&c, notesPaths())
	}
	if got, want := s.Lambda(), 1.1; got != want {
		t.Errorf("got λ = %v, want %v", got, want)
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
