package streamaware

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Issue 22, item 4: "each stream's next data goes to the path with the
// earliest estimated completion for that stream", and SA-ECF's abstract:
// "the completion of individual streams are not delayed by slower paths".
//
// Worked case. Fast path: SRTT 10 ms, cwnd 10 segments (12000 B), full, so
// rate 1.2 MB/s. Slow path: SRTT 40 ms (4×), cwnd 10 segments, empty, rate
// 0.3 MB/s. MSS 1200 B.
//   - Small stream, 1200 B unframed: k = 2400 B.
//     C_fast(k) = (12000+2400)/1.2e6 + 0.005 = 17 ms; C_slow(k) = 2400/3e5 +
//     0.020 = 28 ms, so f = fast, which is full. One segment on slow arrives
//     at C_slow(1200) = 1200/3e5 + 0.020 = 24 ms > 17 ms: WAIT for fast,
//     although slow has room (minRTT sends it on slow).
//   - Large stream, 118800 B unframed: k = 120000 B. C_fast(k) =
//     132000/1.2e6 + 0.005 = 115 ms; slow's segment at 24 ms < 115 ms: send on slow. With
//     fast's window open it goes on fast: the large stream uses both.
//   - The crossover: slow is used once C_fast(k) > 24 ms, i.e. k > 10800 B
//     (k = 9600 B waits, k = 12000 B uses slow).
func TestWorkedTwoPaths(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fastFull := schedtest.Path(1, 10*ms, 10, 10)
	fastOpen := schedtest.Path(1, 10*ms, 10, 5)
	slow := schedtest.Path(2, 40*ms, 10, 0)
	conn := func(remaining uint64) *sched.ConnInfo {
		c := schedtest.Conn(now, 100)
		c.StreamRemaining = remaining
		return &c
	}
	wait := sched.Decision{Action: sched.Wait}
	on := func(i int) sched.Decision { return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)} }
	tests := []struct {
		name      string
		remaining uint64
		paths     []sched.PathInfo
		want      sched.Decision
	}{
		{"small stream, fast full: waits for fast", 1200, []sched.PathInfo{fastFull, slow}, wait},
		{"small stream, fast open: fast", 1200, []sched.PathInfo{fastOpen, slow}, on(0)},
		{"large stream, fast full: slow", 118800, []sched.PathInfo{fastFull, slow}, on(1)},
		{"large stream, fast open: fast", 118800, []sched.PathInfo{fastOpen, slow}, on(0)},
		{"k = 9600 B: C_fast = 23 ms < slow's 24 ms: wait", 8400, []sched.PathInfo{fastFull, slow}, wait},
		{"k = 12000 B: C_fast = 25 ms: slow", 10800, []sched.PathInfo{fastFull, slow}, on(1)},
	}
	for _, tc := range tests {
		c := conn(tc.remaining)
		if got := New().Decide(c, tc.paths); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// The contrast: minRTT sends the small stream on the slow path.
	if got := minrtt.New().Decide(conn(1200), []sched.PathInfo{fastFull, slow}); got != on(1) {
		t.Errorf("minrtt on the small stream: got %+v, want the slow path", got)
	}
}

// The estimate itself, C_p(k) = (inflight + queued + k)/(cwnd/SRTT) + SRTT/2.
func TestCompletion(t *testing.T) {
	p := schedtest.Path(1, 40*time.Millisecond, 10, 4) // 4800 B in flight, rate 0.3 MB/s
	p.BytesQueued = 1200
	got, ok := Completion(&p, 6000)
	want := 12000.0/3e5 + 0.020 // 60 ms
	if !ok || got < want-1e-9 || got > want+1e-9 {
		t.Errorf("Completion = %v, %v; want %v", got, ok, want)
	}
	if _, ok := Completion(&sched.PathInfo{CongestionWindow: 12000}, 1); ok {
		t.Error("a path without an RTT sample was estimated")
	}
}

// Without a stream, k is the connection's unsent data, as in ECF; a
// retransmission goes on minRTT's path and does not wait.
func TestNoStreamAndRetransmission(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	paths := []sched.PathInfo{schedtest.Path(1, 10*ms, 10, 10), schedtest.Path(2, 40*ms, 10, 0)}
	c := schedtest.Conn(now, 2) // 2400 B unsent
	c.HasStream = false
	if got := New().Decide(&c, paths); got.Action != sched.Wait {
		t.Errorf("no stream, 2400 B unsent: got %+v, want Wait", got)
	}
	c.SendBufferBytes = 120000
	if got := New().Decide(&c, paths); got.Paths != sched.Of(1) {
		t.Errorf("no stream, 120000 B unsent: got %+v, want the slow path", got)
	}
	c.SendBufferBytes, c.RetransmitQueued = 2400, 1
	if got := New().Decide(&c, paths); got.Paths != sched.Of(1) || got.Action != sched.SendNext {
		t.Errorf("retransmission: got %+v, want SendNext on the slow path", got)
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
