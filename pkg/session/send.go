package session

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// segment is one slice of the connection byte stream, kept until the peer
// acknowledges it. It is guarded by Session.mu.
type segment struct {
	seq, off  uint64
	size      uint64    // payload length, bytes: data and the data refs stand for
	data      []byte    // its inline bytes: control frames and STREAM frame headers (framedq.go); nil once acknowledged
	refs      []dataRef // its STREAM frames' data, in the streams' send buffers, in order; nil once acknowledged
	sent      bool      // sent at least once
	sentOn    uint64    // bitmask of live path slots that carried it
	sentAt    time.Time
	dgSentAt  time.Time // when a datagram path's writer last took it (dgdata.go)
	dgIdx     uint64    // that path's count of segments taken before it (dgdata.go)
	resent    bool      // taken from the retransmission queue at least once
	acked     bool
	inRetrans bool
	deferred  bool    // unsent, set aside while its stream is parked (park.go)
	first     uint8   // slot+1 of the path that took its first transmission (0: not sent)
	stream    *Stream // the stream of its first new record, or nil (recordMarks)
}

// sender is the connection-level send state, guarded by Session.mu.
type sender struct {
	segSize uint64
	bufCap  int

	pend    framedQueue // frames framed (fillLocked), not yet cut into segments
	ends    frameEnds   // where pend's frames end: cut takes whole frames
	hdr     [maxFrameHeader]byte
	pendOff uint64 // connection offset of pend[0]
	nextSeq uint64 // next sequence number to cut

	segs         []*segment // segments base, base+1, …, nextSeq−1
	base         uint64
	lowestUnsent uint64           // every segment below it has been sent at least once, or is deferred
	deferred     []deferredStream // parked streams and their deferred segments (park.go)
	retrans      []uint64         // sequence numbers to send again, oldest first
	sacked       rangeset         // segments at or above base that SACK ranges acknowledged (acked.go)

	segLimit      uint64        // the sender frames segment bytes with offset < segLimit: at most maxUnacked past the lowest unacknowledged one
	maxUnacked    uint64        // Config.MaxUnackedBytes
	progressAt    time.Time     // when data was last acknowledged, or first sent after none was in flight
	lastAck       time.Time     // when the last Ack arrived (or the session started)
	probeAt       time.Time     // when to ask for an Ack next (zero: not waiting)
	probeBackoff  time.Duration // current AckReq interval
	inflightBytes uint64        // bytes of sent, unacknowledged segments
	ackedBytes    uint64        // bytes of segments acknowledged so far
	ackVisits     uint64        // segments looked at by Acks' SACK ranges (acked.go; the cost a test bounds)
	copyCursor    [sched.MaxPaths]uint64

	// schedMu serializes the scheduler's calls (obsqueue.go); it is taken
	// before Session.mu, never waited for while holding it (tryInlineLocked
	// only tries it). ci, snap and slots are written under both locks and
	// read by Decide under schedMu alone.
	schedMu sessionMutex
	ci      sched.ConnInfo // the connection's view for the scheduler's current decision
	snap    []sched.PathInfo
	slots   []int      // slot of each snap entry
	heard   uint64     // bit i: snap entry i heard from the peer within a probe timeout (pathfill.go)
	prime   primeBound // the pull rule's bound at the snapshot (pull.go), under Session.mu
	obsq    obsQueue   // observations waiting for the scheduler (obsqueue.go)

	// inline: the round under way calls a scheduler that is not Quick
	// with Session.mu held, as a Quick one, because it said it is quick
	// now (sched.QuickUntil, decider.go). Written under both locks, so
	// either lock suffices to read it.
	inline bool

	slab []segment // segments not yet handed out (see newSegment)

	marks recordMarks // where pend's stream records begin (stream_prio.go)
}

// segSlab is how many segments newSegment allocates at once.
const segSlab = 64

// newSegment returns a zero segment from a slab of segSlab, one allocation
// for many segments. A slab stays in memory while any of its segments is
// referenced: at most segSlab−1 acknowledged segments' headers (no data)
// beyond the unacknowledged ones.
func (sn *sender) newSegment() *segment {
	if len(sn.slab) == 0 {
		sn.slab = make([]segment, segSlab)
	}
	g := &sn.slab[0]
	sn.slab = sn.slab[1:]
	return g
}

func (sn *sender) init(cfg Config) {
	sn.segSize = uint64(cfg.SegmentSize)
	sn.pend.inline.recycle = true
	sn.bufCap = cfg.SendBuffer
	sn.maxUnacked = uint64(max(cfg.MaxUnackedBytes, InitialWindow))
	sn.segLimit = sn.maxUnacked
	sn.snap = make([]sched.PathInfo, 0, cfg.MaxPaths)
	sn.slots = make([]int, 0, cfg.MaxPaths)
	sn.obsq.max = obsQueueMax(cfg)
}

func (sn *sender) get(seq uint64) *segment {
	if seq < sn.base || seq >= sn.nextSeq {
		return nil
	}
	return sn.segs[seq-sn.base]
}

// drainedLocked reports whether every byte written and every record due has
// been acknowledged.
func (s *Session) drainedLocked() bool {
	ss := &s.streams
	return s.snd.pend.Len() == 0 && len(s.snd.segs) == 0 && ss.queued == 0 && ss.finsPending == 0 && !ss.ctlPending()
}

// unsentBytes is the data not yet sent on any path: the streams' send
// buffers, pend, and cut segments that were skipped by a SendSeq
// reservation.
func (s *Session) unsentBytes() uint64 {
	sn := &s.snd
	n := uint64(sn.pend.Len()) + s.streams.queued
	for q := sn.lowestUnsent; q < sn.nextSeq; q++ {
		if g := sn.get(q); g != nil && !g.sent && !g.deferred {
			n += g.size
		}
	}
	for _, ds := range sn.deferred {
		for _, g := range ds.segs {
			n += g.size
		}
	}
	return n
}

