package session

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// ackReceivedLocked processes a connection-level acknowledgement at now;
// Session.mu is held. An error is a connection error.
func (s *Session) ackReceivedLocked(a *wire.Ack, now time.Time) error {
	sn := &s.snd
	if a.Cum > sn.nextSeq {
		return fmt.Errorf("%w: ack for segment %d, only %d sent", ErrProtocol, a.Cum, sn.nextSeq)
	}
	if n := len(a.Ranges); n > 0 && a.Ranges[n-1].End > sn.nextSeq {
		return fmt.Errorf("%w: sack beyond segment %d", ErrProtocol, sn.nextSeq)
	}
	var v ackView
	for q := sn.base; q < a.Cum; q++ {
		g := sn.segs[0]
		if !g.sent {
			return fmt.Errorf("%w: ack for unsent segment %d", ErrProtocol, q)
		}
		s.ackedLocked(g, now, &v)
		sn.segs[0] = nil
		sn.segs = sn.segs[1:]
		sn.base++
	}
	// Only what a range newly acknowledges is visited: sn.sacked holds
	// what earlier SACK ranges acknowledged above base, so an Ack that
	// names thousands of acknowledged segments costs its ranges, not their
	// length (issue 29; RFC 9002's and quic-go's sent-packet history skip
	// acknowledged packets in the same way).
	sn.sacked.removeBelow(sn.base)
	for _, r := range a.Ranges {
		start := max(r.Start, sn.base)
		if start >= r.End {
			continue
		}
		err := sn.sacked.gaps(start, r.End, func(lo, hi uint64) error {
			for q := lo; q < hi; q++ {
				g := sn.get(q)
				sn.ackVisits++
				if !g.sent {
					return fmt.Errorf("%w: sack for unsent segment %d", ErrProtocol, q)
				}
				s.ackedLocked(g, now, &v)
			}
			return nil
		})
		if err != nil {
			return err
		}
		sn.sacked.add(start, r.End)
	}
	if sn.lowestUnsent < sn.base {
		sn.lowestUnsent = sn.base
	}
	sn.raiseLimit()
	s.streams.raiseConnMax(a.MaxData)
	sn.lastAck, sn.probeAt, sn.probeBackoff = now, time.Time{}, 0
	if len(sn.segs) == 0 {
		sn.segs = sn.segs[:0:0] // let the old backing array go
	}
	s.closeWait.signal() // Session.Close waits for acknowledgements
	return nil
}

// ackView holds the paths' tracer values read for one Ack: each path's
// tracer lock is taken once per Ack, not once per acknowledged segment.
type ackView struct {
	read uint64 // slots whose values are read
	srtt [sched.MaxPaths]time.Duration
	cwnd [sched.MaxPaths]uint64 // bytes
}

// of returns p's smoothed RTT and congestion window, reading p's tracer
// (or ConnectionStats) the first time in this Ack.
func (v *ackView) of(p *path) (time.Duration, uint64) {
	if bit := uint64(1) << uint(p.slot); v.read&bit == 0 {
		v.cwnd[p.slot], v.srtt[p.slot] = p.cwndLocked()
		v.read |= bit
	}
	return v.srtt[p.slot], v.cwnd[p.slot]
}

// ackedLocked marks g acknowledged and credits every path that carried it;
// v caches the paths' tracer values for the Ack being processed.
func (s *Session) ackedLocked(g *segment, now time.Time, v *ackView) {
	if g.acked {
		return
	}
	g.acked = true
	n := g.size
	f := frameLen(g)
	s.snd.progressAt = now
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
		p.outstanding -= min(f, p.outstanding)
		p.bytesAcked += n
		// A segment sent again elsewhere (a copy at a probe timeout, a
		// reinjection, a datagram declared lost) says nothing of the path
		// it was first sent on: the copy may be what arrived.
		first := int(g.first) == slot+1
		credit := !first || !g.resent
		if first {
			p.firstInFlight--
			if credit {
				p.firstAckAt = now
			}
		}
		if p.dg != nil {
			p.dg.ackedLocked(g, now)
		}
		if credit {
			p.lastProgress = now
		}
		srtt, cwnd := v.of(p)
		p.window.acked(n, cwnd, s.snd.segSize)
		s.ccAckedLocked(p, n, cwnd)
		p.rate.acked(now, n, max(srtt, 10*time.Millisecond))
		if s.obs != nil {
			s.obsAckedLocked(now, p.id, g.seq, n, g.sentAt) // delivered by the send pass (obsqueue.go)
		}
	}
	ackRefs(g) // the writer copies the data under s.mu, so nothing else reads it
	g.data, g.refs = nil, nil
}
