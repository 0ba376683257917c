package session

import (
	"math/bits"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// maxOpportunistic bounds the copies one opportunistic round sends.
const maxOpportunistic = 16

// opportunisticLocked is MPTCP's opportunistic retransmission (Raiciu et
// al., "How Hard Can It Be? Designing and Implementing a Deployable
// Multipath TCP", NSDI 2012, §4.2): "when the connection-level receive
// window is the limit, [send] the segment that blocks the window again on
// the subflow that has room". It acts only when the peer's window is full
// (new data waits for it) and nothing is queued for retransmission. From
// the oldest unacknowledged segment up, each segment whose fastest carrier
// is slower than the fastest path with room, and that is overdue on it,
// goes again on that path, and its carriers are penalised; it stops at the
// first segment it can neither skip nor rescue. It skips the segments of a
// stream pinned to a live path (pinnedLiveLocked). A segment goes at most
// once on each path. It returns the copies sent, and when the segment it
// stopped at becomes overdue (the zero time: none).
//
// Overdue is where this departs from Linux, which re-sends the blocking
// segment at once: a segment is overdue once it has been out on its
// carrier for longer than that path's minimum RTT, the soonest its
// acknowledgement could have come. Before that, a copy cannot be known to
// be needed. A slower path holds up a small receive window all the time,
// not only when it fails; re-sending at once spends the fast path on copies
// and halves the slow path at every turn. On edar-handoff (128 KB receive
// buffer, 5 seeds) minRTT kept 9.23 Mbit/s outside the handoffs with
// Linux's rule against 10.65 without reinjection; with this one it keeps
// 10.61 and still gets 8.07 in the handoff windows (6.40 without).
// docs/opportunistic.md has the figures of the other rules tried.
func (s *Session) opportunisticLocked(now time.Time) (int, time.Time) {
	sn := &s.snd
	if !s.dataBlockedLocked() || len(sn.retrans) > 0 {
		return 0, time.Time{}
	}
	var rtt [sched.MaxPaths]time.Duration    // by slot; 0 = no path or no sample
	var minRTT [sched.MaxPaths]time.Duration // by slot
	var fastest time.Duration                // the lowest RTT among paths with room
	for i := range sn.snap {
		pi := &sn.snap[i]
		rtt[sn.slots[i]] = pi.SmoothedRTT
		minRTT[sn.slots[i]] = pi.MinRTT
		if pi.SendingAllowed() && pi.SmoothedRTT > 0 && (fastest == 0 || pi.SmoothedRTT < fastest) {
			fastest = pi.SmoothedRTT
		}
	}
	if fastest == 0 {
		return 0, time.Time{}
	}
	n := 0
	end := min(sn.nextSeq, sn.base+4*maxOpportunistic)
	for q := sn.base; q < end && n < maxOpportunistic; q++ {
		g := sn.get(q)
		if !g.sent {
			break
		}
		if g.acked || s.pinnedLiveLocked(g) {
			continue // a pinned stream's segment stays on its path while that is live
		}
		var carrier, due time.Duration // the fastest path that carries g, and its minimum RTT
		for set := g.sentOn; set != 0; {
			slot := bits.TrailingZeros64(set)
			set &^= 1 << uint(slot)
			if r := rtt[slot]; r > 0 && (carrier == 0 || r < carrier) {
				carrier, due = r, minRTT[slot]
			}
		}
		if carrier != 0 && carrier <= fastest {
			continue // already on a path as fast as any with room
		}
		if carrier != 0 && now.Sub(g.sentAt) < due {
			return n, g.sentAt.Add(due) // its acknowledgement may still come in time
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
			break // no room on a faster path: the next acknowledgement brings another round
		}
		s.enqueueLocked(sn.slots[best], best, g, now)
		s.stats.opportunistic++
		n++
		s.penaliseLocked(g, sn.slots[best], now)
	}
	return n, time.Time{}
}

// penaliseLocked halves the session window of every path but the one in
// slot keep that carried g, the segment that held up the peer's window:
// Linux MPTCP's penalisation, which pairs with its opportunistic
// retransmission ("the subflow that caused the blocking gets its
// congestion window halved", Raiciu et al., NSDI 2012, §4.2).
func (s *Session) penaliseLocked(g *segment, keep int, now time.Time) {
	for set := g.sentOn &^ (1 << uint(keep)); set != 0; {
		slot := bits.TrailingZeros64(set)
		set &^= 1 << uint(slot)
		p := s.slots[slot]
		if p == nil {
			continue
		}
		cwnd, srtt := p.cwndLocked()
		if p.window.penalise(now, cwnd, srtt, s.snd.segSize) {
			s.stats.penalised++
		}
	}
}
