package streamaware

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Issue 22, item 4: "each stream's next data goes to the path with the
// earliest estimated completion for that stream"; SA-ECF's abstract: "the
// completion of individual streams are not delayed by slower paths". The
// rule of the authors' MPQUIC code: when the best path is full, visit the
// streams in priority order and send on the second best path the first one
// whose ECF test (k = "bytes until completion" of that stream, capped by the
// queue) says not to wait; a stream that should wait is marked waiting.
//
// Worked case. Fast path: SRTT 10 ms, RTTVar 2.5 ms, cwnd 10 segments,
// full. Slow path: SRTT 40 ms, RTTVar 10 ms, cwnd 10, empty. δ = 10 ms.
// ECF's first test (1 + k_f/10)·10 ms < (1 + waiting/4)·50 ms holds for
// k_f < 40 packets (52.5 when waiting), k_f = max(k, 10); the second,
// (max(k,10)/10)·40 ms ≥ 30 ms, always holds here. So a stream waits for the
// fast path iff k < 40 packets (52.5 once waiting). 100 packets queued.
//   - Small stream, 1200 B unframed: k = min(120000, 2400) B = 2 packets:
//     it waits. It is not incremental and data follows it: the rest, k =
//     98 packets, should not wait, so the segment after the small stream's
//     two goes on slow: SendSeq(NextSeq + 2). (minRTT sends the small
//     stream itself on slow.)
//   - The same stream alone in the queue: nothing behind it: Wait.
//   - Incremental, so the framer serves it round-robin one record at a
//     time: the next segment, the next stream's record, goes on slow:
//     SendSeq(NextSeq + 1).
//   - Large stream, 60000 B: k = 51 packets ≥ 40: SendNext on slow.
//   - Fast open: SendNext on fast, whatever the stream.
//   - The next decision for the small stream, its data now cut (0 B
//     unframed, k = 1 packet), NextSeq still 0: it continues after the last
//     segment given away (3), never at 1, the small stream's own.
//   - Per-stream waiting bits: stream 4 waited (k = 20), so at k = 45 it
//     still waits (55 ms < 62.5 ms: the rest, 55 packets, goes on slow by
//     SendSeq(45)); a fresh stream 8 at k = 45 sends on slow (55 ≥ 50 ms).
func TestWorkedTwoPaths(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fastFull := schedtest.Path(1, 10*ms, 10, 10)
	fastOpen := schedtest.Path(1, 10*ms, 10, 5)
	slow := schedtest.Path(2, 40*ms, 10, 0)
	mk := func(id, remaining, queueSegs uint64, incremental bool) *sched.ConnInfo {
		c := schedtest.Conn(now, queueSegs)
		c.StreamID, c.StreamRemaining, c.Incremental = id, remaining, incremental
		return &c
	}
	wait := sched.Decision{Action: sched.Wait}
	on := func(i int) sched.Decision { return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)} }
	seqOn := func(i int, q uint64) sched.Decision {
		return sched.Decision{Action: sched.SendSeq, Paths: sched.Of(i), Seq: q}
	}
	full := []sched.PathInfo{fastFull, slow}
	steps := []struct {
		name string
		s    *Scheduler // nil: a fresh scheduler
		c    *sched.ConnInfo
		p    []sched.PathInfo
		want sched.Decision
	}{
		{"small stream waits, the data behind it goes on slow", nil, mk(0, 1200, 100, false), full, seqOn(1, 2)},
		{"small stream alone: wait", nil, mk(0, 1200, 2, false), full, wait},
		{"small incremental stream: the next segment (the next stream's record) on slow", nil, mk(0, 1200, 100, true), full, seqOn(1, 1)},
		{"large stream: slow", nil, mk(0, 60000, 100, false), full, on(1)},
		{"fast open: fast", nil, mk(0, 1200, 100, false), []sched.PathInfo{fastOpen, slow}, on(0)},
	}
	for _, st := range steps {
		s := st.s
		if s == nil {
			s = New()
		}
		if got := s.Decide(st.c, st.p); got != st.want {
			t.Errorf("%s: got %+v, want %+v", st.name, got, st.want)
		}
	}
	// Continuation after a SendSeq.
	s := New()
	if got := s.Decide(mk(0, 1200, 100, false), full); got != seqOn(1, 2) {
		t.Fatalf("first: got %+v, want SendSeq 2", got)
	}
	if got := s.Decide(mk(0, 0, 99, false), full); got != seqOn(1, 3) {
		t.Errorf("continuation: got %+v, want SendSeq 3 (after the last segment given away)", got)
	}
	// Per-stream waiting bits.
	s = New()
	if got := s.Decide(mk(4, 22800, 100, false), full); got.Action != sched.SendSeq || !s.Waiting(4) {
		t.Fatalf("stream 4, k = 20: got %+v (waiting %v), want it to wait (and the rest to go by SendSeq)", got, s.Waiting(4))
	}
	if got := s.Decide(mk(4, 52800, 100, false), full); got != seqOn(1, 45) {
		t.Errorf("stream 4 waiting, k = 45: got %+v, want it to keep waiting, the rest by SendSeq 45", got)
	}
	if got := s.Decide(mk(8, 52800, 100, false), full); got != on(1) {
		t.Errorf("fresh stream 8, k = 45: got %+v, want the slow path", got)
	}
	// The contrast: minRTT sends the small stream on the slow path.
	if got := minrtt.New().Decide(mk(0, 1200, 100, false), full); got != on(1) {
		t.Errorf("minrtt on the small stream: got %+v, want the slow path", got)
	}
}

