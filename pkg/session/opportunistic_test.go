package session

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Opportunistic retransmission (Raiciu et al., NSDI 2012, §4.2): "when the
// connection-level receive window is the limit, [send] the segment that
// blocks the window again on the subflow that has room", and penalise the
// subflow that held it. Here the copy waits until the segment is overdue:
// out on its carrier for longer than that path's minimum RTT. Worked by
// hand: the blocking segment left on the slow path (min RTT 80 ms, quic-go
// cwnd 60,000 bytes) at 0 ms; at 50 ms nothing is sent and the next look is
// due at 80 ms; at 80 ms the copy goes on the fast path and the slow path's
// window halves to 30,000 bytes.
func TestOpportunisticWaitsForOverdue(t *testing.T) {
	sp, fast, slow, g, t0 := newBlockedBySlowPath(t, nil)
	s := sp.s

	n, next := s.opportunisticLocked(t0.Add(50 * time.Millisecond))
	if n != 0 || !next.Equal(t0.Add(80*time.Millisecond)) || len(fast.queue) != 0 {
		t.Errorf("at 50 ms: %d copies, next look at %v; want none, and a look at 80 ms", n, next.Sub(t0))
	}
	if slow.window.bytes != unlimited {
		t.Errorf("at 50 ms the slow path was penalised to %v", slow.window.bytes)
	}
	n, next = s.opportunisticLocked(t0.Add(80 * time.Millisecond))
	if n != 1 || !next.IsZero() || len(fast.queue) != 1 || fast.queue[0] != g {
		t.Errorf("at 80 ms: %d copies (fast path queue %d), next %v; want the blocking segment on the fast path", n, len(fast.queue), next)
	}
	if slow.window.bytes != 30_000 {
		t.Errorf("slow path window %v after the copy, want 30000 (half of quic-go's 60,000)", slow.window.bytes)
	}
	// A second look finds the segment on the fast path: nothing more.
	if n, _ := s.opportunisticLocked(t0.Add(90 * time.Millisecond)); n != 0 {
		t.Errorf("at 90 ms: %d more copies", n)
	}
	closeBlockedBySlowPath(sp)
}

// newBlockedBySlowPath sets up the opportunistic tests: a scripted peer's
// session with a fast path (10 ms) and a slow one (100 ms, slot 1), one
// segment g of stream st (nil: none) sent on the slow path at t0, and
// framed data held up by the peer's window. It returns with s.mu held;
// closeBlockedBySlowPath undoes it.
func newBlockedBySlowPath(t *testing.T, st *Stream) (sp *scriptedPeer, fast, slow *path, g *segment, t0 time.Time) {
	sp = newScriptedPeer(t, &Config{OpportunisticReinjection: true})
	s := sp.s
	fast = sp.p
	fast.tr.srtt, fast.tr.cwnd = 10*time.Millisecond, 100_000
	fast.window.init()
	slow = &path{id: 1, slot: 1, tr: &tracer{srtt: 100 * time.Millisecond, cwnd: 60_000}, notify: make(chan struct{}, 1)}
	slow.window.init()
	t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

	s.mu.Lock()
	s.slots[1], s.npaths = slow, 2
	sn := &s.snd
	g = &segment{seq: 0, size: 1200, data: make([]byte, 1200), sent: true, sentOn: 1 << 1, sentAt: t0, stream: st}
	sn.segs, sn.base, sn.nextSeq, sn.lowestUnsent, sn.inflightBytes = []*segment{g}, 0, 1, 1, 1200
	sn.pend.Append(make([]byte, 100)) // framed, and held up by the peer's window:
	sn.pendOff, sn.segLimit = 1200, 1200
	sn.snap = append(sn.snap[:0],
		sched.PathInfo{ID: 0, SmoothedRTT: 10 * time.Millisecond, MinRTT: 8 * time.Millisecond, CongestionWindow: 100_000, MSS: 1200},
		sched.PathInfo{ID: 1, SmoothedRTT: 100 * time.Millisecond, MinRTT: 80 * time.Millisecond, CongestionWindow: 60_000, BytesInFlight: 1200, MSS: 1200})
	sn.slots = append(sn.slots[:0], 0, 1)
	return sp, fast, slow, g, t0
}

// closeBlockedBySlowPath removes the slow path, releases s.mu and closes
// the scripted peer.
func closeBlockedBySlowPath(sp *scriptedPeer) {
	sp.s.slots[1], sp.s.npaths = nil, 1
	sp.s.mu.Unlock()
	sp.close()
}

// TestOpportunisticKeepsPinnedData: a segment of a stream pinned to the
// slow path (Stream.SetPathPreference with pin: "only on that path while it
// is live") is not sent again on the fast path, however overdue, and its
// path is not penalised; once the slow path has failed it may go.
func TestOpportunisticKeepsPinnedData(t *testing.T) {
	st := &Stream{}
	st.prio.path, st.prio.pref = 1, sched.PinPath // the slow path
	sp, fast, slow, _, t0 := newBlockedBySlowPath(t, st)
	s := sp.s

	if n, _ := s.opportunisticLocked(t0.Add(500 * time.Millisecond)); n != 0 || len(fast.queue) != 0 || slow.window.bytes != unlimited {
		t.Errorf("pinned to the live slow path: %d copies (fast path queue %d), slow path window %v; want none, unpenalised",
			n, len(fast.queue), slow.window.bytes)
	}
	slow.failed = true
	if n, _ := s.opportunisticLocked(t0.Add(600 * time.Millisecond)); n != 1 || len(fast.queue) != 1 {
		t.Errorf("its path failed: %d copies (fast path queue %d), want the segment on the fast path", n, len(fast.queue))
	}
	closeBlockedBySlowPath(sp)
}
