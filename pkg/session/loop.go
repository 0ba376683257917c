package session

import (
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// loop is the session's one timer goroutine (issue 30, stage 3: one loop
// per session). It has two passes, each run when its wake channel is poked
// or its own deadline comes:
//
//   - the send pass (sendPass) runs the path checks, loss detection,
//     timeouts, probes and the scheduler whenever something changed
//     (s.wake: a Write, an Ack, a path event); a scheduler that is not
//     sched.Quick decides beside the loop instead, on the decider
//     (decider.go), which the send pass pokes;
//   - the ack pass (ackPass) credits what the applications read
//     (creditq.go), processes the segments the paths' data readers posted
//     (rxbatch.go), then sends the Ack when one is due and a receiver
//     report at the end of a report interval (s.ackWake: a batch of
//     segments posted, the application read enough to return credit).
//
// A pass is not run for the other's event: an Ack due every eighth segment
// costs the ack pass alone. Each pass returns its next deadline
// (deadline.go); the loop sleeps until the sooner of the two, and an idle
// session's loop sleeps without a timer. Each pass reads the clock once
// and passes now to its timer functions. The loop ends when the session
// closes.
func (s *Session) loop() {
	timer := newStoppedTimer()
	defer timer.Stop()
	if s.onDone != nil {
		defer s.onDone()
	}
	var sp sendPassState
	var ap ackPassState
	var sendAt, ackAt time.Time // each pass's next deadline (zero: none)
	for {
		var sendDue, ackDue bool
		select {
		case <-s.wake:
			s.woke(loopSend, wokePoked)
			sendDue = true
		case <-s.ackWake:
			s.woke(loopAck, wokePoked)
			ackDue = true
		case <-timer.C:
			sendDue, ackDue = timerDue(s.now(), sendAt, ackAt)
			if sendDue {
				s.woke(loopSend, wokeTimer)
			}
			if ackDue {
				s.woke(loopAck, wokeTimer)
			}
		case <-s.done:
			return
		}
		if ackDue {
			at, open := s.ackPass(&ap)
			if !open {
				return
			}
			ackAt = at
		}
		if sendDue {
			at, open := s.sendPass(&sp)
			if !open {
				return
			}
			sendAt = at
		}
		armTimer(timer, sooner(sendAt, ackAt), s.now())
	}
}

// timerDue says which passes a timer wake-up at now is for: those whose
// deadline has come, or, if the clock reads earlier than both (a test's
// injected clock), the one with the sooner deadline, as a loop of its own
// would have run it.
func timerDue(now, sendAt, ackAt time.Time) (send, ack bool) {
	send = !sendAt.IsZero() && !now.Before(sendAt)
	ack = !ackAt.IsZero() && !now.Before(ackAt)
	if send || ack {
		return send, ack
	}
	switch {
	case sendAt.IsZero():
		return false, !ackAt.IsZero()
	case ackAt.IsZero():
		return true, false
	}
	return !sendAt.After(ackAt), ackAt.Before(sendAt)
}

// armTimer sets timer to fire at at, or stops it if at is zero. now is the
// current time.
func armTimer(timer *time.Timer, at, now time.Time) {
	d := deadline{at: at}
	d.arm(timer, now)
}

// sendPassState is what the send pass keeps from one pass to the next:
// scratch slices, owned by the loop.
type sendPassState struct {
	pings, rejoins []*path
}

// sendPass runs the scheduler, and the sender's timer functions that are
// due, once. It returns the sender's next deadline (zero: none) and false
// once the session is closed.
func (s *Session) sendPass(st *sendPassState) (time.Time, bool) {
	d := deadline{now: s.now()}
	now := d.now
	if s.quick {
		s.snd.schedMu.Lock() // before s.mu (obsqueue.go)
	}
	s.mu.Lock()
	if err := s.drainLocked(now); err != nil { // the paths' Acks and reports (inbox.go)
		s.closeLocked(err, codeForErr(err))
	}
	if s.closed {
		s.unlockPass()
		return time.Time{}, false
	}
	d.add(timerPaths, s.checkPathsLocked(now))
	d.add(timerLoss, s.dgLossLocked(now))
	s.ccLossesLocked()
	d.add(timerTimeouts, s.timeoutsLocked(now))
	if s.closed {
		s.unlockPass()
		return time.Time{}, false
	}
	// Probing before scheduling: a path whose first packet after a long
	// outage arrived in this pass (checkPathsLocked found it live again)
	// is marked rejoining before the scheduler sees it, and is then
	// given nothing while another path is live (path.info, snapRules;
	// TestRejoiningPathTakesNoSegments).
	var pingNext time.Time
	st.pings, st.rejoins, pingNext = s.probeLocked(now, st.pings[:0], st.rejoins[:0])
	d.add(timerProbe, pingNext)
	var observed bool
	decide := !s.quick && (!s.drainedLocked() || len(s.snd.obsq.evs) > 0) // something for a scheduler that is not Quick
	inline := decide && s.tryInlineLocked(now)
	if s.quick || inline {
		// A Quick scheduler decides here, with s.mu held, and so does
		// one that says it is quick now.
		retry, obs, open := s.scheduleRoundLocked(now)
		s.snd.inline = false
		if !open {
			s.mu.Unlock()
			s.snd.schedMu.Unlock()
			return time.Time{}, false
		}
		d.add(timerSchedule, retry)
		observed = obs
	} else if decide {
		poke(s.dec.wake) // the scheduler decides beside the loop (decider.go)
	}
	probe, probeNext := s.ackProbeLocked(now)
	d.add(timerAckProbe, probeNext)
	s.mu.Unlock()
	if observed {
		s.obsDeliver() // what this round learned; later events wake the loop again
	}
	if s.quick || inline {
		s.snd.schedMu.Unlock()
	}
	if probe != nil {
		_ = probe.sendDatagram([]byte{wire.TypeAckReq})
	}
	for _, p := range st.pings {
		_ = p.sendDatagram([]byte{wire.TypePing})
		s.sendPathProbe(p) // outside QUIC: the connection may be stuck (probe_udp.go)
		s.reportSilence(p)
	}
	for _, p := range st.rejoins {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.rejoinPath(p) }()
	}
	return d.at, true
}