// connBlockedLocked reports whether frames ready to go wait for an Ack:
// what the sender may hold unacknowledged (segLimit) holds them back, or
// stream data waits for the peer's connection credit, which Acks carry
// (wire.Ack.MaxData). The persist timer asks for an Ack then (persist.go):
// the last one may have been lost.
func (s *Session) connBlockedLocked() bool {
	sn := &s.snd
	if sn.pend.Len() > 0 {
		return sn.pendOff >= sn.segLimit
	}
	off := sn.pendOff + maxFrameHeader + ctrlReserve
	credit := s.streams.queued > 0 && s.streams.connCredit() == 0
	return (s.streams.ready.Len() > 0 && off >= sn.segLimit) || s.streams.ctlPending() || credit
}

// dataBlockedLocked reports whether application data waits while nothing
// can be framed: segLimit, the peer's connection credit or its stream
// windows hold it back (the credits grow only as the peer's application
// reads, so they wait on the segment that carries a stream's missing
// bytes). Call after fillLocked.
func (s *Session) dataBlockedLocked() bool {
	sn := &s.snd
	if sn.pend.Len() > 0 {
		return sn.pendOff >= sn.segLimit
	}
	return s.streams.queued > 0 || s.streams.finsPending > 0
}

// raiseLimit sets segLimit to maxUnacked bytes beyond the lowest
// unacknowledged byte: the data kept for retransmission stays within
// maxUnacked, whatever credit the peer grants. It is the sender's own
// bound (protocol version 5): the peer's connection credit counts stream
// bytes (streamSet.connMax), not segment bytes.
func (sn *sender) raiseLimit() {
	acked := sn.pendOff // below it, every byte was acknowledged
	if len(sn.segs) > 0 {
		acked = sn.segs[0].off
	}
	sn.segLimit = max(sn.segLimit, acked+sn.maxUnacked)
}

// ackedThrough reports whether every segment below connection offset off
// has been acknowledged (cumulatively: the lowest unacknowledged segment
// starts at or past off, or none is left and pend starts there).
func (sn *sender) ackedThrough(off uint64) bool {
	for _, g := range sn.segs {
		if !g.acked {
			return g.off >= off
		}
	}
	return sn.pendOff >= off
}

// cut makes the next segment from pend (whose frames fillLocked framed
// within the peer's window): as many whole frames as fit in a segment, so
// that the receiver can process the segment on its own, on arrival.
func (sn *sender) cut() *segment {
	if sn.pend.Len() == 0 || sn.pendOff >= sn.segLimit {
		return nil
	}
	n := sn.ends.take(sn.pendOff + min(uint64(sn.pend.Len()), sn.segSize, sn.segLimit-sn.pendOff))
	if n <= sn.pendOff {
		return nil // cannot happen: a frame is at most a segment, framed within the window
	}
	n -= sn.pendOff
	g := sn.newSegment()
	*g = segment{seq: sn.nextSeq, off: sn.pendOff, size: n, stream: sn.marks.take(sn.pendOff + n)}
	sn.pend.take(g, sn.pendOff, int(n))
	sn.pendOff += n
	sn.nextSeq++
	sn.segs = append(sn.segs, g)
	return g
}

// appendFrame appends a whole frame f to pend.
func (sn *sender) appendFrame(f []byte) {
	sn.pend.Append(f)
	sn.frameEnded()
}

// frameEnded notes that a frame ends where pend ends now.
func (sn *sender) frameEnded() { sn.ends.push(sn.pendOff + uint64(sn.pend.Len())) }

// maxFrameHeader bounds a control frame, or a STREAM frame's header, bytes:
// a type byte and three varints.
const maxFrameHeader = 1 + 3*8

// frameEnds is a FIFO of the connection offsets where pend's frames end,
// ascending. It holds one entry per frame in pend, which fillLocked bounds
// (at most its target, 1 MiB, of frames of at least 2 bytes).
type frameEnds struct {
	q    []uint64
	head int
}

func (e *frameEnds) push(end uint64) {
	if e.head > 0 && e.head >= len(e.q)/2 { // slide down rather than grow
		n := copy(e.q, e.q[e.head:])
		e.q, e.head = e.q[:n], 0
	}
	e.q = append(e.q, end)
}

// take consumes the frame ends at or below limit and returns the last of
// them (0 if none).
func (e *frameEnds) take(limit uint64) uint64 {
	var last uint64
	for e.head < len(e.q) && e.q[e.head] <= limit {
		last = e.q[e.head]
		e.head++
	}
	if e.head == len(e.q) {
		e.q, e.head = e.q[:0], 0
	}
	return last
}

// nextUnsent returns the lowest segment never sent, cutting one if needed,
// framed for the path at snapshot index i (pathfill.go; −1: any path).
func (s *Session) nextUnsent(i int) *segment {
	sn := &s.snd
	for sn.lowestUnsent < sn.nextSeq {
		if g := sn.get(sn.lowestUnsent); g != nil && !g.sent && !g.deferred {
			return g
		}
		sn.lowestUnsent++
	}
	s.fillForLocked(i)
	return sn.cut()
}

// pathAdded and pathRemoved keep slot bitmasks meaningful when a slot is reused.
func (sn *sender) pathAdded(slot int) { sn.copyCursor[slot] = sn.base }

func (sn *sender) pathRemoved(slot int) {
	bit := uint64(1) << uint(slot)
	for _, g := range sn.segs {
		g.sentOn &^= bit
	}
}

func (s *Session) closedErrLocked() error {
	if s.closeErr != nil {
		return s.closeErr
	}
	return ErrClosed
}
