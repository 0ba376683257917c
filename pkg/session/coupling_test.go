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
	if pi := a.info(1200); pi.CongestionWindow != 49_000 {
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
