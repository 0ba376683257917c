package session

import "sync/atomic"

// readGate is where a Stream.Read waits: on its own stream's channel, not
// on a condition variable of Session.mu (x/net/quic's gate.go is the
// model). A Read that finds the stream empty offers its slice
// (streamRecv.direct), lets go of s.mu and waits on wake. The frame that
// fills the slice (frameSink.StreamFrame, s.mu held) records how many bytes
// it wrote in filled and signals; the Read then returns them without
// taking s.mu again. Any other change a Read waits for (data stored, the
// end, a reset, a cancel, the deadline, the session's end) signals too,
// and the Read takes s.mu to look.
//
// Bounds: two channels of one element per stream; one Read waits at a time
// (turn), so a signal is never lost to another waiter.
type readGate struct {
	turn   chan struct{} // capacity 1, full while a Read is in progress: concurrent Reads are served one at a time
	wake   chan struct{} // capacity 1: something a waiting Read looks for changed
	filled atomic.Int64  // bytes a frame wrote into the waiting Read's slice, not yet returned by it
}

func (g *readGate) init() {
	g.turn = make(chan struct{}, 1)
	g.wake = make(chan struct{}, 1)
}

// enter waits for the Reads before to return. A channel, not a
// sync.Mutex: a Read waiting for its turn is durably blocked, as
// testing/synctest needs to advance its clock.
func (g *readGate) enter() { g.turn <- struct{}{} }

// leave lets the next Read in.
func (g *readGate) leave() { <-g.turn }

// signal wakes the waiting Read, if any; without one, the next Read to
// wait finds the stale signal gone (drain). It never blocks. Call it after
// the change, with s.mu held.
func (g *readGate) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// drain drops a signal that no Read took. s.mu held, before the Read
// lets it go: what changed before is in what the Read just looked at, and
// what changes after signals again.
func (g *readGate) drain() {
	select {
	case <-g.wake:
	default:
	}
}
