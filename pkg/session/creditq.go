package session

import (
	"sync"
	"sync/atomic"
)

// Crediting what the application read (issue 30, stage 3: streams behind
// their gates). Stream.Read takes the stream's receive lock (Stream.rmu)
// and not Session.mu: it counts what it read in the stream's pendingRead
// and queues the stream here, once, and the loop's ack pass credits it
// (creditReadLocked: the connection's credit, RFC 9000 §4.1, and the
// stream's, with MAX_STREAM_DATA when a quarter of its window was read) before
// it builds an Ack. A Read wakes the ack pass only when the credit it
// returned may need sending at once: the stream's MAX_STREAM_DATA is due,
// or the reads not yet credited on the whole session reach a sixteenth of
// the connection window (maxDataDue's smaller step). Other reads are
// credited at the next ack pass, which every batch of arriving segments
// runs.
//
// Bound: a stream is queued at most once until the loop takes it
// (streamRecv.creditQueued), so the queue holds at most as many entries as
// the session has streams.
type creditQueue struct {
	mu      sync.Mutex
	q       []*Stream     // streams whose reads wait to be credited
	spare   []*Stream     // the array the loop took last, emptied: q's next
	pending atomic.Uint64 // bytes read and not yet credited, every stream
	pokeAt  uint64        // pending at which a Read wakes the ack pass: RecvWindow/16; set at the start
}

// readLocked counts n bytes that Read took from st's buffer, to be
// credited by the loop. It reports whether st must be queued (it was not
// yet) and whether its MAX_STREAM_DATA is due (streamRecv.maxStreamDataDue).
// st.rmu is held.
func (st *Stream) readLocked(n uint64) (queue, due bool) {
	r := &st.recv
	r.pendingRead += n
	queue = !r.creditQueued
	r.creditQueued = true
	return queue, r.maxStreamDataDue()
}

// post queues st if queue is set, counts the n bytes it read, and wakes the
// ack pass if due or if the reads not yet credited reach pokeAt. No lock
// of st or the session is held.
func (c *creditQueue) post(st *Stream, queue bool, n uint64, due bool) {
	if queue {
		c.mu.Lock()
		c.q = append(c.q, st)
		c.mu.Unlock()
	}
	if c.pending.Add(n) >= c.pokeAt || due {
		poke(st.s.ackWake)
	}
}

// takeCreditsLocked credits every queued stream's reads: the loop's ack
// pass, before it builds an Ack. s.mu is held.
func (s *Session) takeCreditsLocked() {
	c := &s.credits
	c.mu.Lock()
	q := c.q
	c.q, c.spare = c.spare[:0], nil
	c.mu.Unlock()
	for i, st := range q {
		st.rmu.Lock()
		st.recv.creditQueued = false
		s.creditReadLocked(st)
		st.rmu.Unlock()
		q[i] = nil
	}
	c.mu.Lock()
	c.spare = q[:0] // the two arrays take turns
	c.mu.Unlock()
}

// creditReadLocked credits the bytes the application read from st since
// the last call (Stream.Read's pendingRead). s.mu and st.rmu are held.
func (s *Session) creditReadLocked(st *Stream) {
	r := &st.recv
	n := r.pendingRead
	if n == 0 {
		return
	}
	r.pendingRead = 0
	s.credits.pending.Add(^(n - 1)) // −n
	s.streamReadLocked(st, n)
}
