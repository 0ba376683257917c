package session

import (
	"math/bits"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Stream priorities (RFC 9218 §4): the order in which the framer takes the
// streams' data into the connection byte stream, and what the scheduler
// learns of the data it places (sched.ConnInfo).

// DefaultUrgency is the urgency of a stream whose priority was never set
// (RFC 9218 §4.1: "The default value is 3").
const DefaultUrgency = 3

// MaxUrgency is the least urgent level (RFC 9218 §4.1: "an integer between 0
// and 7, in descending order of priority"); larger values are clamped to it.
const MaxUrgency = 7

// streamPrio is a stream's priority and scheduling hints, and where it sits
// in the ready queue. Guarded by Session.mu.
type streamPrio struct {
	urgency     uint8     // 0 (most urgent) to MaxUrgency
	incremental bool      // shares bandwidth with the other incremental streams of its urgency
	deadline    time.Time // SetDeadlineHint's hint; zero: none
	path        sched.PathID
	pref        sched.PathPreference
	parked      bool // pinned to a path without room: out of the ready queue (park.go)

	// Place in the ready queue, valid while Stream.inReady.
	qUrg uint8 // the level it was queued at
	qInc bool  // in the level's incremental FIFO (else in its ID heap)
	hidx int   // index in the level's ID heap
}

// SetPriority sets the stream's RFC 9218 priority: urgency from 0 (most
// urgent) to 7 (background; larger values count as 7), and whether the
// stream is incremental. A stream starts at urgency 3 (RFC 9218's default)
// and incremental: streams share the connection round-robin, as quic-go's
// streams do, until the application sets a priority. An HTTP/3 layer sets
// RFC 9218's own defaults (urgency 3, not incremental) on every request.
//
// The session frames the ready data of more urgent streams first. Among
// streams of equal urgency, the non-incremental ones are served one at a
// time in ascending order of stream ID, the incremental ones round-robin,
// one segment's worth each; when both kinds are ready at one urgency, they
// take turns record by record so that neither starves the other (RFC 9218
// §10 leaves this to the implementation). Data already framed into the
// connection byte stream keeps its place.
//
// Safe for concurrent use, from any goroutine; it takes effect for the
// stream's next record.
func (st *Stream) SetPriority(urgency uint8, incremental bool) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	urgency = min(urgency, MaxUrgency)
	if st.prio.urgency == urgency && st.prio.incremental == incremental {
		return
	}
	st.prio.urgency, st.prio.incremental = urgency, incremental
	if st.inReady {
		s.streams.ready.remove(st)
		s.streams.ready.Push(st)
	}
}

// Priority returns the stream's urgency (0-7) and incremental flag.
// Safe for concurrent use.
func (st *Stream) Priority() (urgency uint8, incremental bool) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return st.prio.urgency, st.prio.incremental
}

// SetDeadlineHint tells the scheduler by when the application would like the
// stream's data delivered (sched.ConnInfo.Deadline); the zero time removes
// the hint. It is only a hint: the session never drops or reorders data for
// it, and no timer runs on it. Safe for concurrent use.
func (st *Stream) SetDeadlineHint(t time.Time) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.prio.deadline = t
}

// SetPathPreference asks that the stream's data go on the path with the
// given ID (see Session.AddPath and Session.RemovePath): with pin, only on
// that path while it is live (present and not potentially failed; the data
// waits for its window, and so does the data framed after it, since the
// connection byte stream is sent in order; the session's own copies, at a
// probe timeout or by opportunistic reinjection, leave it there too, and it
// moves only when the path fails); without pin, on that path when
// it can send now and on the others otherwise. The scheduler sees the
// preference in sched.ConnInfo (PreferredPath, Preference); the default
// scheduler, minRTT, honours it, others may not. It applies to segments
// whose first new record is the stream's (see sched.ConnInfo). Safe for
// concurrent use.
func (st *Stream) SetPathPreference(path sched.PathID, pin bool) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.prio.path, st.prio.pref = path, sched.PreferPath
	if pin {
		st.prio.pref = sched.PinPath
	}
}

// ClearPathPreference removes the stream's path preference. Safe for
// concurrent use.
func (st *Stream) ClearPathPreference() {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.prio.path, st.prio.pref = 0, sched.NoPreference
}

// SetPriority is Stream.SetPriority.
func (ss *SendStream) SetPriority(urgency uint8, incremental bool) {
	(*Stream)(ss).SetPriority(urgency, incremental)
}