// unlockPass releases what the send pass took: s.mu, and schedMu for a
// Quick scheduler.
func (s *Session) unlockPass() {
	s.mu.Unlock()
	if s.quick {
		s.snd.schedMu.Unlock()
	}
}

// ackPassState is what the ack pass keeps from one pass to the next:
// scratch storage for the Ack and report it encodes, owned by the loop.
type ackPassState struct {
	a   wire.Ack
	rep wire.Report
	buf []byte
}

// ackPass processes the segments the paths' readers posted, then sends the
// Ack when one is due, and a receiver report at the end of every
// ReportInterval in which something was received (reportDueLocked). It returns its next deadline: zero with no Ack pending
// and nothing received. It returns false once the session is closed.
func (s *Session) ackPass(st *ackPassState) (time.Time, bool) {
	s.mu.Lock()
	d := deadline{now: s.now()} // under the lock: no event of the state read below is later
	now := d.now
	if s.closed {
		s.mu.Unlock()
		return time.Time{}, false
	}
	s.takeCreditsLocked()      // what the applications read (creditq.go), before an Ack announces the credit
	if s.receivedLocked(now) { // the segments the paths' readers posted (rxbatch.go)
		poke(s.wake)
	}
	if s.closed { // a segment refused
		s.mu.Unlock()
		return time.Time{}, false
	}
	var ack, report []byte
	var p *path
	r := &s.rcv
	if !r.ackDue.IsZero() && !now.Before(r.ackDue) {
		st.buf = s.buildAckLocked(st.buf[:0], &st.a)
		ack = st.buf
	}
	d.add(timerAck, r.ackDue)
	due, next := s.reportDueLocked(now)
	if due {
		report = wire.AppendReport(nil, s.reportLocked(now, &st.rep))
		_, next = s.reportDueLocked(now) // the interval that begins now
	}
	d.add(timerReport, next)
	if ack != nil || report != nil {
		p = s.ackPathLocked()
	}
	s.mu.Unlock()
	if p != nil {
		if ack != nil {
			_ = p.sendDatagram(ack)
		}
		if report != nil {
			_ = p.sendDatagram(report)
		}
	}
	return d.at, true
}
