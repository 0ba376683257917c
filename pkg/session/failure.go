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
		// A path whose segments were copied at its probe timeout
		// (copyAtPTOLocked) and that heard nothing since still holds
		// them, though their copies may have been acknowledged: its
		// silence goes on counting towards its failure.
		//
		// A path the peer reports silent whose own data (what it sent
		// first) has not been acknowledged since the report's silence
		// began holds that data too, whatever else arrives on it: packets
		// from the peer show only that the path works towards this end.
		// On Mininet's two-path demo a client whose interface went down
		// still reached the server on that path's connection by another
		// route, so the server saw packets on it for the 4 s of the outage
		// and never failed it.
		ownProgress := max2(p.firstAckAt, p.firstBusyAt)
		ptoAt := max2(lastRecv, p.lastProgress).Add(probeTimeout(srtt, rttVar)) // tracer-less: quic-go's first probe timeout (ptosLocked)
		silentStuck := p.dg == nil && p.firstInFlight > 0 && p.silentHint.After(ownProgress)
		held := p.queued() > 0 || silentStuck || !p.ptoCopyAt.IsZero() && !lastRecv.After(p.ptoCopyAt)
		if !held && p.segsInFlight > 0 {
			var decideAt time.Time
			held, decideAt = p.quicHoldsLocked(now, &v)
			if !decideAt.IsZero() {
				// Not known yet: neither progress nor silence. If the peer
				// acknowledged other paths' data since it last acknowledged
				// what p sent first, its Acks are not what is missing, and
				// p's segments are copied at p's first probe timeout,
				// whether quic-go still holds them or not: a copy costs
				// only its bytes. (Without that evidence the Ack may be
				// what is missing, and a finished transfer sends nothing
				// more: TestHarnessIdleAfterTransfer.)
				next = sooner(next, decideAt)
				if s.snd.progressAt.After(ownProgress) {
					next = s.copyAtPTOLocked(p, now, pto, ptoAt, next)
				}
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
		hinted = hinted || silentStuck && now.Sub(ownProgress) >= max(minHintSilence, 2*srtt)
		if now.Sub(progress) >= timeout || pto >= ptoFailed || hinted {
			s.failLocked(p, now, progress, fmt.Sprintf("no progress for %v, PTO count %d", now.Sub(progress), pto))
			continue
		}
		next = s.copyAtPTOLocked(p, now, pto, ptoAt, next)
		if silentStuck {
			next = sooner(next, ownProgress.Add(max(minHintSilence, 2*srtt))) // after now: not failed above
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
	s.stats.reinjected += s.reinjectLocked(p, now, false)
}

// quicHoldsLocked reports whether quic-go still holds some of the segments
// p carried that the peer has not acknowledged (p.segsInFlight > 0), from
// p's view v at now; Session.mu is held. With a tracer, it does while its
// bytes in flight are not 0 or its probe timer has fired. Without one, it does while the session's
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
	if p.tr != nil {
		// quic-go probing (its probe timer fired) holds unacknowledged
		// packets, whatever its bytes in flight say: after it declared the
		// packets that carried p's last segments lost, bytes in flight read
		// 0 while the retransmissions waited for the probe timer, and a
		// path whose link had died was judged to hold nothing, for good
		// (TestFailoverDataMovesAtFirstPTO, tracer=true, 2 runs in 40 with
		// 1216-byte segments: the response stalled until its 30 s read
		// deadline). Without a tracer the probing is statsView.probing's.
		return v.inflight > 0 || v.ptoCount > 0, time.Time{}
	}
	if v.inflight > 0 {
		return true, time.Time{}
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

// copyAtPTOLocked queues for retransmission on the other paths the
// segments that p alone carries, once p's probe timer has fired (RFC 9002
// §6.2.4: "A probe packet MAY carry retransmitted unacknowledged data
// when new data is unavailable, when flow control does not permit new data
// to be sent, or to opportunistically reduce loss recovery delay"). The
// path stays live: a probe timeout "does not indicate packet loss" (§6.2),
// so the segments are copied, not moved, and whichever copy arrives first
// is delivered (version 4's frames are idempotent). This is Linux MPTCP's
// retransmission of a subflow's data at the connection level when the
// subflow's retransmission timer fires, rather than waiting for the path
// to fail: on a path whose RTT a handoff's fade had raised to 300 ms, the
// failure came 1.1-1.3 s after its last progress, the first probe timeout
// about 0.45 s after it (video-handoff's session log).
//
// It runs once per batch of segments: again only after p took more
// (p.bytesSent moved). A stream pinned to p keeps its data on p, which is
// live: its segments are not copied (they move when p fails). Only for paths whose segments quic-go retransmits
// (a datagram path's losses are the session's own, dgdata.go), and only
// while another live path can take the copies.
//
// pto is p's probe-timeout count (ptosLocked) and ptoAt when a path without
// a tracer reaches its first; it returns next, or ptoAt if that is sooner
// and still to come, for the caller's next check.
func (s *Session) copyAtPTOLocked(p *path, now time.Time, pto uint32, ptoAt, next time.Time) time.Time {
	if pto == 0 {
		if p.tr == nil && ptoAt.After(now) {
			next = sooner(next, ptoAt)
		}
		return next
	}
	if p.dg != nil || p.copiedSent == p.bytesSent {
		return next
	}
	other := false
	for _, q := range s.slots {
		if q != nil && q != p && !q.failed {
			other = true
		}
	}
	if !other {
		return next
	}
	p.copiedSent, p.ptoCopyAt = p.bytesSent, now
	s.stats.ptoCopies += s.reinjectLocked(p, now, true) // p is live: its pinned streams' data stays on it
	return next
}

// reinjectLocked queues for retransmission every unacknowledged segment that
// p carried and that no other live path carries, and returns how many.
// With keepPins it leaves out the segments whose stream is pinned to a
// live path (pinnedLiveLocked), for a p that is still live.
func (s *Session) reinjectLocked(p *path, now time.Time, keepPins bool) (n uint64) {
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
		if keepPins && s.pinnedLiveLocked(g) {
			continue
		}
		g.inRetrans = true
		s.snd.retrans = append(s.snd.retrans, g.seq)
		n++
		if s.obs != nil {
			s.obsLostLocked(now, p.id, g.seq) // delivered by the send pass (obsqueue.go)
		}
	}
	poke(s.wake)
	return n
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
