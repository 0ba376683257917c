package session_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	_ "github.com/mpqsched/mpqsched/sched/all"
)

// hetero is the built-in heterogeneous pair: 20 Mbit/s with a 10 ms RTT and
// 10 Mbit/s with a 30 ms RTT, both directions alike.
func hetero(loss float64) []emu.PathSpec {
	a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond, Loss: loss}
	b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond, Loss: loss}
	return []emu.PathSpec{{Up: a, Down: a}, {Up: b, Down: b}}
}

// transfer runs one download inside a synctest bubble (virtual time) and
// fails the test unless it completed with a matching SHA-256.
func transfer(t *testing.T, r bench.Run) (res metrics.Result, det *bench.Detail) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var err error
		res, det, err = bench.Transfer(context.Background(), r)
		if err != nil {
			t.Fatalf("%s: %v", r.Scheduler, err)
		}
		if !res.SHA256OK {
			t.Fatalf("%s: SHA-256 mismatch", r.Scheduler)
		}
	})
	return res, det
}

// Every registered scheduler moves 50 MB intact over two heterogeneous
// paths. Each path carries data unless the scheduler is allowed to leave the
// slow one idle (the waiting schedulers may, on these paths).
func TestEveryScheduler50MB(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB transfers; run without -short")
	}
	for _, name := range sched.Names() {
		t.Run(name, func(t *testing.T) {
			res, det := transfer(t, bench.Run{Scheduler: name, Paths: hetero(0), Bytes: 50 << 20, Seed: 7})
			if got := det.Client.DeliveredBytes; got < 50<<20 {
				t.Errorf("delivered %d bytes, want ≥ %d", got, 50<<20)
			}
			if len(res.PerPathBytes) != 2 || res.PerPathBytes[0] == 0 {
				t.Errorf("per-path bytes %v: the fast path carried nothing", res.PerPathBytes)
			}
			t.Logf("%s: goodput %.1f Mbit/s = %.3f of capacity, per path %v", name, res.GoodputBps/1e6, res.GoodputBps/res.CapacityBps, res.PerPathBytes)
		})
	}
}

// minRTT fills both pipes on the built-in lossless scenario: goodput is at
// least 90% of the summed bottleneck rates (kernel MPTCP reaches 0.935 on the
// same paths in network namespaces).
func TestMinRTTAggregates(t *testing.T) {
	res, _ := transfer(t, bench.Run{Scheduler: "minrtt", Paths: hetero(0), Bytes: 20 << 20, Seed: 1})
	ratio := res.GoodputBps / res.CapacityBps
	t.Logf("goodput/capacity = %.3f (%.2f of %.0f Mbit/s)", ratio, res.GoodputBps/1e6, res.CapacityBps/1e6)
	if ratio < 0.88 || ratio > 1.0 {
		t.Errorf("goodput/capacity = %.3f, want in [0.88, 1.0]", ratio)
	}
	if res.PerPathBytes[1] < res.PerPathBytes[0]/4 {
		t.Errorf("slow path carried %d of %v bytes: not aggregating", res.PerPathBytes[1], res.PerPathBytes)
	}
}

// A 3 s outage of the fast path mid-transfer: the transfer completes intact,
// the session marks the path potentially failed and reinjects its data, and
// the goodput during the outage comes from the other path.
func TestOutageReinjects(t *testing.T) {
	paths := hetero(0)
	out := []emu.Window{{Start: 2 * time.Second, End: 5 * time.Second}}
	paths[0].Up.Outages, paths[0].Down.Outages = out, out
	res, det := transfer(t, bench.Run{Scheduler: "minrtt", Paths: paths, Bytes: 20 << 20, Seed: 3})
	if det.Server.PathFailures == 0 {
		t.Errorf("no path was marked potentially failed during a 3 s outage")
	}
	if det.Server.ReinjectedSegs == 0 {
		t.Errorf("no segment was reinjected")
	}
	// The whole transfer cannot be faster than the capacity allows, and the
	// surviving 10 Mbit/s path keeps it going: it must beat a stall of the
	// outage's length on a 20 MB transfer.
	if res.FCTSeconds > 20<<20*8/30e6+3+4 {
		t.Errorf("FCT %.2f s: the other path did not carry the transfer through the outage", res.FCTSeconds)
	}
	t.Logf("FCT %.2f s, reinjected %d segments, %d path failures", res.FCTSeconds, det.Server.ReinjectedSegs, det.Server.PathFailures)
}

