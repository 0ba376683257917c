package session

import (
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// inbox holds the control datagrams the paths' datagram readers received
// (Acks, receiver reports, AckReqs, silence reports) until the loop's send
// pass processes them, in arrival order (issue 30, stage 3: "Path
// goroutines only move datagrams and post events"). A datagram reader
// parses a datagram, posts it here and pokes the loop; it takes no
// Session.mu. The loop drains the inbox under Session.mu at the start of
// each send pass (drainLocked), so one pass processes every Ack that came
// since the last one, then schedules.
//
// Bound: inboxMax events, each an Ack of at most wire.MaxAckRanges ranges
// or a report, whatever the peer sends. A reader that finds the inbox full
// drains it itself, under Session.mu, and processes its datagram after the
// others (post returns false): each path's datagrams are processed in the
// order they arrived, each once, and no reader waits for the loop. Storage
// grows with use, up to inboxMax events, so an idle session holds none.
// Lock order: Session.mu before inbox.mu.
type inbox struct {
	mu sync.Mutex
	q  []inboxEvent // events 0..n-1 wait; the rest is storage to reuse
	n  int
}

// inboxMax is the most events the inbox holds.
const inboxMax = 16

// inboxEvent is one control datagram, parsed.
type inboxEvent struct {
	kind byte        // wire.TypeAck, TypeReport, TypeAckReq or TypeSilent
	ack  wire.Ack    // TypeAck; its Ranges' storage is reused
	rep  wire.Report // TypeReport
	id   uint64      // TypeSilent: the path ID
}

// post appends ev's datagram (ack or rep by kind) and reports whether it
// fit.
func (ib *inbox) post(kind byte, ack *wire.Ack, rep *wire.Report, id uint64) bool {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if ib.n == inboxMax {
		return false
	}
	if ib.n == len(ib.q) {
		ib.q = append(ib.q, inboxEvent{})
	}
	ev := &ib.q[ib.n]
	ev.kind, ev.id = kind, id
	switch kind {
	case wire.TypeAck:
		ev.ack.Cum, ev.ack.MaxData = ack.Cum, ack.MaxData
		ev.ack.Ranges = append(ev.ack.Ranges[:0], ack.Ranges...)
	case wire.TypeReport:
		ev.rep = *rep
	}
	ib.n++
	return true
}

// controlArrived is what a datagram reader does with a parsed control
// datagram: post it for the loop, or, with the inbox full, process the
// inbox and it at once. An error is a connection error.
func (s *Session) controlArrived(kind byte, ack *wire.Ack, rep *wire.Report, id uint64) error {
	if s.in.post(kind, ack, rep, id) {
		poke(s.wake)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if err := s.drainLocked(now); err != nil {
		return err
	}
	ev := inboxEvent{kind: kind, id: id}
	if ack != nil {
		ev.ack = *ack // processed before the reader parses again: no copy of its ranges
	}
	if rep != nil {
		ev.rep = *rep
	}
	return s.controlLocked(now, &ev)
}

// drainLocked processes the inbox's events in arrival order at now;
// Session.mu is held. The first error (a connection error) stops it, and
// the events after it are dropped with the session.
func (s *Session) drainLocked(now time.Time) error {
	return s.in.drain(func(ev *inboxEvent) error { return s.controlLocked(now, ev) })
}

// drain hands the waiting events to handle in arrival order and empties
// the inbox; the first error stops it, drops the events after it and is
// returned. The caller serialises the drains (Session.mu).
func (ib *inbox) drain(handle func(*inboxEvent) error) error {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	for i := 0; i < ib.n; i++ {
		if err := handle(&ib.q[i]); err != nil {
			ib.n = 0
			return err
		}
	}
	ib.n = 0
	return nil
}

// controlLocked processes one control datagram at now; Session.mu is held.
func (s *Session) controlLocked(now time.Time, ev *inboxEvent) error {
	switch ev.kind {
	case wire.TypeAck:
		return s.ackReceivedLocked(&ev.ack, now)
	case wire.TypeReport:
		s.reportReceivedLocked(now, &ev.rep)
	case wire.TypeAckReq:
		s.rcv.ackReqDue(now)
		poke(s.ackWake)
	case wire.TypeSilent:
		// The peer's report that nothing arrived on path id for a while
		// (it receives, this end sends): the path fails at once if it
		// holds undelivered data and made no progress either
		// (checkPathsLocked).
		for _, p := range s.slots {
			if p != nil && uint64(p.id) == ev.id {
				p.silentHint = now
			}
		}
	}
	return nil
}
