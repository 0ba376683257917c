package session

import (
	"fmt"
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

// sendErrQuiet: a path failed while its sends failed for want of a route
// (senderr.go) is live again only after no send failed for this long: a
// few ping intervals (at least one of a path of up to 100 ms minimum RTT,
// probe.go) and the peer's ack delay, twice.
const sendErrQuiet = 200*time.Millisecond + 2*maxAckDelay

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
		lastRecv, srtt, rttVar, pto := v.lastRecv, v.srtt, v.rttVar, p.ptosLocked(now, v)
		timeout := max(s.cfg.FailureTimeout, 3*(srtt+4*rttVar))
		// A send to the peer on this path failed for want of a route at
		// errAt (senderr.go): what arrives meanwhile is no sign of a live
		// path, as the answers go nowhere.
		errAt := p.sendErrs.lastAt(p.conn.RemoteAddr())
		if p.failed {
			if lastRecv.After(p.failedAt) && pto == 0 {
				// Live again only once a packet came in after the last failed
				// send and no send failed for sendErrQuiet: the client's
				// pings (probe.go) are answered, so a route
				// still gone shows within it.
				if errAt.After(p.failedAt) && (!lastRecv.After(errAt) || now.Sub(errAt) < sendErrQuiet) {
					next = sooner(next, errAt.Add(sendErrQuiet))
					continue
				}
				p.failed = false
				p.lastProgress = now
				if p.tr == nil {
					p.graceUntil = now.Add(backedOffPTO(now.Sub(p.failedSince), srtt, rttVar))
				}
				s.logf("session %x: path %d live again", s.id[:4], p.id)
				s.pathEventLocked(p, PathRecovered)
			}
			continue
		}
		// Only a path that holds data it has not delivered can be failing:
		// queued for it, or segments the peer has not acknowledged that
		// quic-go has not delivered either. A path whose segments all
		// reached the peer but await the connection-level Ack (a lost Ack
		// datagram) is fine; the AckReq timer recovers the Ack.
		held := p.queued() > 0
		if !held && p.segsInFlight > 0 {
			var decideAt time.Time
			held, decideAt = p.quicHoldsLocked(now, &v)
			if !decideAt.IsZero() {
				// Not known yet: neither progress nor silence.
				next = sooner(next, decideAt)
				continue
			}
		}
		if !held {
			p.lastProgress = now
			continue
		}
		if now.Before(p.graceUntil) {
			// Recovered, but quic-go sends what it holds only when its
			// probe timer, backed off through the outage, fires: until
			// then neither progress nor silence.
			next = sooner(next, p.graceUntil)
			continue
		}
		progress := max2(p.lastProgress, lastRecv)
		unreachable := errAt.After(p.lastProgress) // its sends fail since its data last made progress
		if unreachable {
			progress = p.lastProgress
		}
		hinted := (p.silentHint.After(progress) || unreachable) && now.Sub(progress) >= max(minHintSilence, 2*srtt)
		if now.Sub(progress) >= timeout || pto >= ptoFailed || hinted {
			s.failLocked(p, now, progress, fmt.Sprintf("no progress for %v, PTO count %d", now.Sub(progress), pto))
			continue
		}
		next = sooner(next, progress.Add(timeout))
		if unreachable {
			next = sooner(next, progress.Add(max(minHintSilence, 2*srtt)))
		}
		if p.tr == nil && pto < ptoFailed {
			// The second estimated probe timeout, three ptos after the last
			// packet: ptoEstimate's span for ptoFailed.
			next = sooner(next, progress.Add(3*probeTimeout(srtt, rttVar)))
		}
	}
	return next
}

// failLocked marks p potentially failed at now, its last progress at
// since, and reinjects its data; Session.mu is held.
func (s *Session) failLocked(p *path, now, since time.Time, why string) {
	p.failed, p.failedAt, p.failedSince = true, now, since
	s.stats.pathFailures++
	s.logf("session %x: path %d potentially failed (%s)", s.id[:4], p.id, why)
	s.pathEventLocked(p, PathFailed)
	s.reinjectLocked(p, now)
}

// quicHoldsLocked reports whether quic-go still holds some of the segments
// p carried that the peer has not acknowledged (p.segsInFlight > 0), from
// p's view v at now; Session.mu is held. With a tracer, it does while its
// bytes in flight are not 0. Without one, it does while the session's
// estimate of them is not 0 (what it took within the latest RTT before
// the path last heard from the peer, or since), or while it probes
// (statsView.probing). A lost packet that quic-go sends again does not
// pass the limiter, so the estimate drops its segments one RTT after they
// were first taken, though quic-go holds them until the peer acknowledges
// them (found on video-handoff: a handoff's lossy phase left a path's last
// segments there, and when the link died the path never failed; the data
// waited for the link's return, 13-20 s). If neither shows, only quic-go's
// probes can tell, due one probe timeout after its last ack-eliciting
// packet, later if it first sends a lost packet again on its loss timer
// (9/8 RTT after it) or if its timer is backed off: until the 2-PTO rule's
// own deadline (3 PTOs after the path last heard from the peer), decideAt
// is that deadline and the caller counts neither progress nor silence.
// Without a probe by then, quic-go holds nothing: the Ack is what is
// missing.
func (p *path) quicHoldsLocked(now time.Time, v *linkView) (held bool, decideAt time.Time) {
	if p.tr != nil || v.inflight > 0 {
		return v.inflight > 0, time.Time{}
	}
	if p.sv.probing() {
		return true, time.Time{}
	}
	due := max2(v.lastRecv, p.lastProgress).Add(3 * probeTimeout(v.srtt, v.rttVar))
	if now.Before(due) {
		return false, due
	}
	return false, time.Time{}
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

// backedOffPTO is the interval of quic-go's probe timer after silent
// without an acknowledgement: the probe timeout doubled once per timeout
// fired in that span (ptoEstimate), at most 2^6 times. A packet from the
// peer does not reset it; only an acknowledgement of quic-go's own packets
// does, which a path that just came back has yet to get (an outage of 600
// ms on a 30 ms path: the peer's probe arrives at once, quic-go's own next
// probe 200 ms later; TestPathEventsOnOutage saw the path fail again
// in between, and its queued data moved twice).
func backedOffPTO(silent, srtt, rttVar time.Duration) time.Duration {
	n := min(ptoEstimate(silent, srtt, rttVar), 6)
	return probeTimeout(srtt, rttVar) << n
}
