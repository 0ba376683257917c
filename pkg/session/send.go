package session

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// segment is one slice of the connection byte stream, kept until the peer
// acknowledges it. It is guarded by Session.mu.
type segment struct {
	seq, off  uint64
	size      uint64 // payload length, bytes
	data      []byte // nil once acknowledged
	sent      bool   // sent at least once
	sentOn    uint64 // bitmask of live path slots that carried it
	sentAt    time.Time
	acked     bool
	inRetrans bool
}

// sender is the connection-level send state, guarded by Session.mu.
type sender struct {
	segSize uint64
	bufCap  int

	pend    byteQueue // records framed (fillLocked), not yet cut into segments
	hdr     [wire.MaxRecordHeaderLen]byte
	pendOff uint64 // connection offset of pend[0]
	nextSeq uint64 // next sequence number to cut

	segs         []*segment // segments base, base+1, …, nextSeq−1
	base         uint64
	lowestUnsent uint64   // every segment below it has been sent at least once
	retrans      []uint64 // sequence numbers to send again, oldest first

	peerLimit     uint64        // peer admits connection bytes with offset < peerLimit
	lastAck       time.Time     // when the last Ack arrived (or the session started)
	probeAt       time.Time     // when to ask for an Ack next (zero: not waiting)
	probeBackoff  time.Duration // current AckReq interval
	inflightBytes uint64        // bytes of sent, unacknowledged segments
	ackedBytes    uint64        // bytes of segments acknowledged so far
	copyCursor    [sched.MaxPaths]uint64

	snap  []sched.PathInfo
	slots []int // slot of each snap entry
}

func (sn *sender) init(cfg Config) {
	sn.segSize = uint64(cfg.SegmentSize)
	sn.pend.recycle = true // segments copy their bytes out (into pooled buffers)
	sn.bufCap = cfg.SendBuffer
	sn.peerLimit = InitialWindow // until the peer's first Ack
	sn.snap = make([]sched.PathInfo, 0, sched.MaxPaths)
	sn.slots = make([]int, 0, sched.MaxPaths)
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
		if g := sn.get(q); g != nil && !g.sent {
			n += g.size
		}
	}
	return n
}

// connBlockedLocked reports whether the peer's connection window holds back
// records that are ready to go.
func (s *Session) connBlockedLocked() bool {
	sn := &s.snd
	if sn.pend.Len() > 0 {
		return sn.pendOff >= sn.peerLimit
	}
	off := sn.pendOff + wire.MaxRecordHeaderLen + ctrlReserve
	return (len(s.streams.ready) > 0 && off >= sn.peerLimit) || s.streams.ctlPending()
}

// dataBlockedLocked reports whether application data waits while nothing
// can be framed: the peer's connection window or its stream windows hold it
// back (both grow only as the peer's application reads, so both wait on the
// segment that blocks in-order delivery). Call after fillLocked.
func (s *Session) dataBlockedLocked() bool {
	sn := &s.snd
	if sn.pend.Len() > 0 {
		return sn.pendOff >= sn.peerLimit
	}
	return s.streams.queued > 0 || s.streams.finsPending > 0
}

// cut makes the next segment from pend (whose records fillLocked framed
// within the peer's window).
func (sn *sender) cut() *segment {
	if sn.pend.Len() == 0 || sn.pendOff >= sn.peerLimit {
		return nil
	}
	n := min(uint64(sn.pend.Len()), sn.segSize, sn.peerLimit-sn.pendOff)
	g := &segment{seq: sn.nextSeq, off: sn.pendOff, size: n, data: getSegBuf(int(n))[:n]}
	sn.pend.Read(g.data)
	sn.pendOff += n
	sn.nextSeq++
	sn.segs = append(sn.segs, g)
	return g
}