// The reservation is bounded: not past maxReserve, the peer's window, or the
// queued data less a segment (the session would otherwise send the waiting
// stream's next segment on the slow path instead).
func TestReservationBounded(t *testing.T) {
	ms := time.Millisecond
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	full := []sched.PathInfo{schedtest.Path(1, 10*ms, 100, 100), schedtest.Path(2, 40*ms, 10, 0)}
	// With cwnd_f = 100 packets a stream waits while k < 400 packets.
	c := schedtest.Conn(now, 2000)
	c.StreamRemaining = 300 * schedtest.MSS // 360000 B: waits; reservation 301 segments
	if got := New().Decide(&c, full); got.Action != sched.SendSeq || got.Seq != 301 {
		t.Errorf("within bounds: got %+v, want SendSeq 301", got)
	}
	c.PeerWindow = 300 * schedtest.MSS
	if got := New().Decide(&c, full); got.Action != sched.Wait {
		t.Errorf("past the peer's window: got %+v, want Wait", got)
	}
	c.PeerWindow = 4 << 20
	c.SendBufferBytes = 302 * schedtest.MSS // the segment at 301 would be the last, maybe partial
	if got := New().Decide(&c, full); got.Action != sched.Wait {
		t.Errorf("no full segment beyond: got %+v, want Wait", got)
	}
	c.SendBufferBytes = 4000 * schedtest.MSS
	c.StreamRemaining = 390 * schedtest.MSS // 391 segments, 469200 B: still under 1 MiB
	if got := New().Decide(&c, full); got.Action != sched.SendSeq {
		t.Errorf("469200 B reservation: got %+v, want SendSeq", got)
	}
	big := []sched.PathInfo{schedtest.Path(1, 10*ms, 1000, 1000), schedtest.Path(2, 40*ms, 10, 0)}
	c.StreamRemaining = 1000 * schedtest.MSS // waits (k < 4000), needs 1001 segments > 1 MiB
	if got := New().Decide(&c, big); got.Action != sched.Wait {
		t.Errorf("reservation past 1 MiB: got %+v, want Wait", got)
	}
}

// Without a stream, k is the connection's unsent data, as in ECF; a
// retransmission goes on minRTT's path and does not wait. The waiting table
// keeps waitSlots streams at most.
func TestNoStreamRetransmissionTable(t *testing.T) {
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
	s := New()
	for id := range uint64(100) {
		c := schedtest.Conn(now, 100)
		c.StreamID, c.StreamRemaining = 4*id, 1200
		s.Decide(&c, paths)
	}
	if s.used != waitSlots {
		t.Errorf("table holds %d streams after 100, want %d", s.used, waitSlots)
	}
	if !s.Waiting(4*99) || s.Waiting(0) {
		t.Errorf("the last stream should be remembered waiting, the first forgotten")
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
