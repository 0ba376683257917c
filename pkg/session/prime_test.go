package session

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// primeRun downloads over a path A (10 Mbit/s, 50 ms RTT) and a path B
// (10 Mbit/s, 100 ms RTT) that goes through an EdAR-style handoff's lossy
// phase from primeFrom to primeTo (emu.Handoff: its rate falls to 1 Mbit/s,
// its RTT rises to 250 ms and its loss to 30%), with a 128 KB receive
// window and minRTT, as video-handoff's paths do. It returns the goodput
// in the second half of that phase, the longest time in-order delivery
// stood still in it, and the share of the server's scheduler snapshots of
// B in it that found segments waiting in B's writer (handed to B, not yet
// taken by quic-go).
func primeRun(t *testing.T, seed int64) (mbps float64, stall time.Duration, waiting float64) {
	var bPath atomic.Pointer[path] // the server's B, once known
	var snaps, queued int          // B's snapshots in the measured half; guarded by the server's Session.mu
	var from, to time.Time         // the measured half, set before any session starts
	viewTap = func(p *path, now time.Time, v linkView) {
		if p == bPath.Load() && now.After(from) && now.Before(to) {
			snaps++
			if p.queued() > 0 {
				queued++
			}
		}
	}
	defer func() { viewTap = nil }()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		half := primeFrom + (primeTo-primeFrom)/2
		from, to = start.Add(half), start.Add(primeTo)
		a := emu.LinkConfig{RateBps: 10e6, Delay: 25 * time.Millisecond, Loss: 0.001}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 50 * time.Millisecond, Loss: 0.001}
		b.Schedule = emu.Handoff(primeFrom, time.Hour, b, primeTo-primeFrom)
		cfg := &Config{RecvWindow: 128 << 10}
		tb := newTestbedOn(t, seed, cfg, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		for len(tb.srv.Paths()) < 2 {
			time.Sleep(time.Millisecond)
		}
		tb.srv.mu.Lock()
		for _, p := range tb.srv.slots {
			if p != nil && p.slot == 1 {
				bPath.Store(p)
			}
		}
		tb.srv.mu.Unlock()
		st, _ := tb.cli.OpenStream()
		st.Write([]byte("GET"))
		st.Close()
		peer := accept(t, tb.srv, time.Second)
		readAll(t, peer, time.Second)
		go func() { peer.Write(make([]byte, 64<<20)); peer.Close() }()
		go func() {
			buf := make([]byte, 64<<10)
			for {
				if _, err := st.Read(buf); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Until(from))
		d0 := tb.cli.Stats().DeliveredBytes
		last, lastMove := d0, time.Now()
		for time.Now().Before(to) {
			time.Sleep(10 * time.Millisecond)
			if d := tb.cli.Stats().DeliveredBytes; d != last {
				last, lastMove = d, time.Now()
			}
			stall = max(stall, time.Since(lastMove))
		}
		mbps = float64(last-d0) * 8 / (primeTo - half).Seconds() / 1e6
	})
	if snaps < 100 {
		t.Fatalf("seed %d: %d scheduler snapshots of B in the measured half of its lossy phase, want ≥ 100", seed, snaps)
	}
	waiting = float64(queued) / float64(snaps)
	return mbps, stall, waiting
}

const (
	primeFrom = 2 * time.Second  // B's lossy phase begins
	primeTo   = 10 * time.Second // and ends (B is unusable after it)
)

// TestPullRuleSparesSlowPath: without a tracer, the pull rule (a path that
// pulled takes a segment beyond its estimated window) applies to the paths
// that refill their windows soonest only (primeBound). Before, it applied to
// every path: in the lossy phase of a handoff, B (a 5-10 KB window, a
// 200-250 ms RTT, 30% loss) was handed a segment it had no room for at
// nearly every decision, and it waited there for B's next acknowledgement
// (or quic-go's retransmissions) while A could have sent it at once: B had
// segments waiting in its writer in 0.89-0.91 of the scheduler's snapshots
// of it (mean of 3 seeds), against 0.11-0.35 with the rule on A only and 0
// with a tracer. What remains is the estimate's: it leaves out what quic-go
// sends again (signals.go), about a packet of B's window in this phase.
//
// The share of one run depends on which goroutine runs between a decision
// and B's writer, so it varies from run to run: over 15 runs of seeds 1-3
// it was 0.00-0.78 a seed at d04ad95f (mean 0.29), and 0.00-0.85 (mean
// 0.32) once the paths' readers posted their segments to the loop
// (rxbatch.go), whose means of 3 seeds then passed 0.5 in 1 run of 15 here
// and in CI. The mean of 12 seeds passes 0.5 in about 0.15% of runs by a
// bootstrap of those 45 shares; the bug gives 0.89-0.91 a seed.
func TestPullRuleSparesSlowPath(t *testing.T) {
	const seeds = 12
	var sum float64
	for seed := int64(1); seed <= seeds; seed++ {
		mbps, stall, waiting := primeRun(t, seed)
		sum += waiting
		t.Logf("seed %d: %.2f Mbit/s and a longest stall of %v in the second half of B's lossy phase; segments waiting on B in %.2f of its snapshots", seed, mbps, stall, waiting)
	}
	// The share depends on which goroutine runs between a decision and
	// B's writer. Under the race detector, which slows every goroutine
	// unevenly, a444123's means of 3 seeds were 0.20-0.46 (one seed 0.55)
	// and now's 0.20-0.53 against 0.11-0.46 without it; the bug this
	// guards against gives 0.89-0.91 either way.
	bound := 0.5
	if raceEnabled {
		bound = 0.7
	}
	if mean := sum / seeds; mean > bound {
		t.Errorf("B had segments waiting in its writer in %.2f of its snapshots (mean of %d seeds), want ≤ %.1f: B is handed segments beyond its window", mean, seeds, bound)
	}
}

// TestPrimeBoundFloor: the pull rule's bound is never below the fastest
// path's one-way delay per segment (primeBound). rtt10x-256k's 100 ms path,
// with the srtt and window the scheduler saw (120 ms, 203,520 bytes: a
// segment beyond its window waits 0.7 ms), is covered next to its 10 ms
// path (17 ms with its queue, 72,960 bytes), though that refills sooner;
// a path in a handoff's lossy phase (300 ms, a 5 KB window: 70 ms) is not,
// next to a 50 ms path with a 60 KB window.
func TestPrimeBoundFloor(t *testing.T) {
	const mss = 1200
	type link struct {
		srtt time.Duration
		cwnd uint64
	}
	for _, c := range []struct {
		name       string
		fast, slow link
		want       bool
	}{
		{"rtt10x-256k", link{17 * time.Millisecond, 72_960}, link{120 * time.Millisecond, 203_520}, true},
		{"handoff's lossy phase", link{50 * time.Millisecond, 60_000}, link{300 * time.Millisecond, 5_120}, false},
	} {
		b := min(refill(c.fast.srtt, c.fast.cwnd), refill(c.slow.srtt, c.slow.cwnd)).floored(c.fast.srtt, mss)
		if !b.covers(c.fast.srtt, c.fast.cwnd) {
			t.Errorf("%s: the faster path is not covered", c.name)
		}
		if got := b.covers(c.slow.srtt, c.slow.cwnd); got != c.want {
			t.Errorf("%s: the slower path covered: %v, want %v", c.name, got, c.want)
		}
	}
	if primeAll.floored(time.Second, mss) != primeAll {
		t.Error("the floor narrowed primeAll")
	}
}
