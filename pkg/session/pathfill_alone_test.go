package session

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// aloneFill is a session with no paths and no goroutines whose scheduler
// snapshot holds a fast path (50 ms, its window full of bytes in flight)
// and a slow one (110 ms, empty), with a 4 KB answer the only stream
// ready. If blocked, a second stream holds 64 KB it may not send (the
// peer's stream credit is 0), as a download does when a small receive
// window holds it. It returns the session and the answer.
func aloneFill(t *testing.T, blocked bool, fastInFlight uint64) (*Session, *Stream) {
	t.Helper()
	cfg, err := (&Config{}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSession(cfg, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.streams.maxStreamsReceived(bidi, 2) // the peer's credit, as its handshake grants it
	s.streams.peerWindow = 512 << 10
	s.mu.Unlock()
	if blocked {
		bulk, err := s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		bulk.send.limit = 0 // no credit: its bytes stay in its buffer
		s.mu.Unlock()
		if _, err := bulk.Write(make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
	}
	answer, err := s.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := answer.Write(make([]byte, 4<<10)); err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	sn := &s.snd
	sn.snap = []sched.PathInfo{
		{ID: 1, SmoothedRTT: 50 * ms, CongestionWindow: 40_000, BytesInFlight: fastInFlight, MSS: 1200},
		{ID: 2, SmoothedRTT: 110 * ms, CongestionWindow: 100_000, MSS: 1200},
	}
	sn.slots, sn.heard = []int{0, 1}, 0b11
	return s, answer
}

// framedFor reports how many stream bytes fillForLocked frames for the path
// at snapshot index i.
func framedFor(s *Session, i int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.snd.pend.Len()
	s.fillForLocked(i)
	return s.snd.pend.Len() - before
}

// The only stream ready, a 4 KB answer, is not framed for the slow path
// while another stream waits for credit and the fast path is busy: its
// bytes reach the peer sooner on the fast path's next turn (ECF's test on
// the stream's bytes, pathfill.go), and that path's Acks ask the scheduler
// again. RFC 9000 §2.3: "a sender [...] uses [...] prioritization
// information to decide which streams to send data on". On rpc-handoff
// (10 Mbit/s paths of 50 and 100 ms RTT, a 128 KB receive window) the
// download beside the requests is held by its credit most of the time, so
// minRTT put answers on the slow path whenever the fast path's window was
// full. Without aloneWaitsLocked the answer is framed at once.
func TestAnswerAloneWaitsForFastPath(t *testing.T) {
	s, _ := aloneFill(t, true, 40_000)
	if n := framedFor(s, 1); n != 0 {
		t.Fatalf("%d bytes framed for the slow path, want none: the answer waits for the fast path", n)
	}
	if got := s.Stats().PassedOver; got != 1 {
		t.Errorf("PassedOver = %d, want 1", got)
	}
	if n := framedFor(s, 0); n < 1200 {
		t.Fatalf("%d bytes framed for the fast path, want a segment of the answer", n)
	}
}

// Where the rule does not apply, the scheduler's choice stands: with one
// stream in the session (a single transfer, as the schedulers' papers
// assume), and when the fast path has nothing in flight or queued (no Ack
// would ask the scheduler again, so waiting could last for ever).
func TestAnswerAloneTakesChosenPath(t *testing.T) {
	for _, c := range []struct {
		name     string
		blocked  bool
		inFlight uint64
	}{
		{"one stream in the session", false, 40_000},
		{"fast path idle", true, 0},
	} {
		s, _ := aloneFill(t, c.blocked, c.inFlight)
		if n := framedFor(s, 1); n < 1200 {
			t.Errorf("%s: %d bytes framed for the slow path, want the answer's first segment", c.name, n)
		}
	}
}
