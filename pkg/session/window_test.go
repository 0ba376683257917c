package session

import (
	"math"
	"testing"
	"time"
)

// The session window, worked by hand (MSS 1200 bytes, srtt 10 ms, quic-go
// cwnd 100,000 bytes):
//
//	penalise at 0 ms:  min(+Inf, 100000)/2        = 50,000
//	penalise at 5 ms:  within one RTT of the last  = 50,000 (no change)
//	penalise at 10 ms: 50,000/2                    = 25,000
//	12,500 bytes acked: 25,000 + 1200·12500/25000 = 25,600
//	a 3,000-byte cwnd halves to max(1500, 2·1200) = 2,400
func TestSessionWindowWorkedExample(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	const mss, cwnd, srtt = 1200, 100_000, 10 * time.Millisecond
	var w sessWindow
	w.init()
	if got := w.limit(cwnd); got != cwnd {
		t.Fatalf("unlimited window limits to %d", got)
	}
	steps := []struct {
		at   time.Duration
		want float64
		did  bool
	}{{0, 50_000, true}, {5 * time.Millisecond, 50_000, false}, {10 * time.Millisecond, 25_000, true}}
	for _, st := range steps {
		did := w.penalise(t0.Add(st.at), cwnd, srtt, mss)
		if did != st.did || w.bytes != st.want {
			t.Errorf("penalise at %v: %v, window %v; want %v, %v", st.at, did, w.bytes, st.did, st.want)
		}
	}
	if got := w.limit(cwnd); got != 25_000 {
		t.Errorf("limit = %d, want 25000", got)
	}
	w.acked(12_500, cwnd, mss)
	if w.bytes != 25_600 {
		t.Errorf("after 12,500 bytes acked: %v, want 25600", w.bytes)
	}
	var small sessWindow
	small.init()
	small.penalise(t0, 3000, srtt, mss)
	if small.bytes != 2400 {
		t.Errorf("floor: %v, want 2400", small.bytes)
	}
	// Grown past quic-go's window, the limit is lifted.
	for range 1000 {
		w.acked(50_000, cwnd, mss)
	}
	if !math.IsInf(w.bytes, 1) || w.limit(cwnd) != cwnd {
		t.Errorf("window %v not lifted after growing past cwnd", w.bytes)
	}
}

// "penalisation halves the slow path's session window when it holds up the
// window": the path that carried the blocking segment is halved, the path
// the copy goes on is not.
func TestPenaliseCarrier(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	s := sp.s
	fast := sp.p
	fast.tr.srtt, fast.tr.cwnd = 10*time.Millisecond, 80_000
	slow := &path{id: 1, slot: 1, tr: &tracer{srtt: 100 * time.Millisecond, cwnd: 60_000}, notify: make(chan struct{}, 1)}
	slow.window.init()
	fast.window.init()
	s.slots[1] = slow
	g := &segment{seq: 0, size: 1200, sentOn: 1 << 1}
	s.mu.Lock()
	s.penaliseLocked(g, 0, time.Now())
	s.mu.Unlock()
	if slow.window.bytes != 30_000 || !math.IsInf(fast.window.bytes, 1) {
		t.Errorf("slow path window %v (want 30000), fast %v (want unlimited)", slow.window.bytes, fast.window.bytes)
	}
	if pi := slow.info(1200, time.Now(), allPaths); pi.CongestionWindow != 30_000 {
		t.Errorf("the scheduler sees a window of %d, want 30000", pi.CongestionWindow)
	}
	s.mu.Lock()
	s.slots[1] = nil
	s.mu.Unlock()
	sp.close()
}