// A path added mid-transfer starts carrying data.
func TestPathAddedMidTransfer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		paths := hetero(0)
		var topo *emu.Topology
		var cli *session.Session
		added := make(chan error, 1)
		fired := false
		r := bench.Run{
			Scheduler: "minrtt", Paths: paths[:1], Bytes: 20 << 20, Seed: 5,
			Hooks: bench.Hooks{
				Started: func(tp *emu.Topology, c *session.Session) { topo, cli = tp, c },
				Progress: func(got int64) {
					if got < 5<<20 || fired {
						return
					}
					fired = true
					go func() {
						pc, _, err := topo.AddPath(paths[1])
						if err == nil {
							_, err = cli.AddPath(context.Background(), pc, topo.Server.LocalAddr(), session.PathOptions{})
						}
						added <- err
					}()
				},
			},
		}
		res, det, err := bench.Transfer(context.Background(), r)
		if err != nil || !res.SHA256OK {
			t.Fatalf("transfer: %v (sha ok %v)", err, res.SHA256OK)
		}
		if err := <-added; err != nil {
			t.Fatalf("AddPath: %v", err)
		}
		if len(det.Server.Paths) != 2 {
			t.Fatalf("server saw %d paths, want 2", len(det.Server.Paths))
		}
		if got := det.Server.Paths[1].BytesSent; got < 1<<20 {
			t.Errorf("the added path carried %d bytes, want ≥ 1 MiB", got)
		}
		t.Logf("per path %v, FCT %.2f s", res.PerPathBytes, res.FCTSeconds)
	})
}

// The redundant scheduler (SendCopy of each path's oldest uncarried
// segment): the fast path sends new data at its own pace, the slow path
// copies unacknowledged segments at its own, and the application still
// receives each byte exactly once.
func TestRedundantCopiesDeliveredOnce(t *testing.T) {
	const size = 8 << 20
	res, det := transfer(t, bench.Run{Scheduler: "redundant", Paths: hetero(0), Bytes: size, Seed: 11})
	p := det.Server.Paths
	if len(p) != 2 {
		t.Fatalf("per-path bytes %v, want 2 paths", res.PerPathBytes)
	}
	unique := det.Server.SentBytes - det.Server.RedundantBytes
	if p[0].BytesSent+p[1].BytesSent != det.Server.SentBytes {
		t.Errorf("paths sent %d + %d bytes, the connection %d", p[0].BytesSent, p[1].BytesSent, det.Server.SentBytes)
	}
	// The 10 Mbit/s path copies about a third of what the pair sends.
	if p[1].BytesSent < unique/5 || det.Server.RedundantBytes < unique/5 {
		t.Errorf("slow path sent %d bytes, %d redundant, for %d unique: want copies at its own pace", p[1].BytesSent, det.Server.RedundantBytes, unique)
	}
	// RFC 9000 §2.2: "An endpoint could receive data for a stream at the
	// same stream offset multiple times. Data that has already been
	// received can be discarded."
	c := det.Client
	if c.DeliveredBytes != unique {
		t.Errorf("delivered %d bytes in order, want each of %d unique bytes once", c.DeliveredBytes, unique)
	}
	if c.ReceivedBytes-c.DuplicateBytes != c.DeliveredBytes {
		t.Errorf("received %d − duplicates %d ≠ delivered %d", c.ReceivedBytes, c.DuplicateBytes, c.DeliveredBytes)
	}
	if c.DuplicateBytes == 0 {
		t.Errorf("no duplicate bytes received for %d redundant bytes sent", det.Server.RedundantBytes)
	}
}

