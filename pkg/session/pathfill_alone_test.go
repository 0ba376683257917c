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
	s.streams.connMax = 1 << 24
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

// framedFor frames one segment for the path at snapshot index i, as a
// SendNext for that path does (fillForLocked, then cut), and returns the
// STREAM frames it carries (nil: no segment).
func framedFor(t *testing.T, s *Session, i int) []framedRec {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fillForLocked(i)
	g := s.snd.cut()
	if g == nil {
		return nil
	}
	return parseRecords(t, appendPayload(nil, g))
}

// carries reports whether recs hold data of stream id.
func carries(recs []framedRec, id uint64) bool {
	for _, r := range recs {
		if r.id == id && r.n > 0 {
			return true
		}
	}
	return false
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
	s, answer := aloneFill(t, true, 40_000)
	if recs := framedFor(t, s, 1); len(recs) != 0 {
		t.Fatalf("framed for the slow path: %s; want nothing: the answer waits for the fast path", order(recs))
	}
	if got := s.Stats().PassedOver; got != 1 {
		t.Errorf("PassedOver = %d, want 1", got)
	}
	if recs := framedFor(t, s, 0); !carries(recs, answer.ID()) {
		t.Fatalf("framed for the fast path: %s; want the answer's (stream %d) first bytes", order(recs), answer.ID())
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
		s, answer := aloneFill(t, c.blocked, c.inFlight)
		if recs := framedFor(t, s, 1); !carries(recs, answer.ID()) {
			t.Errorf("%s: framed for the slow path: %s; want the answer's (stream %d) first bytes", c.name, order(recs), answer.ID())
		}
	}
}