// nextUnsent returns the lowest segment never sent, cutting one if needed.
func (s *Session) nextUnsent() *segment {
	sn := &s.snd
	for sn.lowestUnsent < sn.nextSeq {
		if g := sn.get(sn.lowestUnsent); g != nil && !g.sent {
			return g
		}
		sn.lowestUnsent++
	}
	s.fillLocked(int(sn.segSize))
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

// sendLoop runs the scheduler whenever something changed.
func (s *Session) sendLoop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-s.wake:
		case <-timer.C:
		case <-s.done:
			return
		}
		now := s.now()
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		next := s.checkPathsLocked(now)
		if retry := s.scheduleLocked(now); !retry.IsZero() && (next.IsZero() || retry.Before(next)) {
			next = retry
		}
		probe, probeNext := s.ackProbeLocked(now)
		if !probeNext.IsZero() && (next.IsZero() || probeNext.Before(next)) {
			next = probeNext
		}
		if t := s.rcv.nextSample; s.rcv.delivered > 0 && (next.IsZero() || t.Before(next)) {
			next = t
		}
		s.sample(now, false)
		s.mu.Unlock()
		if probe != nil {
			_ = probe.sendDatagram([]byte{wire.TypeAckReq})
		}
		if !next.IsZero() {
			timer.Reset(max(next.Sub(now), time.Millisecond))
		}
	}
}

// snapshot fills s.snd.snap with the scheduler's view of every usable path.
func (s *Session) snapshotLocked() {
	sn := &s.snd
	sn.snap, sn.slots = sn.snap[:0], sn.slots[:0]
	for i, p := range s.slots {
		if p == nil {
			continue
		}
		sn.snap = append(sn.snap, p.info(sn.segSize))
		sn.slots = append(sn.slots, i)
	}
}

func (s *Session) connInfoLocked(now time.Time) sched.ConnInfo {
	sn := &s.snd
	nextSeq := sn.lowestUnsent
	for nextSeq < sn.nextSeq {
		if g := sn.get(nextSeq); g != nil && !g.sent {
			break
		}
		nextSeq++
	}
	var win uint64
	if sn.peerLimit > sn.pendOff {
		win = sn.peerLimit - sn.pendOff
	}
	return sched.ConnInfo{
		Now:              now,
		SendBufferBytes:  s.unsentBytes(),
		PeerWindow:       win,
		InFlightBytes:    sn.inflightBytes,
		UnackedSegments:  uint64(len(sn.segs)),
		RetransmitQueued: uint64(len(sn.retrans)),
		NextSeq:          nextSeq,
		SegmentSize:      sn.segSize,
	}
}

// hasWorkLocked reports whether there is anything to send.
func (s *Session) hasWorkLocked() bool {
	sn := &s.snd
	if len(sn.retrans) > 0 {
		return true
	}
	s.fillLocked(int(sn.segSize))
	if sn.pend.Len() > 0 && sn.pendOff < sn.peerLimit {
		return true
	}
	for q := sn.lowestUnsent; q < sn.nextSeq; q++ {
		if g := sn.get(q); g != nil && !g.sent {
			return true
		}
	}
	return false
}

// maxDecisions bounds one scheduling round so other goroutines get the lock.
const maxDecisions = 512

// scheduleLocked asks the scheduler for decisions until it waits or nothing
// can be sent. It returns when to ask again if the scheduler said so.
func (s *Session) scheduleLocked(now time.Time) (retryAt time.Time) {
	sn := &s.snd
	if s.npaths == 0 {
		return
	}
	s.snapshotLocked()
	for range maxDecisions {
		if !s.hasWorkLocked() {
			if s.cfg.OpportunisticReinjection {
				s.opportunisticLocked(now)
			}
			return
		}
		ci := s.connInfoLocked(now)
		d := s.sch.Decide(&ci, sn.snap)
		if d.Action == sched.Wait {
			return d.RetryAt
		}
		if s.applyLocked(d, now) == 0 {
			return
		}
	}
	poke(s.wake) // more to do: continue after others had the lock
	return
}

// maxOpportunistic bounds the copies one opportunistic round sends.
const maxOpportunistic = 16

