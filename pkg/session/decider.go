package session

import "time"

// The decider: where a scheduler that is not sched.Quick decides, beside
// the loop (issue 30, stage 3; issue 19: a slow Decide holds back nothing
// else).
//
// A Quick scheduler (every heuristic that ships here) decides inside the
// loop's send pass, with Session.mu held. One that is not, EdAR's model
// inference or a scheduler of a researcher's own, may take long, and the
// loop must not wait for it: while the loop waited in Decide, this end sent
// no Acks and no receiver reports for what it received, and ran none of
// the sender's timers (loss detection, a failed path's reinjection, the
// idle timeout). So for such a scheduler the send pass runs those timers
// and then pokes the decider, a goroutine of the session that runs the
// scheduling round (scheduleLocked, which releases Session.mu around each
// Decide) and delivers the scheduler's queued observations. A path whose
// writer finds it pulling pokes the decider too (decideOnPull).
//
// A scheduler that is slow only at instants it knows (sched.QuickUntil:
// EdAR and the learned scheduler run their policy once per decision
// interval and only apply its choice in between) decides where a Quick one
// does whenever it says it is quick at that moment: in the send pass, or on
// the writer of a path that pulled. Only its slow calls go to the decider,
// so a decision interval of dozens of decisions costs the decider one
// hand-off instead of one per wake-up.
//
// Bound: one goroutine per session, started only for a scheduler that is
// not Quick, ended with the session; one wake channel of one element, and
// a timer armed only while the scheduler asked to be asked again
// (Decision.RetryAt, or the pull rule's retry: primeRetryLocked), so an
// idle session's decider sleeps without one.
type decider struct {
	wake chan struct{} // capacity 1: a scheduling round is due
}

// runDecider starts the decider if s's scheduler is not sched.Quick.
func (s *Session) runDecider() {
	if s.quick {
		return
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.deciderLoop() }()
}

// deciderLoop runs a scheduling round each time it is poked and at the
// deadline the last round asked for, until the session closes.
func (s *Session) deciderLoop() {
	timer := newStoppedTimer()
	defer timer.Stop()
	for {
		select {
		case <-s.dec.wake:
			s.woke(loopDecide, wokePoked)
		case <-timer.C:
			s.woke(loopDecide, wokeTimer)
		case <-s.done:
			return
		}
		at, open := s.decideRound()
		if !open {
			return
		}
		armTimer(timer, at, s.now())
	}
}

// decideRound runs the scheduler as the send pass runs a Quick one: with
// the paths' room wakes on while it reads the windows, then the
// observations it left queued delivered. It returns when to ask the
// scheduler again (zero: when poked), and false once the session is
// closed.
func (s *Session) decideRound() (time.Time, bool) {
	now := s.now()
	s.snd.schedMu.Lock() // before s.mu (obsqueue.go)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.snd.schedMu.Unlock()
		return time.Time{}, false
	}
	retry, observed, open := s.scheduleRoundLocked(now) // releases s.mu while the scheduler decides
	if !open {
		s.mu.Unlock()
		s.snd.schedMu.Unlock()
		return time.Time{}, false
	}
	s.mu.Unlock()
	if observed {
		s.obsDeliver()
	}
	s.snd.schedMu.Unlock()
	return retry, true
}

// scheduleRoundLocked is one scheduling round at now, for the send pass
// (a Quick scheduler) or the decider: the paths' room wakes on while the
// scheduler reads the windows and off again once nothing is left to send,
// and the observations the round left queued taken for delivery
// (observed: obsDeliver, once s.mu is released). It returns when to ask
// the scheduler again, and open false once the session is closed. s.mu
// and schedMu are held.
func (s *Session) scheduleRoundLocked(now time.Time) (retry time.Time, observed, open bool) {
	s.setRoomWakes(true)
	retry = s.scheduleLocked(now)
	if s.closed {
		return time.Time{}, false, false
	}
	if s.drainedLocked() {
		s.setRoomWakes(false)
	}
	return retry, s.snd.obsq.takeLocked(), true
}

// tryInlineLocked reports whether a scheduler that is not Quick may decide
// now with s.mu held (sched.QuickUntil): if so, it has taken schedMu and set
// sender.inline, and the caller runs the round, clears inline and releases
// schedMu. s.mu is held; schedMu is only tried, never waited for, since it
// comes before s.mu (obsqueue.go): a decider in the middle of a round
// keeps it.
func (s *Session) tryInlineLocked(now time.Time) bool {
	if s.quickAt == nil || !s.snd.schedMu.TryLock() {
		return false
	}
	if !s.quickAt.QuickAt(now) {
		s.snd.schedMu.Unlock()
		return false
	}
	s.snd.inline = true
	return true
}
