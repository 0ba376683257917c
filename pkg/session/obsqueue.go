package session

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// The scheduler is never called with Session.mu held (issue 19, finding 7:
// "Decide, the Observer and the receiver reports run under s.mu"). It has
// its own lock, sender.schedMu, which only scheduler calls take: the send
// loop for Decide (schedule.go) and for the observations below, a path's
// writer when its path asks for data (decideOnPull, pull.go; it only tries
// the lock, and leaves the decision to the send pass if it is taken), and
// SendDatagram for DecideDatagram. Lock order: schedMu before s.mu, never
// the other way, so a scheduler or an observer may call methods that take
// s.mu (Stats, Paths); Stream.Read, Stream.Write and the path readers never
// take schedMu.
//
// The exception is a scheduler that declares itself sched.Quick (every
// heuristic that ships here): its calls are a few arithmetic operations
// that never call the transport, so askLocked and obsDeliver make them with
// s.mu held, saving a release and a re-acquisition of s.mu per decision
// (lockcount_test.go counts them). A scheduler that runs a model (EdAR,
// the learned ones) keeps the rule above.
//
// What the session learns under s.mu (an acknowledged segment, a segment to
// re-send, the peer's receiver report) is queued in an obsQueue and handed
// to the scheduler by whoever holds schedMu next, before its next Decide or
// DecideDatagram and in the order it happened: Observer and
// ReceiverObserver calls stay serialized with each other and with Decide,
// and a Decide sees every observation made before its snapshot.

// obsKind tells what an obsEvent reports.
type obsKind uint8

const (
	obsAcked  obsKind = iota // Observer.SegmentAcked
	obsLost                  // Observer.SegmentLost
	obsReport                // ReceiverObserver.ReceiverReport of reps[rep]
)

// obsEvent is one observer call waiting for delivery (72 bytes).
type obsEvent struct {
	kind   obsKind
	path   sched.PathID
	rep    int32 // obsReport: index in the queue's reports
	seq    uint64
	size   uint64 // bytes
	now    time.Time
	sentAt time.Time
}

// maxObsReports bounds the receiver reports queued between two deliveries;
// a report beyond it is merged into the last one queued. Reports come at
// the peer's pace, so this bound does not depend on it.
const maxObsReports = 16

// obsQueue holds the observations made under Session.mu until the holder of
// schedMu delivers them. The pending half (evs, reps, dropped) is guarded by
// Session.mu; the out half by schedMu. Both halves grow on demand and are
// swapped, not copied, so a steady session allocates nothing per event.
//
// Bound: at most max events pending (obsQueueMax: twice the segments
// MaxUnackedBytes allows in flight, plus 256), about 72 bytes each. Each
// unacknowledged segment yields at most one SegmentAcked per path that
// carried it and one SegmentLost per reinjection, and the send pass drains
// the queue each time it runs (every Ack wakes it), so the bound is reached
// only when a scheduler call blocks for long while many paths acknowledge
// copies. Events beyond it are dropped and counted (dropped), never waited
// for. Receiver reports are bounded apart by maxObsReports.
type obsQueue struct {
	max     int
	evs     []obsEvent
	reps    []sched.ReceiverReport
	dropped uint64 // events lost to the bound

	out     []obsEvent
	outReps []sched.ReceiverReport
}

// obsQueueMax is the event bound for a session with cfg (see obsQueue).
func obsQueueMax(cfg Config) int {
	segs := cfg.MaxUnackedBytes / max(cfg.SegmentSize, 1)
	return 2*segs + 256
}

// obsAddLocked queues e; s.mu held.
func (s *Session) obsAddLocked(e obsEvent) {
	q := &s.snd.obsq
	if len(q.evs) >= q.max {
		if q.dropped == 0 {
			s.logf("session %x: scheduler observations queue full (%d); dropping", s.id[:4], q.max)
		}
		q.dropped++
		return
	}
	q.evs = append(q.evs, e)
}

// obsAckedLocked queues Observer.SegmentAcked; s.mu held.
func (s *Session) obsAckedLocked(now time.Time, path sched.PathID, seq, size uint64, sentAt time.Time) {
	s.obsAddLocked(obsEvent{kind: obsAcked, path: path, seq: seq, size: size, now: now, sentAt: sentAt})
}

// obsLostLocked queues Observer.SegmentLost; s.mu held.
func (s *Session) obsLostLocked(now time.Time, path sched.PathID, seq uint64) {
	s.obsAddLocked(obsEvent{kind: obsLost, path: path, seq: seq, now: now})
}

// obsReportLocked queues ReceiverObserver.ReceiverReport; s.mu held. Past
// maxObsReports pending reports, r is merged into the last one: counts and
// durations add up, ReorderBytes (a level, not a count) is r's.
func (s *Session) obsReportLocked(now time.Time, r sched.ReceiverReport) {
	q := &s.snd.obsq
	if n := len(q.reps); n >= maxObsReports {
		last := &q.reps[n-1]
		last.Interval += r.Interval
		last.GoodputBytes += r.GoodputBytes
		for i := range last.PathBytes {
			last.PathBytes[i] += r.PathBytes[i]
		}
		last.OutOfOrder += r.OutOfOrder
		last.ReorderBytes = r.ReorderBytes
		last.HoLBlocked += r.HoLBlocked
		last.DuplicateBytes += r.DuplicateBytes
		return
	}
	q.reps = append(q.reps, r)
	s.obsAddLocked(obsEvent{kind: obsReport, rep: int32(len(q.reps) - 1), now: now})
}

// obsTakeLocked moves the pending observations to the out half and reports
// whether there are any; s.mu and schedMu held, out delivered (empty).
func (q *obsQueue) takeLocked() bool {
	if len(q.evs) == 0 {
		return false
	}
	q.evs, q.out = q.out[:0], q.evs
	q.reps, q.outReps = q.outReps[:0], q.reps
	return true
}

// obsDeliver makes the observer calls taken by takeLocked, in order;
// schedMu held, s.mu not held unless the scheduler is sched.Quick.
func (s *Session) obsDeliver() {
	q := &s.snd.obsq
	for i := range q.out {
		e := &q.out[i]
		switch e.kind {
		case obsAcked:
			s.obs.SegmentAcked(e.now, e.path, e.seq, e.size, e.sentAt)
		case obsLost:
			s.obs.SegmentLost(e.now, e.path, e.seq)
		case obsReport:
			s.robs.ReceiverReport(e.now, q.outReps[e.rep])
		}
	}
	q.out, q.outReps = q.out[:0], q.outReps[:0]
}