// opportunisticLocked is MPTCP's opportunistic retransmission (Raiciu et
// al., "How Hard Can It Be? Designing and Implementing a Deployable
// Multipath TCP", NSDI 2012, §4.2): "when the connection-level receive
// window is the limit, [send] the segment that blocks the window again on
// the subflow that has room". It acts only when the peer's window is full
// (new data waits for it) and nothing is queued for retransmission. From
// the oldest unacknowledged segment up, each segment whose fastest carrier
// is slower than the fastest path with room goes again on that path; it
// stops at the first segment it can neither skip nor rescue. A segment
// goes at most once on each path. It returns the copies sent.
func (s *Session) opportunisticLocked(now time.Time) int {
	sn := &s.snd
	if !s.dataBlockedLocked() || len(sn.retrans) > 0 {
		return 0
	}
	var rtt [sched.MaxPaths]time.Duration // by slot; 0 = no path or no sample
	var fastest time.Duration             // the lowest RTT among paths with room
	for i := range sn.snap {
		pi := &sn.snap[i]
		rtt[sn.slots[i]] = pi.SmoothedRTT
		if pi.SendingAllowed() && pi.SmoothedRTT > 0 && (fastest == 0 || pi.SmoothedRTT < fastest) {
			fastest = pi.SmoothedRTT
		}
	}
	if fastest == 0 {
		return 0
	}
	n := 0
	end := min(sn.nextSeq, sn.base+4*maxOpportunistic)
	for q := sn.base; q < end && n < maxOpportunistic; q++ {
		g := sn.get(q)
		if !g.sent {
			break
		}
		if g.acked {
			continue
		}
		var carrier time.Duration // the fastest path that carries g
		for set := g.sentOn; set != 0; {
			slot := bits.TrailingZeros64(set)
			set &^= 1 << uint(slot)
			if r := rtt[slot]; r > 0 && (carrier == 0 || r < carrier) {
				carrier = r
			}
		}
		if carrier != 0 && carrier <= fastest {
			continue // already on a path as fast as any with room
		}
		best := -1
		for i := range sn.snap {
			pi := &sn.snap[i]
			if g.sentOn&(1<<uint(sn.slots[i])) != 0 || !pi.SendingAllowed() || pi.SmoothedRTT == 0 {
				continue
			}
			if carrier != 0 && pi.SmoothedRTT >= carrier {
				continue
			}
			if best < 0 || pi.SmoothedRTT < sn.snap[best].SmoothedRTT {
				best = i
			}
		}
		if best < 0 {
			break // no room left on a faster path
		}
		s.enqueueLocked(sn.slots[best], best, g, now)
		s.stats.opportunistic++
		n++
	}
	return n
}

// applyLocked carries out a decision and returns how many segments it queued.
func (s *Session) applyLocked(d sched.Decision, now time.Time) int {
	sn := &s.snd
	n := 0
	var shared *segment // the segment of a SendNext that marks several paths
	set := d.Paths
	for set != 0 {
		i := bits.TrailingZeros64(uint64(set))
		set &^= 1 << uint(i)
		if i >= len(sn.snap) || !sn.snap[i].SendingAllowed() {
			continue
		}
		slot := sn.slots[i]
		var g *segment
		switch d.Action {
		case sched.SendNext:
			if shared != nil && shared.sentOn&(1<<uint(slot)) == 0 && !shared.acked {
				g = shared
			} else {
				g = s.nextFor(slot)
				shared = g
			}
		case sched.SendSeq:
			g = s.reserve(d.Seq)
			if g == nil || g.sent {
				g = s.nextFor(slot)
			}
		case sched.SendCopy:
			if d.Seq == sched.OldestUncarried {
				g = s.oldestUncarried(slot)
			} else if c := sn.get(d.Seq); c != nil && !c.acked && c.sent && c.sentOn&(1<<uint(slot)) == 0 {
				g = c
			}
			if g == nil {
				g = s.nextFor(slot)
			}
		}
		if g == nil {
			continue
		}
		s.enqueueLocked(slot, i, g, now)
		n++
	}
	return n
}

// nextFor picks the segment a SendNext gives to the path in slot: the oldest
// queued retransmission this path has not carried, else the next unsent one.
func (s *Session) nextFor(slot int) *segment {
	sn := &s.snd
	bit := uint64(1) << uint(slot)
	var g *segment
	for k := 0; k < len(sn.retrans); k++ {
		c := sn.get(sn.retrans[k])
		if c == nil || c.acked {
			sn.retrans = append(sn.retrans[:k], sn.retrans[k+1:]...)
			k--
			continue
		}
		if c.sentOn&bit != 0 {
			continue // this path already carries it; quic-go will deliver it
		}
		c.inRetrans = false
		sn.retrans = append(sn.retrans[:k], sn.retrans[k+1:]...)
		s.stats.retransSegments++
		g = c
		break
	}
	if g == nil {
		g = s.nextUnsent()
	}
	return g
}

// reserve returns segment seq, cutting full segments up to it if the data
// and the peer's window allow (FPRS's sequence reservation).
func (s *Session) reserve(seq uint64) *segment {
	sn := &s.snd
	if seq < sn.nextSeq {
		return sn.get(seq)
	}
	need := (seq - sn.nextSeq + 1) * sn.segSize
	s.fillLocked(int(min(need, 1<<20)))
	if uint64(sn.pend.Len()) < need || sn.pendOff+need > sn.peerLimit {
		return nil
	}
	var g *segment
	for sn.nextSeq <= seq {
		g = sn.cut()
	}
	return g
}

