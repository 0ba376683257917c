package session

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// ackSender returns a session (no paths, no goroutines) whose sender holds
// n sent segments, base 0, and marks every segment from 1 on acknowledged
// by a first Ack of wire.MaxAckRanges ranges (the widest Ack the wire
// carries), which it also returns: the hostile client of issue 29 sends it
// again and again ("Acks with cumulative 0 naming every later segment").
func ackSender(tb testing.TB, n uint64) (*Session, *wire.Ack) {
	tb.Helper()
	var c Config
	cfg, err := c.withDefaults()
	if err != nil {
		tb.Fatal(err)
	}
	s, err := newSession(cfg, false, nil)
	if err != nil {
		tb.Fatal(err)
	}
	sn := &s.snd
	now := time.Unix(0, 0)
	for q := uint64(0); q < n; q++ {
		g := sn.newSegment()
		*g = segment{seq: q, off: q * 1200, size: 1200, sent: true, sentAt: now}
		sn.segs = append(sn.segs, g)
	}
	sn.nextSeq, sn.lowestUnsent = n, n
	sn.inflightBytes = n * 1200
	// Ranges [1+k·w, (k+1)·w) for k = 0..MaxAckRanges−1 with a one-segment
	// gap between them: together they name nearly every segment above 0.
	a := &wire.Ack{Cum: 0}
	w := (n - 1) / wire.MaxAckRanges
	for k := uint64(0); k < wire.MaxAckRanges; k++ {
		start, end := 1+k*w+1, 1+(k+1)*w
		if k == 0 {
			start = 1
		}
		if start < end {
			a.Ranges = append(a.Ranges, wire.Range{Start: start, End: end})
		}
	}
	if err := s.ackReceived(a); err != nil {
		tb.Fatal(err)
	}
	return s, a
}

// ackWideSegments is the hostile Ack's reach: the unacknowledged-data cap
// (DefaultMaxUnackedBytes) in default segments, about 14k.
const ackWideSegments = DefaultMaxUnackedBytes / DefaultSegmentSize

// BenchmarkAckWide is the cost of one repeated wide Ack (issue 29: "roughly
// 0.2 ms per 20-byte Ack" at a8db118, which walked every named segment).
func BenchmarkAckWide(b *testing.B) {
	s, a := ackSender(b, ackWideSegments)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := s.ackReceived(a); err != nil {
			b.Fatal(err)
		}
	}
}

// Issue 29: "Ack processing proportional to newly acknowledged data": a
// repeated Ack that names ~14k acknowledged segments acknowledges nothing
// new, so it must cost what an Ack of a few segments does, not 14k
// segment visits. Counted, not timed: segment visits (ackVisits) per
// repeated Ack must stay at most a few per range.
func TestAckCostProportionalToNewlyAcked(t *testing.T) {
	s, a := ackSender(t, ackWideSegments)
	before := s.snd.ackVisits
	for range 10 {
		if err := s.ackReceived(a); err != nil {
			t.Fatal(err)
		}
	}
	per := (s.snd.ackVisits - before) / 10
	if per > 2*wire.MaxAckRanges {
		t.Errorf("a repeated Ack of %d ranges over %d acknowledged segments visited %d segments, want at most %d (what it newly acknowledges: none)",
			len(a.Ranges), ackWideSegments, per, 2*wire.MaxAckRanges)
	}
	// What is newly acknowledged is still acknowledged: the gaps.
	gaps := &wire.Ack{Cum: ackWideSegments}
	if err := s.ackReceived(gaps); err != nil {
		t.Fatal(err)
	}
	if s.snd.inflightBytes != 0 || s.snd.base != ackWideSegments || len(s.snd.segs) != 0 {
		t.Errorf("after the cumulative Ack: %d bytes in flight, base %d, %d segments; want 0, %d, 0", s.snd.inflightBytes, s.snd.base, len(s.snd.segs), ackWideSegments)
	}
	if s.snd.ackedBytes != ackWideSegments*1200 {
		t.Errorf("acknowledged %d bytes, want %d (each segment once)", s.snd.ackedBytes, ackWideSegments*1200)
	}
}

// ackReceived processes a connection-level acknowledgement at once, as
// the loop does with the Acks in its inbox (inbox.go), and wakes the send
// pass.
func (s *Session) ackReceived(a *wire.Ack) error {
	s.mu.Lock()
	err := s.ackReceivedLocked(a, s.now())
	s.mu.Unlock()
	poke(s.wake)
	return err
}