// Lossy heterogeneous paths: every scheduler moves 20 MB intact.
func TestEverySchedulerLossy20MB(t *testing.T) {
	if testing.Short() {
		t.Skip("20 MB transfers; run without -short")
	}
	for _, name := range sched.Names() {
		t.Run(name, func(t *testing.T) {
			res, det := transfer(t, bench.Run{Scheduler: name, Paths: hetero(0.01), Bytes: 20 << 20, Seed: 13})
			if det.Server.PacketsLost == 0 {
				t.Errorf("no packet lost on 1%% lossy paths: the loss model is not applied")
			}
			t.Logf("%s: goodput %.1f Mbit/s, lost %d packets, ooo %d", name, res.GoodputBps/1e6, det.Server.PacketsLost, res.OOOSegments)
		})
	}
}

// A small receive window bounds the reorder buffer.
func TestReorderBufferBounded(t *testing.T) {
	const window = 128 << 10
	res, det := transfer(t, bench.Run{Scheduler: "roundrobin", Paths: hetero(0), Bytes: 8 << 20, Seed: 17, RecvWindow: window})
	// RFC 9000 §2.2: "Delivering an ordered byte stream requires that an
	// endpoint buffer any data that is received out of order, up to the
	// advertised flow control limit."
	if det.Client.MaxReorderBytes > window {
		t.Errorf("reorder buffer peaked at %d bytes, window %d", det.Client.MaxReorderBytes, window)
	}
	if det.Client.MaxReorderBytes == 0 {
		t.Errorf("round-robin over unequal paths never reordered: the test shows nothing")
	}
	t.Logf("peak reorder %d bytes, goodput %.1f Mbit/s", det.Client.MaxReorderBytes, res.GoodputBps/1e6)
}

// Opportunistic reinjection (Raiciu et al., NSDI 2012, §4.2): "when the
// connection-level receive window is the limit, [send] the segment that
// blocks the window again on the subflow that has room". With a 96 KB window
// over a fast path and a slow one (with 64 KB minRTT keeps to the fast path
// alone, whose window the connection never fills), the window often waits on segments the
// slow path carries; 2% of the slow path's packets are lost, so some of
// those segments are overdue (out for longer than the slow path's minimum
// RTT, when the session re-sends). With the option on, the session sends
// copies of them on the fast path, and only there, and the data still
// arrive intact. The goodput of both runs is logged side by side.
func TestOpportunisticReinjection(t *testing.T) {
	fast := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
	slow := emu.LinkConfig{RateBps: 2e6, Delay: 100 * time.Millisecond, Loss: 0.02}
	paths := []emu.PathSpec{{Up: fast, Down: fast}, {Up: slow, Down: slow}}
	run := func(on bool) (metrics.Result, *bench.Detail) {
		return transfer(t, bench.Run{Scheduler: "minrtt", Paths: paths, Bytes: 8 << 20, Seed: 5, RecvWindow: 96 << 10,
			SessionConfig: &session.Config{OpportunisticReinjection: on}})
	}
	offRes, offDet := run(false)
	onRes, onDet := run(true)
	t.Logf("off: goodput %.2f Mbit/s, HoL-blocked %.2f s; on: goodput %.2f Mbit/s, HoL-blocked %.2f s, %d opportunistic copies",
		offRes.GoodputBps/1e6, offRes.HoLBlockedSec, onRes.GoodputBps/1e6, onRes.HoLBlockedSec, onDet.Server.OpportunisticSegs)
	if offDet.Server.OpportunisticSegs != 0 {
		t.Errorf("option off: %d opportunistic copies, want none", offDet.Server.OpportunisticSegs)
	}
	if onDet.Server.OpportunisticSegs == 0 {
		t.Fatalf("option on: no opportunistic copy sent")
	}
	// Every copy went on the fast path: the slow path's bytes are first
	// transmissions only, so the redundant bytes are all on path 0.
	var slowSent uint64
	for _, p := range onDet.Server.Paths {
		if p.ID == 1 {
			slowSent = p.BytesSent
		}
	}
	if onDet.Server.RedundantBytes > onDet.Server.SentBytes-slowSent {
		t.Errorf("redundant bytes %d exceed the fast path's %d", onDet.Server.RedundantBytes, onDet.Server.SentBytes-slowSent)
	}
}
