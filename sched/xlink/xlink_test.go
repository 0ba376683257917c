package xlink

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Issue 22, item 4: XLINK "copies a chunk's remaining data to another path
// only when the playback buffer is below the paper's threshold". The double
// threshold, as the paper's §5.2 is summarised: "buffer < threshold 1:
// re-injection on; buffer > threshold 2: re-injection off; in between: on if
// the buffer is below the expected remaining transfer time". xquic (the
// authors' stack) re-injects only "if paths still have cwnd" after every new
// packet was scheduled, oldest unacknowledged packet first, each once.
//
// Worked case, T_low = 1 s, T_high = 3 s. Fast path: SRTT 10 ms, cwnd 10
// segments (12000 B, 1.2 MB/s). Slow path: SRTT 40 ms, cwnd 10 segments
// (0.3 MB/s). The summed rate is 1.5 MB/s.
//   - New data (Decide) always goes by minRTT, whatever the buffer: the
//     fast path while it has room, else the slow one.
//   - Re-injection round (Reinject: nothing new can be sent), 12000 B in
//     flight:
//   - buffer 5 s > T_high: off (Wait);
//   - buffer 0.5 s < T_low, fast full: the copy goes on slow, the only path
//     with room; both open: each path takes the oldest segment it has not
//     carried (the other path's: xquic puts a re-injected packet on the
//     lowest-RTT path with room other than its own);
//   - buffer 2 s, between: with 1.2 MB of the stream unsent, delivery =
//     (1.2e6 + 12000)/1.5e6 s + 5 ms = 813 ms < 2 s: off; with 3.6 MB,
//     (3.6e6 + 12000)/1.5e6 s + 5 ms = 2413 ms > 2 s: on;
//   - late (buffer −1 s): on; no deadline, no stream, nothing in flight, a
//     retransmission queued, one live path, or no path with room: Wait.
func TestWorkedTwoPaths(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fastFull := schedtest.Path(1, 10*ms, 10, 10)
	fastOpen := schedtest.Path(1, 10*ms, 10, 5)
	slow := schedtest.Path(2, 40*ms, 10, 0)
	slowFull := schedtest.Path(2, 40*ms, 10, 10)
	failed := slow
	failed.PotentiallyFailed = true
	type conn struct {
		buffer    time.Duration // Deadline − Now; 0: no deadline
		remaining uint64        // StreamRemaining
		inflight  uint64        // InFlightBytes
		noStream  bool
		retrans   uint64
	}
	next := func(i int) sched.Decision { return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)} }
	copyOn := func(s sched.PathSet) sched.Decision {
		return sched.Decision{Action: sched.SendCopy, Paths: s, Seq: sched.OldestUncarried}
	}
	wait := sched.Decision{Action: sched.Wait}
	mk := func(c conn) sched.ConnInfo {
		ci := schedtest.Conn(now, 100)
		if c.buffer != 0 {
			ci.Deadline = now.Add(c.buffer)
		}
		ci.StreamRemaining, ci.InFlightBytes, ci.RetransmitQueued = c.remaining, c.inflight, c.retrans
		if c.noStream {
			ci.HasStream = false
		}
		return ci
	}
	decide := []struct {
		name  string
		c     conn
		paths []sched.PathInfo
		want  sched.Decision
	}{
		{"new data, buffer 0.5 s: minRTT, fast open", conn{500 * ms, 0, 12000, false, 0}, []sched.PathInfo{fastOpen, slow}, next(0)},
		{"new data, buffer 0.5 s: minRTT, fast full", conn{500 * ms, 0, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, next(1)},
		{"new data, buffer 5 s", conn{5 * time.Second, 0, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, next(1)},
		{"new data, both full", conn{500 * ms, 0, 12000, false, 0}, []sched.PathInfo{fastFull, slowFull}, wait},
	}
	for _, tc := range decide {
		c := mk(tc.c)
		if got := New(Options{}).Decide(&c, tc.paths); got != tc.want {
			t.Errorf("Decide, %s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	reinject := []struct {
		name  string
		c     conn
		paths []sched.PathInfo
		want  sched.Decision
	}{
		{"buffer 5 s: off", conn{5 * time.Second, 0, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, wait},
		{"buffer 0.5 s, fast full: copy on slow", conn{500 * ms, 0, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, copyOn(sched.Of(1))},
		{"buffer 0.5 s, both open: each copies", conn{500 * ms, 0, 12000, false, 0}, []sched.PathInfo{fastOpen, slow}, copyOn(sched.Of(0).Add(1))},
		{"buffer 0.5 s, slow full: copy on fast", conn{500 * ms, 0, 12000, false, 0}, []sched.PathInfo{fastOpen, slowFull}, copyOn(sched.Of(0))},
		{"buffer 2 s, 813 ms to deliver: off", conn{2 * time.Second, 1_200_000, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, wait},
		{"buffer 2 s, 2413 ms to deliver: on", conn{2 * time.Second, 3_600_000, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, copyOn(sched.Of(1))},
		{"late chunk: on", conn{-time.Second, 0, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, copyOn(sched.Of(1))},
		{"no deadline: never", conn{0, 3_600_000, 12000, false, 0}, []sched.PathInfo{fastFull, slow}, wait},
		{"no stream: never", conn{500 * ms, 0, 12000, true, 0}, []sched.PathInfo{fastFull, slow}, wait},
		{"nothing in flight", conn{500 * ms, 0, 0, false, 0}, []sched.PathInfo{fastOpen, slow}, wait},
		{"a retransmission queued: not XLINK's turn", conn{500 * ms, 0, 12000, false, 1}, []sched.PathInfo{fastOpen, slow}, wait},
		{"one live path", conn{500 * ms, 0, 6000, false, 0}, []sched.PathInfo{fastOpen, failed}, wait},
		{"no room anywhere", conn{500 * ms, 0, 12000, false, 0}, []sched.PathInfo{fastFull, slowFull}, wait},
	}
	for _, tc := range reinject {
		c := mk(tc.c)
		if got := New(Options{}).Reinject(&c, tc.paths); got != tc.want {
			t.Errorf("Reinject, %s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// The bound on redundancy, in a model of the transport's SendCopy rule
// (sched.SendCopy: each marked path takes "the oldest unacknowledged segment
// that path has not carried yet"): 20 segments in flight on the slow path,
// whose window is full, nothing acknowledged, the fast path with room for
// 40. Re-injection rounds while the buffer is low copy each of the 20
// exactly once onto the fast path and then find nothing left to copy; with
// a comfortable buffer no round copies.
func TestRedundancyBounded(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(Options{})
	for _, tc := range []struct {
		buffer time.Duration
		copies int
	}{{500 * ms, 20}, {10 * time.Second, 0}} {
		fast := schedtest.Path(1, 10*ms, 40, 0)
		paths := []sched.PathInfo{fast, schedtest.Path(2, 40*ms, 20, 20)}
		carried := make([][2]bool, 20) // per segment, per path: all on slow
		for k := range carried {
			carried[k][1] = true
		}
		copies := 0
		for range 100 {
			c := schedtest.Conn(now, 0)
			c.Deadline, c.InFlightBytes = now.Add(tc.buffer), 20*schedtest.MSS
			d := s.Reinject(&c, paths)
			if d.Action == sched.Wait {
				break
			}
			if d.Action != sched.SendCopy || d.Paths != sched.Of(0) {
				t.Fatalf("buffer %v: got %+v, want copies on the fast path", tc.buffer, d)
			}
			q := -1
			for k := range carried {
				if !carried[k][0] {
					q = k
					break
				}
			}
			if q < 0 {
				break // the transport finds nothing to copy and sends nothing
			}
			carried[q][0] = true
			copies++
			paths[0].BytesInFlight += schedtest.MSS
		}
		if copies != tc.copies {
			t.Errorf("buffer %v: %d copies, want %d (each slow-path segment once)", tc.buffer, copies, tc.copies)
		}
	}
}

func TestDeliveryTime(t *testing.T) {
	ms := time.Millisecond
	paths := []sched.PathInfo{schedtest.Path(1, 10*ms, 10, 0), schedtest.Path(2, 40*ms, 10, 0)}
	d, ok := DeliveryTime(1_500_000, paths) // 1 s at 1.5 MB/s, + 5 ms
	if !ok || d < 1004*ms || d > 1006*ms {
		t.Errorf("DeliveryTime = %v, %v; want 1.005 s", d, ok)
	}
	if _, ok := DeliveryTime(1, []sched.PathInfo{{CongestionWindow: 12000}}); ok {
		t.Error("estimated without an RTT sample")
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New(Options{}) }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New(Options{}) })
}

// "Decide is on the hot path: it must not allocate" (sched.Scheduler), on
// the re-injection branch too, which Conformance's snapshots (no deadline)
// do not reach.
func TestReinjectionDoesNotAllocate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(Options{})
	for _, n := range []int{2, 4, 8} {
		paths := schedtest.Paths(n)
		c := schedtest.Conn(now, 1000)
		c.Deadline, c.InFlightBytes, c.StreamRemaining = now.Add(2*time.Second), 100*schedtest.MSS, 1<<30
		if d := s.Reinject(&c, paths); d.Action != sched.SendCopy {
			t.Fatalf("%d paths: got %+v, want a SendCopy", n, d)
		}
		if got := alloctest.Mallocs(200, func() { s.Reinject(&c, paths); s.Decide(&c, paths) }); got != 0 {
			t.Errorf("%d paths: %d allocations in 200 Decides, want 0", n, got)
		}
	}
}
