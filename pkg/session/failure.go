package session

import (
	"time"
)

// ptoFailed is the quic-go probe-timeout count that marks a path
// potentially failed: two probe timeouts in a row with no acknowledgement
// (about srtt + 4 rttvar + max_ack_delay, then twice that) is a dead path,
// not a slow one. Three took about 400 ms on a 10 ms path, over the 300 ms
// stall a multipath session should allow itself.
const ptoFailed = 2

// minHintSilence: a path the peer reports silent fails once it made no
// progress for max(this, 2 RTT).
const minHintSilence = 50 * time.Millisecond

// silenceReported takes the peer's report that nothing arrived on path id
// for a while (it receives, this end sends): the path fails at once if it
// holds undelivered data and made no progress either (checkPathsLocked).
func (s *Session) silenceReported(id uint64) {
	s.mu.Lock()
	for _, p := range s.slots {
		if p != nil && uint64(p.id) == id {
			p.silentHint = s.now()
		}
	}
	s.mu.Unlock()
	poke(s.wake)
}

// checkPathsLocked marks paths that made no progress for several RTOs as
// potentially failed and reinjects their data; a path that receives packets
// again is live again. It returns when to check next.
func (s *Session) checkPathsLocked(now time.Time) (next time.Time) {
	for _, p := range s.slots {
		if p == nil {
			continue
		}
		v := p.viewLocked(now)
		lastRecv, srtt, rttVar, pto, inflight := v.lastRecv, v.srtt, v.rttVar, v.ptoCount, v.inflight
		timeout := max(s.cfg.FailureTimeout, 3*(srtt+4*rttVar))
		if p.tr == nil {
			// No tracer: the probe timeouts quic-go would have fired since
			// the path last heard from the peer (or made progress).
			pto = ptoEstimate(now.Sub(max2(lastRecv, p.lastProgress)), srtt, rttVar)
		}
		if p.failed {
			if lastRecv.After(p.failedAt) && pto == 0 {
				p.failed = false
				p.lastProgress = now
				s.logf("session %x: path %d live again", s.id[:4], p.id)
				s.pathEventLocked(p, PathRecovered)
			}
			continue
		}
		// Only a path that holds data it has not delivered can be failing:
		// bytes in flight at the QUIC level, or queued for it. A path whose
		// segments all reached the peer but await the connection-level Ack
		// (a lost Ack datagram) is fine; the AckReq timer recovers the Ack.
		if p.queued() == 0 && (p.segsInFlight == 0 || inflight == 0) {
			p.lastProgress = now
			continue
		}
		progress := p.lastProgress
		if lastRecv.After(progress) {
			progress = lastRecv
		}
		hinted := p.silentHint.After(progress) && now.Sub(progress) >= max(minHintSilence, 2*srtt)
		if now.Sub(progress) >= timeout || pto >= ptoFailed || hinted {
			p.failed, p.failedAt = true, now
			s.stats.pathFailures++
			s.logf("session %x: path %d potentially failed (no progress for %v, PTO count %d)", s.id[:4], p.id, now.Sub(progress), pto)
			s.pathEventLocked(p, PathFailed)
			s.reinjectLocked(p, now)
			continue
		}
		next = sooner(next, progress.Add(timeout))
		if p.tr == nil && pto < ptoFailed {
			// The second estimated probe timeout, three ptos after the last
			// packet: ptoEstimate's span for ptoFailed.
			next = sooner(next, max2(lastRecv, p.lastProgress).Add(3*(srtt+max(4*rttVar, time.Millisecond)+maxAckDelay)))
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
			s.obsLostLocked(now, p.id, g.seq) // delivered by the send loop (obsqueue.go)
		}
	}
	poke(s.wake)
}