// Priority is Stream.Priority.
func (ss *SendStream) Priority() (urgency uint8, incremental bool) { return (*Stream)(ss).Priority() }

// SetDeadlineHint is Stream.SetDeadlineHint.
func (ss *SendStream) SetDeadlineHint(t time.Time) { (*Stream)(ss).SetDeadlineHint(t) }

// SetPathPreference is Stream.SetPathPreference.
func (ss *SendStream) SetPathPreference(path sched.PathID, pin bool) {
	(*Stream)(ss).SetPathPreference(path, pin)
}

// ClearPathPreference is Stream.ClearPathPreference.
func (ss *SendStream) ClearPathPreference() { (*Stream)(ss).ClearPathPreference() }

// readyQueue holds the streams with data or an end to send, one level per
// urgency. Each level keeps its non-incremental streams in a heap by stream
// ID (the framer stays on the lowest until it has nothing more to send) and
// its incremental streams in a FIFO (the framer takes one record from the
// first and puts it back at the end). Front is O(1) (a bit scan over the
// non-empty levels); done is O(1) for a stream that stays, O(log n) for one
// that leaves the heap; nothing allocates once the arrays have their size.
//
// Bounds: each stream is queued at most once (Stream.inReady), so the queue
// holds at most the session's streams.
type readyQueue struct {
	lv   [MaxUrgency + 1]readyLevel
	busy uint8 // bit u set: level u is not empty
	n    int   // streams queued

	// The pick Front made, which done completes.
	curUrg uint8
	curInc bool
}

// readyLevel is the streams of one urgency.
type readyLevel struct {
	seq     idHeap     // non-incremental streams, lowest ID first
	inc     streamFIFO // incremental streams, round-robin
	incNext bool       // with both kinds ready, the next record is an incremental stream's
}

// Len is the number of streams queued.
func (q *readyQueue) Len() int { return q.n }

// Push queues st at its current priority; st must not be queued.
func (q *readyQueue) Push(st *Stream) {
	u := st.prio.urgency
	st.prio.qUrg, st.prio.qInc = u, st.prio.incremental
	l := &q.lv[u]
	if st.prio.incremental {
		l.inc.Push(st)
	} else {
		l.seq.push(st)
	}
	q.busy |= 1 << u
	q.n++
}

// pushFront queues st at its current priority ahead of the incremental
// streams of its level (a non-incremental one takes its place by ID as
// with Push); st must not be queued.
func (q *readyQueue) pushFront(st *Stream) {
	if !st.prio.incremental {
		q.Push(st)
		return
	}
	u := st.prio.urgency
	st.prio.qUrg, st.prio.qInc = u, true
	q.lv[u].inc.pushFront(st)
	q.busy |= 1 << u
	q.n++
}

// Front picks the stream whose record goes next; the queue must not be
// empty. Until done is called, Front returns the same stream.
func (q *readyQueue) Front() *Stream {
	u := uint8(bits.TrailingZeros8(q.busy))
	l := &q.lv[u]
	q.curUrg = u
	q.curInc = l.inc.Len() > 0 && (l.seq.Len() == 0 || l.incNext)
	if q.curInc {
		return l.inc.Front()
	}
	return l.seq.min()
}

// done completes the pick of the last Front: the stream stays queued if
// again (an incremental one goes to the back of its FIFO, a non-incremental
// one keeps its place at the front), else it leaves the queue.
func (q *readyQueue) done(again bool) *Stream {
	l := &q.lv[q.curUrg]
	var st *Stream
	if q.curInc {
		st = l.inc.Pop()
		if again {
			l.inc.Push(st)
		}
	} else {
		st = l.seq.min()
		if !again {
			l.seq.pop()
		}
	}
	l.incNext = !q.curInc
	if !again {
		q.left(q.curUrg)
	}
	return st
}

// remove takes st, which must be queued, out of the queue (a priority
// change). It is O(n) in the streams of its level.
func (q *readyQueue) remove(st *Stream) {
	l := &q.lv[st.prio.qUrg]
	if st.prio.qInc {
		l.inc.remove(st)
	} else {
		l.seq.removeAt(st.prio.hidx)
	}
	q.left(st.prio.qUrg)
}

// left accounts for a stream that left level u.
func (q *readyQueue) left(u uint8) {
	q.n--
	if l := &q.lv[u]; l.inc.Len() == 0 && l.seq.Len() == 0 {
		q.busy &^= 1 << u
	}
}

