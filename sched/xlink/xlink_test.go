package xlink

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Issue 22, item 4: XLINK "copies a chunk's remaining data to another path
// only when the playback buffer is below the paper's threshold"; XLINK's
// double threshold: below T_low re-injection is on, above T_high it is off,
// in between it is on iff the buffer is below the expected time to deliver
// the remaining data.
//
// Worked case, T_low = 1 s, T_high = 3 s. Fast path: SRTT 10 ms, cwnd 10
// segments (12000 B, 1.2 MB/s). Slow path: SRTT 40 ms, cwnd 10 segments
// (0.3 MB/s). The summed rate is 1.5 MB/s.
//   - Buffer 5 s > T_high: minRTT, no copies. Fast full: the segment goes
//     new on slow.
//   - Buffer 0.5 s < T_low, fast full, 12000 B in flight: SendCopy of the
//     oldest uncarried segment on slow, the other path.
//   - Buffer 2 s, between: with 1.2 MB of the stream unframed, delivery =
//     (1.2e6 + 12000)/1.5e6 s + 5 ms = 813 ms < 2 s: off. With 3.6 MB,
//     (3.6e6 + 12000)/1.5e6 s + 5 ms = 2413 ms > 2 s: on.
//   - A late chunk (buffer −1 s) is re-injected; a stream without a
//     deadline, data without a stream, nothing in flight, or one live path:
//     never.
func TestWorkedTwoPaths(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fastFull := schedtest.Path(1, 10*ms, 10, 10)
	fastOpen := schedtest.Path(1, 10*ms, 10, 5)
	slow := schedtest.Path(2, 40*ms, 10, 0)
	slowBusy := schedtest.Path(2, 40*ms, 10, 4)
	failed := slow
	failed.PotentiallyFailed = true
	type conn struct {
		buffer    time.Duration // Deadline − Now; 0: no deadline
		remaining uint64        // StreamRemaining
		inflight  uint64        // InFlightBytes
		noStream  bool
	}
	next := func(i int) sched.Decision { return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)} }
	copyOn := func(s sched.PathSet) sched.Decision {
		return sched.Decision{Action: sched.SendCopy, Paths: s, Seq: sched.OldestUncarried}
	}
	tests := []struct {
		name  string
		c     conn
		paths []sched.PathInfo
		want  sched.Decision
	}{
		{"buffer 5 s: minRTT, no copies", conn{5 * time.Second, 0, 12000, false}, []sched.PathInfo{fastFull, slow}, next(1)},
		{"buffer 5 s, fast open: fast", conn{5 * time.Second, 0, 12000, false}, []sched.PathInfo{fastOpen, slow}, next(0)},
		{"buffer 0.5 s: copy on the other path", conn{500 * ms, 0, 12000, false}, []sched.PathInfo{fastFull, slow}, copyOn(sched.Of(1))},
		{"buffer 0.5 s, both open: both take their oldest uncarried", conn{500 * ms, 0, 10800, false}, []sched.PathInfo{fastOpen, slowBusy}, copyOn(sched.Of(0).Add(1))},
		{"buffer 2 s, 813 ms to deliver: off", conn{2 * time.Second, 1_200_000, 12000, false}, []sched.PathInfo{fastFull, slow}, next(1)},
		{"buffer 2 s, 2413 ms to deliver: on", conn{2 * time.Second, 3_600_000, 12000, false}, []sched.PathInfo{fastFull, slow}, copyOn(sched.Of(1))},
		{"late chunk: on", conn{-time.Second, 0, 12000, false}, []sched.PathInfo{fastFull, slow}, copyOn(sched.Of(1))},
		{"no deadline: never", conn{0, 3_600_000, 12000, false}, []sched.PathInfo{fastFull, slow}, next(1)},
		{"no stream: never", conn{500 * ms, 0, 12000, true}, []sched.PathInfo{fastFull, slow}, next(1)},
		{"nothing in flight: nothing to copy", conn{500 * ms, 0, 0, false}, []sched.PathInfo{fastOpen, slow}, next(0)},
		{"one live path: no other path", conn{500 * ms, 0, 6000, false}, []sched.PathInfo{fastOpen, failed}, next(0)},
	}
	for _, tc := range tests {
		c := schedtest.Conn(now, 100)
		if tc.c.buffer != 0 {
			c.Deadline = now.Add(tc.c.buffer)
		}
		c.StreamRemaining, c.InFlightBytes = tc.c.remaining, tc.c.inflight
		if tc.c.noStream {
			c.HasStream = false
		}
		if got := New(Options{}).Decide(&c, tc.paths); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// The bound on redundancy, in a model of the transport's SendCopy rule
// (sched.SendCopy: each marked path takes "the oldest unacknowledged segment
// that path has not carried yet; if there is none, the path sends the next
// segment instead"). Two paths, nothing acknowledged, each path takes one
// segment per decision, 100 decisions per path: while the buffer is low no
// segment is sent more than twice (once per path), and once the buffer is
// comfortable no decision copies.
func TestRedundancyBounded(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	paths := []sched.PathInfo{schedtest.Path(1, 10*ms, 10, 0), schedtest.Path(2, 40*ms, 10, 0)}
	s := New(Options{})
	for _, tc := range []struct {
		buffer    time.Duration
		maxCopies int
	}{{500 * ms, 1}, {10 * time.Second, 0}} {
		var carried [][2]bool // per segment, per path
		sends := 0
		for range 100 {
			c := schedtest.Conn(now, 100)
			c.Deadline = now.Add(tc.buffer)
			c.InFlightBytes = uint64(len(carried)) * schedtest.MSS
			if c.InFlightBytes == 0 {
				c.InFlightBytes = 1 // a handshake byte: let the first decision copy if it will
			}
			d := s.Decide(&c, paths)
			for p := range paths {
				if !d.Paths.Has(p) {
					continue
				}
				sends++
				q := -1
				if d.Action == sched.SendCopy {
					for k := range carried {
						if !carried[k][p] {
							q = k
							break
						}
					}
				}
				if q < 0 {
					carried = append(carried, [2]bool{})
					q = len(carried) - 1
				}
				carried[q][p] = true
			}
		}
		copies := sends - len(carried)
		if maxc := tc.maxCopies * len(carried); copies > maxc || copies < 0 {
			t.Errorf("buffer %v: %d copies of %d segments, want at most %d", tc.buffer, copies, len(carried), maxc)
		}
		if tc.maxCopies == 0 && copies != 0 {
			t.Errorf("buffer %v: %d copies, want none", tc.buffer, copies)
		}
		if tc.maxCopies == 1 && copies == 0 {
			t.Errorf("buffer %v: no copies while the buffer is low", tc.buffer)
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
		if d := s.Decide(&c, paths); d.Action != sched.SendCopy {
			t.Fatalf("%d paths: got %+v, want a SendCopy", n, d)
		}
		if got := alloctest.Mallocs(200, func() { s.Decide(&c, paths) }); got != 0 {
			t.Errorf("%d paths: %d allocations in 200 Decides, want 0", n, got)
		}
	}
}
