package session

import (
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/sched"
)

// ECF's test on a stream's own bytes (pathfill.go): wait for the fast path
// when its window drains them and they arrive before they would on the
// slow path, which could send them now.
func TestWaitForFaster(t *testing.T) {
	ms := time.Millisecond
	fast := sched.PathInfo{SmoothedRTT: 20 * ms, CongestionWindow: 100_000, BytesInFlight: 100_000, MSS: 1200}
	slow := sched.PathInfo{SmoothedRTT: 100 * ms, CongestionWindow: 50_000, MSS: 1200}
	for _, c := range []struct {
		name       string
		fast, slow sched.PathInfo
		k          uint64
		want       bool
	}{
		// 100 KB in flight + 6 KB: 1.06 windows, 1.2 ms of waiting + 10 ms < 50 ms.
		{"small answer, fast path full", fast, slow, 6 << 10, true},
		// 100 KB + 1 MB: 11 windows, 211 ms + 10 ms > 50 ms.
		{"bulk", fast, slow, 1 << 20, false},
		// The slow path is not slower.
		{"equal RTTs", fast, func() sched.PathInfo { p := slow; p.SmoothedRTT = 20 * ms; return p }(), 6 << 10, false},
		// No RTT sample on the fast path yet.
		{"no sample", func() sched.PathInfo { p := fast; p.SmoothedRTT = 0; return p }(), slow, 6 << 10, false},
		// 3.56 windows in flight, queued and of the stream: 51 ms of waiting + 10 ms > 50 ms.
		{"fast path backlogged", func() sched.PathInfo { p := fast; p.BytesQueued = 250_000; return p }(), slow, 6 << 10, false},
	} {
		if got := waitForFaster(&c.fast, &c.slow, c.k); got != c.want {
			t.Errorf("%s: waitForFaster = %v, want %v", c.name, got, c.want)
		}
	}
}

// A request's answer beside a download that minRTT spreads over both paths
// takes the fast path, without a path preference: RFC 9000 §2.3, "a sender
// [...] uses [...] prioritization information to decide which streams to
// send data on"; here, which stream's data fills a segment for the slow
// path. As TestStreamNotHeldBySlowPath, but the scheduler, not a pin,
// picks the paths: each 6 KB answer must be read sooner than the slow
// path's one-way delay (150 ms). Typically 40-70 ms; without the rule
// (fillForLocked calling fillLocked alone) the answers go on whichever path
// asks next and the slowest took 330-360 ms.
func TestAnswerWaitsForFastPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: fastLink, Down: fastLink}, emu.PathSpec{Up: slowLink, Down: slowLink})
		defer tb.close()
		worst := slowestAnswer(t, tb)
		st := tb.srv.Stats()
		t.Logf("20 answers beside the download: the slowest took %v; %d streams passed over; server sent %v on the paths", worst, st.PassedOver, pathBytes(st))
		if len(st.Paths) < 2 || st.Paths[1].BytesSent < 256<<10 {
			t.Fatalf("the download did not use the slow path (%v): the test's premise does not hold", pathBytes(st))
		}
		if worst >= slowLink.Delay {
			t.Errorf("the slowest answer took %v, want less than the slow path's one-way delay of %v", worst, slowLink.Delay)
		}
	})
}

// slowestAnswer starts a download on tb and, once both paths carry it,
// asks for 20 answers of 6 KB beside it, 37 ms apart, wherever the
// scheduler puts them (no path preference); it returns the slowest
// answer's time, request to last byte read.
func slowestAnswer(t *testing.T, tb *testbed) time.Duration {
	t.Helper()
	startDownload(t, tb, 200<<20)
	time.Sleep(2 * time.Second) // both paths carry the download
	var worst time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		st, peer := askREQ(t, tb)
		go func() { peer.Write(make([]byte, 6<<10)); peer.Close() }()
		if _, err := io.ReadFull(st, make([]byte, 6<<10)); err != nil {
			t.Fatalf("reading answer %d: %v", i, err)
		}
		worst = max(worst, time.Since(start))
		time.Sleep(37 * time.Millisecond)
	}
	return worst
}

// With the redundant scheduler every segment goes on every path, and a
// path with nothing left to copy takes new data. That data is framed in
// priority order: framed for the slow path by the pass-over rule, the bulk
// filled the slow path's new segments, the fast path copied them first
// (its oldest uncarried), and each answer waited behind them on both
// paths. RFC 9000 §2.3: "a sender [...] uses [...] prioritization
// information to decide which streams to send data on". As
// TestAnswerWaitsForFastPath, under the redundant scheduler, whose copies
// keep both paths' queues full of the download: each 6 KB answer must be
// read within 4 round trips of the slower path (400 ms). 216-252 ms in
// three runs; with new data framed for the path that asked (11cf346) the
// slowest took 5.3 s.
func TestRedundantAnswerNotBehindDownload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Equal rates, as rpc-handoff's paths (10 Mbit/s, 50 and 100 ms
		// RTT): each path takes new data as often as the other.
		a := emu.LinkConfig{RateBps: 10e6, Delay: 25 * time.Millisecond}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 50 * time.Millisecond}
		cfg := &Config{Scheduler: "redundant"}
		tb := newTestbedOn(t, 1, cfg, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		worst := slowestAnswer(t, tb)
		st := tb.srv.Stats()
		t.Logf("20 answers beside the download, redundant: the slowest took %v; server sent %v on the paths", worst, pathBytes(st))
		if limit := 4 * 2 * b.Delay; worst >= limit {
			t.Errorf("the slowest answer took %v, want less than 4 round trips of the slower path, %v", worst, limit)
		}
	})
}
