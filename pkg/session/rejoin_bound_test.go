package session

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Issue 31, item 6: "A path throttled to 1 kbit/s for 3 s: a rejoin
// started during the outage hung for the whole handshake timeout, and the
// path came back 5.3 s after the link did", and "A rejoin in progress never
// keeps a path down longer than the probe interval plus one handshake round
// trip after the link returns." Path 0 comes back after a 2 s outage, the
// client starts joining it again, the link goes dark at that moment for
// 3 s more (the rejoin dials into a black hole), then returns for good.
func TestRejoinDuringOutageDoesNotHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		startDownload(t, tb, 200<<20)
		time.Sleep(500 * time.Millisecond)
		darkDuringRejoin(t, tb)
		time.Sleep(3 * time.Second)
		tb.topo.Links[0].SetDown(false)
		// Data on path 0 again, on its old connection or a new one.
		el := untilPath0Carries(t, tb, 30*time.Second)
		// The bound: the rest of one rejoin attempt begun in the dark
		// (rejoinAttempt: 1 s on this 10 ms RTT path), the next ping and its
		// answer, and a handshake.
		limit := rejoinAttempt(10*time.Millisecond) + minPingInterval + 100*time.Millisecond
		t.Logf("path 0 carried data again %v after the link came back (limit %v; %d rejoins)", el, limit, tb.cli.Stats().Rejoins)
		if el > limit {
			t.Errorf("path 0 carried data again %v after the link's return, want ≤ %v", el, limit)
		}
	})
}