// oldestUncarried is EdAR's redundant-buffer rule: the oldest sent,
// unacknowledged segment the path has not carried yet.
func (s *Session) oldestUncarried(slot int) *segment {
	sn := &s.snd
	bit := uint64(1) << uint(slot)
	q := max(sn.copyCursor[slot], sn.base)
	for ; q < sn.nextSeq; q++ {
		g := sn.get(q)
		if g.sent && !g.acked && g.sentOn&bit == 0 {
			sn.copyCursor[slot] = q
			return g
		}
	}
	sn.copyCursor[slot] = q
	return nil
}

// enqueueLocked hands g to the path in slot (snapshot index i).
func (s *Session) enqueueLocked(slot, i int, g *segment, now time.Time) {
	sn := &s.snd
	p := s.slots[slot]
	n := g.size
	if !g.sent {
		sn.inflightBytes += n
		g.sent = true
	} else {
		s.stats.redundantBytes += n
	}
	g.sentOn |= 1 << uint(slot)
	g.sentAt = now
	p.queue = append(p.queue, g)
	p.queuedBytes += n
	p.bytesSent += n
	p.segsInFlight++
	s.stats.sentBytes += n
	sn.snap[i].BytesQueued += n
	sn.snap[i].BytesSent += n
	sn.snap[i].SegmentsInFlight++
	poke(p.notify)
}

// ackReceived processes a connection-level acknowledgement.
func (s *Session) ackReceived(a *wire.Ack) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := &s.snd
	if a.Cum > sn.nextSeq {
		return fmt.Errorf("%w: ack for segment %d, only %d sent", ErrProtocol, a.Cum, sn.nextSeq)
	}
	if n := len(a.Ranges); n > 0 && a.Ranges[n-1].End > sn.nextSeq {
		return fmt.Errorf("%w: sack beyond segment %d", ErrProtocol, sn.nextSeq)
	}
	for q := sn.base; q < a.Cum; q++ {
		g := sn.segs[0]
		if !g.sent {
			return fmt.Errorf("%w: ack for unsent segment %d", ErrProtocol, q)
		}
		s.ackedLocked(g, now)
		sn.segs[0] = nil
		sn.segs = sn.segs[1:]
		sn.base++
	}
	for _, r := range a.Ranges {
		for q := max(r.Start, sn.base); q < r.End; q++ {
			g := sn.get(q)
			if !g.sent {
				return fmt.Errorf("%w: sack for unsent segment %d", ErrProtocol, q)
			}
			s.ackedLocked(g, now)
		}
	}
	if sn.lowestUnsent < sn.base {
		sn.lowestUnsent = sn.base
	}
	if a.Limit > sn.peerLimit {
		sn.peerLimit = a.Limit
	}
	sn.lastAck, sn.probeAt, sn.probeBackoff = now, time.Time{}, 0
	if len(sn.segs) == 0 {
		sn.segs = sn.segs[:0:0] // let the old backing array go
	}
	s.cond.Broadcast() // Session.Close waits for acknowledgements
	poke(s.wake)
	return nil
}

// ackedLocked marks g acknowledged and credits every path that carried it.
func (s *Session) ackedLocked(g *segment, now time.Time) {
	if g.acked {
		return
	}
	g.acked = true
	n := g.size
	s.snd.inflightBytes -= n
	s.snd.ackedBytes += n
	for set := g.sentOn; set != 0; {
		slot := bits.TrailingZeros64(set)
		set &^= 1 << uint(slot)
		p := s.slots[slot]
		if p == nil {
			continue
		}
		p.segsInFlight--
		p.bytesAcked += n
		p.lastProgress = now
		p.tr.mu.Lock()
		srtt := p.tr.srtt
		p.tr.mu.Unlock()
		p.rate.acked(now, n, max(srtt, 10*time.Millisecond))
		if s.obs != nil {
			s.obs.SegmentAcked(now, p.id, g.seq, n, g.sentAt)
		}
	}
	putSegBuf(g.data) // the writer copies data under s.mu, so nothing else holds it
	g.data = nil
}