// remove deletes st from the queue if it is there, keeping the others'
// order. O(Len).
func (q *streamFIFO) remove(st *Stream) {
	for i := q.head; i < len(q.buf); i++ {
		if q.buf[i] == st {
			copy(q.buf[i:], q.buf[i+1:])
			q.buf[len(q.buf)-1] = nil
			q.buf = q.buf[:len(q.buf)-1]
			if q.head == len(q.buf) {
				q.buf, q.head = q.buf[:0], 0
			}
			return
		}
	}
}

// idHeap is a binary min-heap of streams by ID; each stream's index is kept
// in its prio.hidx.
type idHeap []*Stream

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) min() *Stream       { return h[0] }
func (h idHeap) less(i, j int) bool { return h[i].id < h[j].id }

func (h idHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].prio.hidx = i
	h[j].prio.hidx = j
}

func (h *idHeap) push(st *Stream) {
	st.prio.hidx = len(*h)
	*h = append(*h, st)
	h.up(len(*h) - 1)
}

func (h *idHeap) pop() { h.removeAt(0) }

// removeAt deletes the element at index i.
func (h *idHeap) removeAt(i int) {
	old := *h
	last := len(old) - 1
	if i != last {
		old.swap(i, last)
	}
	old[last] = nil
	*h = old[:last]
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h idHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h idHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h.swap(i, c)
		i = c
	}
}

// recordMarks remembers which stream's record begins where in the framed
// bytes not yet cut into segments (sender.pend), so that each segment, and
// the scheduler's ConnInfo, can name the stream of its first new record.
// Consecutive records of one stream share a mark.
//
// Bounds: at most maxMarks marks (a fixed array); when more streams
// alternate within pend, the extra records are attributed to the stream of
// the last mark kept.
type recordMarks struct {
	ring [maxMarks]recordMark
	head int
	n    int
	last *Stream // stream of the last mark added (coalescing)
	cur  *Stream // stream of the record in progress at the cut point
}

// maxMarks bounds recordMarks: a segment's worth of pend rarely holds more
// than a few records, and a reservation (reserve) of many segments of
// alternating streams loses only the attribution of the excess.
const maxMarks = 128

type recordMark struct {
	off uint64 // connection offset of the record's header
	st  *Stream
}

// add notes that st's record begins at connection offset off.
func (m *recordMarks) add(off uint64, st *Stream) {
	if st == m.last || m.n == maxMarks {
		return
	}
	m.ring[(m.head+m.n)%maxMarks] = recordMark{off, st}
	m.n++
	m.last = st
}

// take returns the stream of the first record that begins before to (every
// mark before the segment's start was taken already), else of the record in
// progress, and consumes the marks below to.
func (m *recordMarks) take(to uint64) *Stream {
	st := m.peek(to)
	for m.n > 0 && m.ring[m.head].off < to {
		m.cur = m.ring[m.head].st
		m.ring[m.head] = recordMark{}
		m.head = (m.head + 1) % maxMarks
		m.n--
	}
	if m.n == 0 {
		m.last = nil
	}
	return st
}

// peek is take without consuming.
func (m *recordMarks) peek(to uint64) *Stream {
	if m.n > 0 && m.ring[m.head].off < to {
		return m.ring[m.head].st
	}
	return m.cur
}

// streamInfoLocked fills the stream fields of ci (see sched.ConnInfo) from
// the next new segment: the lowest unsent one already cut (ci.NextSeq), else
// the next one cut from pend.
func (s *Session) streamInfoLocked(ci *sched.ConnInfo) {
	sn := &s.snd
	var st *Stream
	if g := sn.get(ci.NextSeq); g != nil {
		st = g.stream
	} else if sn.pend.Len() > 0 {
		st = sn.marks.peek(sn.pendOff + min(uint64(sn.pend.Len()), sn.segSize))
	}
	if st == nil && s.streams.ready.Len() > 0 {
		st = s.streams.ready.Front() // framed once the path is known (pathfill.go)
	}
	if st != nil {
		streamInfoFor(ci, st)
	}
}

// streamInfoFor fills the stream fields of ci for st.
func streamInfoFor(ci *sched.ConnInfo, st *Stream) {
	p := &st.prio
	ci.HasStream = true
	ci.StreamID = st.id
	ci.Urgency, ci.Incremental, ci.Deadline = p.urgency, p.incremental, p.deadline
	ci.PreferredPath, ci.Preference = p.path, p.pref
	ci.StreamRemaining = uint64(st.send.unframed())
}
