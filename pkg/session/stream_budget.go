package session

import (
	"sync"
	"sync/atomic"
)

// Send-buffer budgets. Bytes an application wrote and the session has not
// framed yet wait in their stream's send buffer (at most Config.SendBuffer
// per stream). Two budgets bound them together:
//
//   - a session's streams hold at most Config.MaxSendBuffered bytes in all
//     (streamSet.queued against streamSet.maxQueued);
//   - a Listener's sessions hold at most Config.MaxListenerSendBuffered
//     bytes in all (sendBudget, shared by the Listener's sessions).
//
// A Write takes room from both before it appends and waits (until its
// deadline, the stream's end or the session's) while either is used up.
// Room comes back as the framer moves bytes into the connection byte
// stream (which the peer's connection window bounds), as a stream is
// cancelled, and when a session ends. A waiting Write holds nothing that
// other Writes, the framer or the receive side need: it waits on its
// stream's write gate (gate.go) with Session.mu released, and the budget's
// own lock is never held while a Session.mu is taken.

// roomWake is the least room, bytes, whose return wakes Writes waiting for a
// budget: less is not worth a wake-up (a waiting Write is woken once per
// roomWake bytes freed, not once per record). It is capped at a sixteenth of
// the budget.
const roomWake = 64 << 10

// sendBudget is the send-buffer budget a Listener's sessions share. Safe for
// concurrent use.
//
// Bounds: waiting holds at most one entry per session.
type sendBudget struct {
	limit int64        // Config.MaxListenerSendBuffered, bytes
	used  atomic.Int64 // bytes taken and not returned
	nwait atomic.Int32 // len(waiting), for a lock-free check on return

	mu      sync.Mutex
	waiting []*Session // sessions with a Write waiting for room
}

func newSendBudget(limit int) *sendBudget { return &sendBudget{limit: int64(limit)} }

// take takes up to n bytes of room and returns how many it took. Taking none,
// it registers s (once), whose waiting Writes are woken once room comes
// back; s.mu is held.
func (b *sendBudget) take(n int, s *Session) int {
	if k := b.tryTake(n); k > 0 {
		return k
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nwait.Add(1) // before the second try: a concurrent give sees it, or we see its room
	if k := b.tryTake(n); k > 0 || s.streams.budgetWait {
		b.nwait.Add(-1)
		return k
	}
	s.streams.budgetWait = true
	b.waiting = append(b.waiting, s)
	return 0
}

// tryTake takes up to n bytes of room without waiting.
func (b *sendBudget) tryTake(n int) int {
	for {
		used := b.used.Load()
		k := min(int64(n), b.limit-used)
		if k <= 0 {
			return 0
		}
		if b.used.CompareAndSwap(used, used+k) {
			return int(k)
		}
	}
}

// give returns n bytes of room, waking the sessions that wait for it once
// enough came back. It may be called with a Session.mu held: the wake-ups
// take each session's lock on their own goroutine.
func (b *sendBudget) give(n int) {
	if n == 0 {
		return
	}
	used := b.used.Add(-int64(n))
	if b.nwait.Load() == 0 || b.limit-used < min(roomWake, b.limit/16) {
		return
	}
	b.mu.Lock()
	ws := b.waiting
	b.waiting = nil
	b.nwait.Store(0)
	b.mu.Unlock()
	for _, s := range ws {
		go s.budgetFreed()
	}
}

// room is the budget's free room, bytes.
func (b *sendBudget) room() int { return int(b.limit - b.used.Load()) }

// budgetFreed wakes s's Writes waiting for room after the Listener's budget
// had some come back.
func (s *Session) budgetFreed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams.budgetWait = false
	s.streams.wakeRoomLocked()
}

// reserveLocked takes up to n bytes of room for st's send buffer from the
// session's budget and the Listener's, and returns how many it took. Taking
// none, it queues st to be woken when room comes back.
func (ss *streamSet) reserveLocked(st *Stream, n int) int {
	n = min(n, int(ss.maxQueued-ss.queued))
	if n > 0 && ss.budget != nil && !ss.budgetGone {
		n = ss.budget.take(n, ss.s)
	}
	if n <= 0 {
		st.waitRoom = true
		if !st.inRoomQ {
			st.inRoomQ = true
			ss.roomQ.Push(st)
		}
		return 0
	}
	ss.queued += uint64(n)
	return n
}

// unqueueLocked returns n bytes that left the send buffers (framed or
// dropped) to both budgets.
func (ss *streamSet) unqueueLocked(n uint64) {
	ss.queued -= n
	if ss.budget != nil && !ss.budgetGone {
		ss.budget.give(int(n))
	}
	if ss.roomQ.Len() > 0 && ss.maxQueued-ss.queued >= min(roomWake, ss.maxQueued/16) {
		ss.wakeRoomLocked()
	}
}

// wakeRoomLocked wakes the first Write waiting for room, if there is room:
// it takes what it can and wakes the next before it returns or waits
// again (streamWriteLocked).
func (ss *streamSet) wakeRoomLocked() {
	if ss.queued >= ss.maxQueued || (ss.budget != nil && !ss.budgetGone && ss.budget.room() <= 0) {
		return
	}
	for ss.roomQ.Len() > 0 {
		st := ss.roomQ.Pop()
		st.inRoomQ = false
		if st.waitRoom {
			st.waitRoom = false
			st.wgate.signal()
			return
		}
	}
}

// returnBudgetLocked gives what the session's streams still buffer back to
// the Listener's budget, once: the session ended, and its buffers will never
// be framed.
func (ss *streamSet) returnBudgetLocked() {
	if ss.budget == nil || ss.budgetGone {
		return
	}
	ss.budgetGone = true
	ss.budget.give(int(ss.queued))
}