// checkPathsLocked marks paths that made no progress for several RTOs as
// potentially failed and reinjects their data; a path that receives packets
// again is live again. It returns when to check next.
func (s *Session) checkPathsLocked(now time.Time) (next time.Time) {
	for _, p := range s.slots {
		if p == nil {
			continue
		}
		p.tr.mu.Lock()
		lastRecv, srtt, rttVar, pto, inflight := p.tr.lastRecv, p.tr.srtt, p.tr.rttVar, p.tr.ptoCount, p.tr.inflight
		p.tr.mu.Unlock()
		timeout := max(s.cfg.FailureTimeout, 3*(srtt+4*rttVar))
		if p.failed {
			if lastRecv.After(p.failedAt) && pto == 0 {
				p.failed = false
				p.lastProgress = now
				s.cfg.Logf("session %x: path %d live again", s.id[:4], p.id)
			}
			continue
		}
		// Only a path that holds data it has not delivered can be failing:
		// bytes in flight at the QUIC level, or queued for it. A path whose
		// segments all reached the peer but await the connection-level Ack
		// (a lost Ack datagram) is fine; the AckReq timer recovers the Ack.
		if p.queuedBytes == 0 && (p.segsInFlight == 0 || inflight == 0) {
			p.lastProgress = now
			continue
		}
		progress := p.lastProgress
		if lastRecv.After(progress) {
			progress = lastRecv
		}
		if now.Sub(progress) >= timeout || pto >= 3 {
			p.failed, p.failedAt = true, now
			s.stats.pathFailures++
			s.cfg.Logf("session %x: path %d potentially failed (no progress for %v, PTO count %d)", s.id[:4], p.id, now.Sub(progress), pto)
			s.reinjectLocked(p, now)
			continue
		}
		if t := progress.Add(timeout); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}

// reinjectLocked queues for retransmission every unacknowledged segment that
// p carried and that no other live path carries.
func (s *Session) reinjectLocked(p *path, now time.Time) {
	bit := uint64(1) << uint(p.slot)
	live := uint64(0)
	for i, q := range s.slots {
		if q != nil && q != p && !q.failed {
			live |= 1 << uint(i)
		}
	}
	for _, g := range s.snd.segs {
		if g.acked || g.inRetrans || g.sentOn&bit == 0 || g.sentOn&live != 0 {
			continue
		}
		g.inRetrans = true
		s.snd.retrans = append(s.snd.retrans, g.seq)
		s.stats.reinjected++
		if s.obs != nil {
			s.obs.SegmentLost(now, p.id, g.seq)
		}
	}
	poke(s.wake)
}

func (s *Session) closedErrLocked() error {
	if s.closeErr != nil {
		return s.closeErr
	}
	return ErrClosed
}

// Bounds of the interval between AckReqs.
const (
	minProbe = 50 * time.Millisecond
	maxProbe = time.Second
)

// ackProbeLocked is the sender's persist timer. Acks travel as unreliable
// datagrams, so the last one of a burst, or a window update, can be lost;
// the receiver sends no other until new data arrives, which may never
// happen. While the sender waits for acknowledgements or for window, and
// none came for a while, it asks for an Ack (AckReq) on the best path, with
// exponential backoff. It returns the path to send the request on (nil: none
// now) and when to check again.
func (s *Session) ackProbeLocked(now time.Time) (*path, time.Time) {
	sn := &s.snd
	waiting := sn.inflightBytes > 0 || s.connBlockedLocked()
	if !waiting {
		sn.probeAt, sn.probeBackoff = time.Time{}, 0
		return nil, time.Time{}
	}
	if sn.probeAt.IsZero() {
		var srtt time.Duration
		for _, p := range s.slots {
			if p != nil {
				p.tr.mu.Lock()
				srtt = max(srtt, p.tr.srtt)
				p.tr.mu.Unlock()
			}
		}
		sn.probeBackoff = max(minProbe, 2*srtt+s.cfg.AckDelay)
		sn.probeAt = max2(sn.lastAck, now.Add(-sn.probeBackoff)).Add(sn.probeBackoff)
	}
	if now.Before(sn.probeAt) {
		return nil, sn.probeAt
	}
	sn.probeBackoff = min(2*sn.probeBackoff, maxProbe)
	sn.probeAt = now.Add(sn.probeBackoff)
	s.stats.ackRequests++
	return s.ackPathLocked(), sn.probeAt
}

// max2 is the later of two times.
func max2(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
