package session

import (
	"time"
)

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
				r, _ := p.rttLocked()
				srtt = max(srtt, r)
			}
		}
		sn.probeBackoff = max(minProbe, 2*srtt+s.cfg.AckDelay)
		// An Ack is overdue one backoff after the later of the last Ack and
		// the last progress (progressAt: the first send after nothing was
		// in flight, or the last acknowledgement). After an idle spell the
		// last Ack is old, but the data just sent is not: counting from the
		// last Ack alone made the first segment after idle ask for an Ack
		// at once (issue 19, finding 5).
		sn.probeAt = max2(sn.lastAck, sn.progressAt, now.Add(-sn.probeBackoff)).Add(sn.probeBackoff)
	}
	if now.Before(sn.probeAt) {
		return nil, sn.probeAt
	}
	sn.probeBackoff = min(2*sn.probeBackoff, maxProbe)
	sn.probeAt = now.Add(sn.probeBackoff)
	s.stats.ackRequests++
	return s.ackPathLocked(), sn.probeAt
}

// sooner is the earlier of two deadlines, the zero time meaning none.
func sooner(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// max2 is the latest of its times.
func max2(a time.Time, bs ...time.Time) time.Time {
	for _, b := range bs {
		if b.After(a) {
			a = b
		}
	}
	return a
}
