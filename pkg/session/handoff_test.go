package session

import (
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/sched"
)

// handoffRun downloads over the hetero pair with path 0 (the faster) cut
// from outStart to outEnd, sampling the client every 10 ms. It returns when
// link A (path 0, or a path that joined again on it) received data again
// after the outage (relative to outEnd; -1 if never), and the longest time in-order delivery stood still while the
// download ran.
func handoffRun(t *testing.T, outStart, outEnd time.Duration) (back, maxStall time.Duration) {
	back = -1
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond, Outages: []emu.Window{{Start: outStart, End: outEnd}}}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		start := time.Now()
		st, _ := tb.cli.OpenStream()
		st.Write([]byte("GET"))
		st.Close()
		peer := accept(t, tb.srv, time.Second)
		readAll(t, peer, time.Second)
		const size = 40 << 20
		go func() { peer.Write(make([]byte, size)); peer.Close() }()
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, st); close(done) }()
		var lastDelivered uint64
		lastMove := time.Now()
		var onA uint64
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			now := time.Since(start)
			stats := tb.cli.Stats()
			if stats.DeliveredBytes != lastDelivered {
				lastDelivered, lastMove = stats.DeliveredBytes, time.Now()
			} else if d := time.Since(lastMove); d > maxStall {
				maxStall = d
				if testing.Verbose() {
					t.Logf("stall of %v at %v", d, now)
				}
			}
			var a uint64 // on link A: path 0, or the path that replaced it
			for _, p := range stats.Paths {
				if p.ID != sched.PathID(1) {
					a += p.BytesReceived
				}
			}
			if now > outEnd && back < 0 && a > onA {
				back = now - outEnd
			}
			onA = a
		}
	})
	return back, maxStall
}

// Issue 11: "after a 5 s outage on the faster path, it carries data again
// within 0.5 s of the link's return; during the outage the transfer
// continues on the other path with no stall longer than max(300 ms, 3 RTT
// of the surviving path)".
func TestOutageRecovery(t *testing.T) {
	back, stall := handoffRun(t, 2*time.Second, 7*time.Second)
	t.Logf("path 0 carried data again %v after the link's return; longest stall %v", back, stall)
	if back < 0 || back > 500*time.Millisecond {
		t.Errorf("path 0 back %v after the link's return, want ≤ 500 ms", back)
	}
	if stall > 300*time.Millisecond {
		t.Errorf("longest stall %v, want ≤ max(300 ms, 3 × 30 ms)", stall)
	}
}
