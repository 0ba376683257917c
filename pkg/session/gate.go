package session

import (
	"sync"
	"sync/atomic"
)

// gate is where an application call waits on one side of one stream: on
// that stream's channels, not on a condition variable of Session.mu
// (x/net/quic's gate.go is the model). The call takes its turn (enter),
// looks at the stream under the side's lock (Session.mu for a Write, the
// stream's own rmu for a Read), and if it must wait, drains a stale
// signal, lets go of that lock and waits on wake; whatever changes what it
// waits for signals, with that lock held. Turns are channels, not a sync.Mutex,
// so that a call waiting for its turn is durably blocked, as
// testing/synctest needs to advance its clock.
//
// Bounds: two channels of one element per stream side, the second made
// by the first call that waits (a stream that never waits has no wake
// channel: 96 bytes less per side); one call waits at a time (turn), so a
// signal is never lost to another waiter.
type gate struct {
	turn chan struct{} // capacity 1, full while a call is in progress: concurrent calls are served one at a time
	wake chan struct{} // capacity 1: something the waiting call looks for changed; nil until a call first waits; written and read under the side's lock, and read by the waiting call
}

func (g *gate) init() { g.turn = make(chan struct{}, 1) }

// enter waits for the calls before to return.
func (g *gate) enter() { g.turn <- struct{}{} }

// leave lets the next call in.
func (g *gate) leave() { <-g.turn }

// signal wakes the waiting call, if any; without one, the next call to
// wait drops the stale signal (drain). It never blocks. Call it after the
// change, with the side's lock held.
func (g *gate) signal() {
	if g.wake == nil {
		return // no call ever waited
	}
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// drain drops a signal that no call took, and makes the wake channel on
// the first wait. The side's lock is held, before the call lets it go:
// what changed before is in what the call just looked at, and what changes
// after signals again.
func (g *gate) drain() {
	if g.wake == nil {
		g.wake = make(chan struct{}, 1)
		return
	}
	select {
	case <-g.wake:
	default:
	}
}

// wait drains a stale signal, lets go of mu and waits for a signal; it
// returns with mu released. The call holds its turn. Read takes mu again
// only if no frame filled its slice; Write always does (waitLocked).
func (g *gate) wait(mu sync.Locker) {
	g.drain()
	mu.Unlock()
	<-g.wake
}

// waitLocked is wait, then takes mu again.
func (g *gate) waitLocked(mu sync.Locker) {
	g.wait(mu)
	mu.Lock()
}

// readGate is the receive side's gate, where Stream.Read waits, under the
// stream's rmu. A Read that finds the stream empty offers its slice
// (streamRecv.direct). The frame that fills it (frameSink.StreamFrame,
// s.mu and rmu held) records how many bytes it wrote in filled and
// signals; the Read then returns them without taking rmu again. Any other
// change a Read waits for (data stored, the end, a reset, a cancel, the
// deadline, the session's end) signals too, and the Read takes rmu to look.
type readGate struct {
	gate
	filled atomic.Int64 // bytes a frame wrote into the waiting Read's slice, not yet returned by it
}

// broadcast wakes every call waiting for one kind of change on the
// session (stream credit for OpenStreamSync, acknowledgements for Close),
// where a gate wakes one: a call takes the channel under s.mu (wait),
// lets go of s.mu and receives on it; the change closes it (signal), and
// the next wait makes a new one. Unlike a sync.Cond on Session.mu, the
// call can select on its context and its timer as well, and a change with
// no call waiting costs nothing.
//
// Bound: one channel, made only while a call waits. Guarded by Session.mu.
type broadcast struct{ ch chan struct{} }

// wait returns the channel the next signal closes. s.mu held.
func (b *broadcast) wait() <-chan struct{} {
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// signal wakes every call waiting. s.mu held; it never blocks.
func (b *broadcast) signal() {
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
