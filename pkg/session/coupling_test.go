package session

import (
	"math"
	"testing"
	"time"

	"github.com/quic-go/quic-go/qlog"
)

func lastPN(n int64) qlog.PacketNumber { return qlog.PacketNumber(n) }

// One reduction per congestion event, worked by hand: LIA on two paths, path
// 0's quic-go window 100,000 bytes. A loss makes its coupled window
// 100,000 × 0.5 (LIA's "as in standard TCP") × 0.7/0.5 (quic-go's β) =
// 70,000; a later loss of a packet sent before that reduction changes
// nothing; the loss of a packet sent after it halves again: 49,000.
func TestCouplingLossEpochs(t *testing.T) {
	sp := newScriptedPeer(t, &Config{Coupling: "lia"})
	s := sp.s
	a := sp.p
	a.window.init()
	b := &path{id: 1, slot: 1, tr: &tracer{srtt: 30 * time.Millisecond, cwnd: 100_000}, notify: make(chan struct{}, 1)}
	b.window.init()
	a.tr.srtt, a.tr.cwnd = 10*time.Millisecond, 100_000
	s.slots[1] = b
	loss := func(lostPN, sentPN int64) {
		a.tr.packetsLost++
		a.tr.lastLost, a.tr.lastSent = max(a.tr.lastLost, lastPN(lostPN)), max(a.tr.lastSent, lastPN(sentPN))
		s.mu.Lock()
		s.ccLossesLocked()
		s.mu.Unlock()
	}
	if !math.IsInf(a.window.bytes, 1) {
		t.Fatalf("window before any loss: %v, want unlimited", a.window.bytes)
	}
	steps := []struct {
		lost, sent int64
		want       float64
	}{
		{100, 200, 70_000}, // the first loss
		{150, 230, 70_000}, // sent before the reduction (200): same event
		{210, 260, 49_000}, // sent after it: a new event
	}
	for _, st := range steps {
		loss(st.lost, st.sent)
		if got := a.window.bytes; math.Abs(got-st.want) > 1e-6 {
			t.Errorf("after losing %d (sent up to %d): window %v, want %v", st.lost, st.sent, got, st.want)
		}
	}
	if !math.IsInf(b.window.bytes, 1) {
		t.Errorf("path 1 lost nothing but its window is %v", b.window.bytes)
	}
	if pi := a.info(1200, time.Now(), allPaths); pi.CongestionWindow != 49_000 {
		t.Errorf("the scheduler sees %d bytes, want 49000", pi.CongestionWindow)
	}
	// Acknowledgements grow it by LIA's increase and never past quic-go's.
	s.mu.Lock()
	s.ccAckedLocked(a, 1200, 100_000)
	grown := a.window.bytes
	for range 100_000 {
		s.ccAckedLocked(a, 1200, 100_000)
	}
	s.mu.Unlock()
	if grown <= 49_000 || grown > 49_000+1200 || a.window.bytes > 100_000 {
		t.Errorf("after one segment: %v (want within one MSS above 49000); after many: %v (want ≤ 100000)", grown, a.window.bytes)
	}
	s.mu.Lock()
	s.slots[1] = nil
	s.mu.Unlock()
	sp.close()
	if _, err := (&Config{Coupling: "cubic"}).withDefaults(); err == nil {
		t.Error("an unknown coupling was accepted")
	}
}

// The coupled window's reduction and its undo, fed quic-go's own qlog
// events in quic-go's order: it reports the loss, then reduces its window
// (0.7), then reports the new window. Worked by hand, LIA, quic-go window
// 100,000 bytes before the loss: the coupled window is cut from the window
// before quic-go's cut, 100,000 × 0.7 = 70,000 (not 70,000 × 0.7 = 49,000,
// which is quic-go's reduction twice). When quic-go then reports that lost
// packet acknowledged after all (recovery:spurious_loss), LIA's window
// returns to 100,000, as quic-go's NewReno undoes its own cutback
// (OnSpuriousLoss); "reno-friendly", and OLIA in the TCP-friendly mode
// (Config.RenoFriendly: Reno's β = 0.5, unscaled), keep their cut (50,000):
// TCP Reno does not undo.
func TestCouplingCutOnceAndUndo(t *testing.T) {
	for _, tc := range []struct {
		rule           string
		reno           bool
		afterCut, undo float64
	}{{"lia", false, 70_000, 100_000}, {"reno-friendly", false, 50_000, 50_000}, {"olia", true, 50_000, 50_000}, {"", true, 50_000, 50_000}} {
		sp := newScriptedPeer(t, &Config{Coupling: tc.rule, RenoFriendly: tc.reno})
		s, a := sp.s, sp.p
		a.window.init()
		rec := func(e qlog.MetricsUpdated) { a.tr.RecordEvent(e) }
		rec(qlog.MetricsUpdated{SmoothedRTT: 10 * time.Millisecond, MinRTT: 10 * time.Millisecond, CongestionWindow: 100_000})
		for pn := range qlog.PacketNumber(50) {
			a.tr.RecordEvent(qlog.PacketSent{Header: qlog.PacketHeader{PacketType: qlog.PacketType1RTT, PacketNumber: pn}, Raw: qlog.RawInfo{Length: 1200}})
		}
		a.tr.RecordEvent(qlog.PacketLost{Header: qlog.PacketHeader{PacketType: qlog.PacketType1RTT, PacketNumber: 20}})
		rec(qlog.MetricsUpdated{CongestionWindow: 70_000}) // quic-go's own reduction
		s.mu.Lock()
		s.ccLossesLocked()
		cut := a.window.bytes
		s.mu.Unlock()
		a.tr.RecordEvent(qlog.SpuriousLoss{PacketNumber: 20})
		s.mu.Lock()
		s.ccLossesLocked()
		undone := a.window.bytes
		st := s.stats
		s.mu.Unlock()
		if cut != tc.afterCut || undone != tc.undo {
			t.Errorf("%q (RenoFriendly %v): after the loss %v (want %v), after the spurious-loss report %v (want %v)", tc.rule, tc.reno, cut, tc.afterCut, undone, tc.undo)
		}
		if st.ccCuts != 1 || (st.ccUndos == 1) != (tc.undo > tc.afterCut) {
			t.Errorf("%s: %d cuts, %d undos", tc.rule, st.ccCuts, st.ccUndos)
		}
		sp.close()
	}
}
