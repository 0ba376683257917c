package session

import (
	"math/bits"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// snapshot fills s.snd.snap with the scheduler's view of every usable path
// at now.
func (s *Session) snapshotLocked(now time.Time) {
	sn := &s.snd
	sn.snap, sn.slots, sn.heard = sn.snap[:0], sn.slots[:0], 0
	rules := s.snapRulesLocked()
	sn.prime = rules.prime
	for i, p := range s.slots {
		if p == nil {
			continue
		}
		pi, heard := p.infoHeard(sn.segSize, now, rules)
		if heard {
			sn.heard |= 1 << uint(len(sn.snap))
		}
		sn.snap = append(sn.snap, pi)
		sn.slots = append(sn.slots, i)
	}
}

func (s *Session) connInfoLocked(now time.Time) sched.ConnInfo {
	sn := &s.snd
	nextSeq := sn.lowestUnsent
	for nextSeq < sn.nextSeq {
		if g := sn.get(nextSeq); g != nil && !g.sent && !g.deferred {
			break
		}
		nextSeq++
	}
	// New data the peer admits: what is framed and not yet cut, and what
	// its connection credit allows beyond, within what the sender may hold
	// unacknowledged.
	var win uint64
	if sn.segLimit > sn.pendOff {
		win = min(sn.segLimit-sn.pendOff, uint64(sn.pend.Len())+s.streams.connCredit())
	}
	ci := sched.ConnInfo{
		Now:              now,
		SendBufferBytes:  s.unsentBytes(),
		PeerWindow:       win,
		InFlightBytes:    sn.inflightBytes,
		UnackedSegments:  uint64(len(sn.segs)),
		RetransmitQueued: uint64(len(sn.retrans)),
		NextSeq:          nextSeq,
		SegmentSize:      sn.segSize,
	}
	s.streamInfoLocked(&ci)
	return ci
}

// hasWorkLocked reports whether there is anything to send.
func (s *Session) hasWorkLocked() bool {
	sn := &s.snd
	if len(sn.retrans) > 0 {
		return true
	}
	s.fillCtlLocked(int(sn.segSize)) // stream data is framed once the path is known (pathfill.go)
	if sn.pend.Len() > 0 && sn.pendOff < sn.segLimit {
		return true
	}
	if s.streamFramableLocked() {
		return true
	}
	for q := sn.lowestUnsent; q < sn.nextSeq; q++ {
		if g := sn.get(q); g != nil && !g.sent && !g.deferred {
			return true
		}
	}
	return false
}

// snapValidLocked reports whether every path of the snapshot is still in
// its slot: none was removed, or replaced by a new path in the same slot,
// while the scheduler decided without s.mu.
func (s *Session) snapValidLocked() bool {
	sn := &s.snd
	for i, slot := range sn.slots {
		if p := s.slots[slot]; p == nil || p.id != sn.snap[i].ID {
			return false
		}
	}
	return true
}

// maxDecisions bounds one scheduling round so that timers and probes run
// between rounds.
const maxDecisions = 512

// scheduleLocked asks the scheduler for decisions until it waits or nothing
// can be sent. It returns when to ask again if the scheduler said so.
//
// s.mu and schedMu are held; s.mu is released around each Decide (and the
// observations delivered before it), so Stream.Read, Stream.Write and the
// path readers go on while the scheduler thinks. After it, the decision is
// checked against what may have changed meanwhile: a path that left its
// slot voids the decision (the round takes a new snapshot and decides
// again), and applyLocked skips segments acknowledged meanwhile, as it
// always did. Returns with s.mu held; the caller checks s.closed.
func (s *Session) scheduleLocked(now time.Time) (retryAt time.Time) {
	sn := &s.snd
	if s.npaths == 0 {
		return
	}
	s.snapshotLocked(now)
	if len(sn.deferred) > 0 && !s.offerDeferredLocked(now) {
		return
	}
	for range maxDecisions {
		if !s.hasWorkLocked() {
			if s.cfg.OpportunisticReinjection {
				_, retryAt = s.opportunisticLocked(now)
			}
			if s.reinj != nil {
				s.idleReinjectLocked(now)
			}
			return
		}
		sn.ci = s.connInfoLocked(now) // kept in the sender: a local would escape through Decide
		d, r := s.askLocked(now, false)
		if r == roundEnd {
			return
		}
		if r == roundAgain {
			continue
		}
		if d.Action == sched.Wait {
			if s.parkLocked() {
				continue // the stream waits for its pinned path alone
			}
			return sooner(d.RetryAt, s.primeRetryLocked(now, sn.prime, sn.snap, sn.slots))
		}
		if s.applyLocked(d, now) == 0 {
			return
		}
	}
	poke(s.wake) // more to do: continue after the timers ran
	return
}

// What a round of askLocked left: a decision to carry out, a new snapshot
// to decide on again, or nothing more to do.
const (
	roundDecide = iota
	roundAgain
	roundEnd
)

// askLocked asks the scheduler for a decision on s.snd.ci and the snapshot:
// Decide, or Reinject if reinject is set. It delivers the queued
// observations first and releases s.mu around both, unless the scheduler
// is sched.Quick or quick now (sender.inline). It returns roundEnd if the
// session closed meanwhile or no path is left, roundAgain if a path left
// its slot (the decision may name it: dropped, and the snapshot taken
// again), else the decision and
// roundDecide. s.mu and schedMu are held.
func (s *Session) askLocked(now time.Time, reinject bool) (sched.Decision, int) {
	sn := &s.snd
	observed := sn.obsq.takeLocked()
	held := s.quick || sn.inline
	if !held {
		s.mu.Unlock()
	}
	if observed {
		s.obsDeliver()
	}
	var d sched.Decision
	if reinject {
		d = s.reinj.Reinject(&sn.ci, sn.snap)
	} else {
		d = s.sch.Decide(&sn.ci, sn.snap)
	}
	if held {
		// A sched.Quick scheduler (or one quick now) was called with
		// s.mu held: nothing changed meanwhile, and the decision cost no
		// lock operations.
		return d, roundDecide
	}
	s.mu.Lock()
	switch {
	case s.closed:
		return d, roundEnd
	case !s.snapValidLocked():
		s.snapshotLocked(now)
		if len(sn.snap) == 0 {
			return d, roundEnd
		}
		return d, roundAgain
	}
	return d, roundDecide
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
				g = s.nextFor(slot, i)
				shared = g
			}
		case sched.SendSeq:
			g = s.reserve(d.Seq)
			if g == nil || g.sent {
				g = s.nextFor(slot, i)
			}
		case sched.SendCopy:
			if d.Seq == sched.OldestUncarried {
				g = s.oldestUncarried(slot)
			} else if c := sn.get(d.Seq); c != nil && !c.acked && c.sent && c.sentOn&(1<<uint(slot)) == 0 {
				g = c
			}
			if g == nil {
				// Nothing to copy: new data, which the scheduler copies
				// onto its other paths too (redundant, EdAR's redundant
				// mode, XLINK near a deadline), so it is framed in
				// priority order, for no path in particular. Framed for
				// this path, a slower one, the pass-over rule (pathfill.go)
				// held a request's answer back for the fastest path's
				// turn while that path copied the bulk segments the slower
				// one had framed first: redundant's loaded p99 on
				// rpc-handoff went from 0.16 s to 0.5-1.0 s
				// (TestRedundantAnswerNotBehindDownload).
				g = s.nextFor(slot, -1)
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

// nextFor picks the segment a SendNext gives to the path in slot (snapshot
// index i): the oldest queued retransmission this path has not carried,
// else the next unsent one, framed for that path (pathfill.go).
func (s *Session) nextFor(slot, i int) *segment {
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
		c.inRetrans, c.resent = false, true
		sn.retrans = append(sn.retrans[:k], sn.retrans[k+1:]...)
		s.stats.retransSegments++
		// no reset stream's data goes again: appendPayload pads its frames
		g = c
		break
	}
	if g == nil {
		g = s.nextUnsent(i)
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
	if uint64(sn.pend.Len()) < need || sn.pendOff+need > sn.segLimit {
		return nil
	}
	var g *segment
	for sn.nextSeq <= seq {
		if g = sn.cut(); g == nil {
			return nil
		}
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
		if sn.inflightBytes == 0 {
			sn.progressAt = now
		}
		sn.inflightBytes += n
		g.sent = true
		g.first = uint8(slot + 1)
		if p.firstInFlight == 0 {
			p.firstBusyAt = now
		}
		p.firstInFlight++
	} else if g.sentOn != 0 || !s.cfg.DatagramData {
		s.stats.redundantBytes += n // a copy; with DatagramData and no path carrying it, a retransmission (dgdata.go)
	}
	g.sentOn |= 1 << uint(slot)
	g.sentAt = now
	f := frameLen(g)
	p.queue = append(p.queue, g)
	p.queuedBytes += f
	p.outstanding += f
	p.pw.pulled.Store(false) // it has data now; it asks again when quic-go takes it all
	p.bytesSent += n
	p.segsInFlight++
	s.stats.sentBytes += n
	sn.snap[i].BytesQueued += f
	sn.snap[i].BytesSent += n
	sn.snap[i].SegmentsInFlight++
	poke(p.notify)
}

// idleReinjectLocked offers a sched.Reinjector scheduler copies of
// unacknowledged data while nothing new can be sent (the caller checked),
// no retransmission is queued, data is in flight and some path can send.
// Each round's ConnInfo describes, in its stream fields, the oldest
// unacknowledged segment. Only SendCopy decisions are carried out, and only
// with a segment the path has not carried: a path never takes new data
// here. At most maxDecisions rounds; s.mu is released around each Reinject
// as around Decide.
func (s *Session) idleReinjectLocked(now time.Time) {
	sn := &s.snd
	for range maxDecisions {
		if len(sn.segs) == 0 || len(sn.retrans) > 0 || !s.anyRoomLocked() {
			return
		}
		sn.ci = s.connInfoLocked(now)
		s.oldestStreamLocked(&sn.ci)
		d, r := s.askLocked(now, true)
		if r == roundEnd {
			return
		}
		if r == roundAgain {
			continue
		}
		if d.Action != sched.SendCopy || s.applyCopiesLocked(d, now) == 0 {
			return
		}
	}
}

// anyRoomLocked reports whether some path of the snapshot can send.
func (s *Session) anyRoomLocked() bool {
	for i := range s.snd.snap {
		if s.snd.snap[i].SendingAllowed() {
			return true
		}
	}
	return false
}

// applyCopiesLocked carries out a SendCopy decision with copies only (no
// path falls back to new data) and returns how many it queued.
func (s *Session) applyCopiesLocked(d sched.Decision, now time.Time) int {
	sn := &s.snd
	n := 0
	for set := d.Paths; set != 0; {
		i := bits.TrailingZeros64(uint64(set))
		set &^= 1 << uint(i)
		if i >= len(sn.snap) || !sn.snap[i].SendingAllowed() {
			continue
		}
		slot := sn.slots[i]
		var g *segment
		if d.Seq == sched.OldestUncarried {
			g = s.oldestUncarried(slot)
		} else if c := sn.get(d.Seq); c != nil && !c.acked && c.sent && c.sentOn&(1<<uint(slot)) == 0 {
			g = c
		}
		if g == nil {
			continue
		}
		s.enqueueLocked(slot, i, g, now)
		n++
	}
	return n
}

// oldestStreamLocked sets ci's stream fields to those of the oldest sent,
// unacknowledged segment's stream (none: HasStream false).
func (s *Session) oldestStreamLocked(ci *sched.ConnInfo) {
	sn := &s.snd
	ci.HasStream, ci.StreamID, ci.Urgency, ci.Incremental = false, 0, 0, false
	ci.Deadline, ci.StreamRemaining, ci.PreferredPath, ci.Preference = time.Time{}, 0, 0, sched.NoPreference
	for q := sn.base; q < sn.nextSeq; q++ {
		g := sn.get(q)
		if g == nil || !g.sent || g.acked {
			continue
		}
		if st := g.stream; st != nil {
			p := &st.prio
			ci.HasStream, ci.StreamID = true, st.id
			ci.Urgency, ci.Incremental, ci.Deadline = p.urgency, p.incremental, p.deadline
			ci.PreferredPath, ci.Preference = p.path, p.pref
			ci.StreamRemaining = uint64(st.send.unframed())
		}
		return
	}
}
