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
		s.penaliseLocked(g, sn.slots[best], now)
	}
	return n
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
		p.tr.mu.Lock()
		cwnd, srtt := uint64(max(p.tr.cwnd, 0)), p.tr.srtt
		p.tr.mu.Unlock()
		if p.window.penalise(now, cwnd, srtt, s.snd.segSize) {
			s.stats.penalised++
		}
	}
}
