package session

import (
	"sync/atomic"
	"time"
)

// The session's loop (loop.go) sleeps until the earliest deadline of its timer
// functions. Each timer function takes now, does what is due at now, and
// returns its next deadline: the zero time when only an event (a packet, a
// write, a path change) can give it work, else a time after now. A deadline
// at or before now would be a bug of the function that returned it, and a
// loop that armed it would spin; the loop refuses it instead (and counts it,
// so that tests can tell), and sleeps until another deadline or an event.

// timerID names a loop's timer function.
type timerID uint8

const (
	timerPaths    timerID = iota // checkPathsLocked: path failure
	timerTimeouts                // timeoutsLocked: AckTimeout, IdleTimeout
	timerSchedule                // scheduleLocked: the scheduler's RetryAt, opportunistic reinjection
	timerAckProbe                // ackProbeLocked: AckReq (persist timer)
	timerProbe                   // probeLocked: pings of silent paths
	timerAck                     // ackPass: delayed Acks
	timerReport                  // ackPass: receiver reports
	timerLoss                    // dgLossLocked: loss of segments sent in datagrams
	numTimers
)

// pastDeadlines counts, per timer function, the deadlines at or before now
// that the loops refused, over every session of the process. A test that
// runs sessions expects them all zero.
var pastDeadlines [numTimers]atomic.Uint64

// deadline gathers a loop's next wake-up from its timer functions.
type deadline struct {
	now time.Time // when the timer functions ran
	at  time.Time // the earliest deadline after now (zero: none)
}

// add takes timer function id's deadline t into account.
func (d *deadline) add(id timerID, t time.Time) {
	if t.IsZero() {
		return
	}
	if !t.After(d.now) {
		pastDeadlines[id].Add(1)
		return
	}
	d.at = sooner(d.at, t)
}

// arm sets timer to fire at the deadline, or stops it if there is none.
// now is the current time (the loop may have run for a while since d.now).
func (d *deadline) arm(timer *time.Timer, now time.Time) {
	if d.at.IsZero() {
		timer.Stop()
		return
	}
	timer.Reset(d.at.Sub(now))
}

// newStoppedTimer returns a timer that has not been armed.
func newStoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}
