package bench

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// The rpc workload's classification against a case worked by hand (issue
// 22: "request latency p50/p99, with and without the bulk transfer").
// Requests due at 0, 1, 2, 3, 4, 5 s with latencies 10, 20, 300, 400, 50,
// 60 ms; request 3 failed; the bulk was requested at 2 s and ended at 3.5 s.
// Idle (due before 2 s): 10, 20 ms → p50 10, p99 20. Loaded (due in
// [2 s, 3.5 s]): request 2 only (3 failed) → 300, 300. Requests 4 and 5,
// due after the bulk ended, count in neither.
func TestRPCSummary(t *testing.T) {
	s := time.Second
	lat := []float64{0.010, 0.020, 0.300, 0.400, 0.050, 0.060}
	due := []time.Duration{0, s, 2 * s, 3 * s, 4 * s, 5 * s}
	ok := []bool{true, true, true, false, true, true}
	m := rpcSummary(lat, due, ok, rpcDone{k: -1, due: 2 * s, end: 3500 * time.Millisecond})
	if m.Requests != 5 || m.IdleCount != 2 || m.LoadedCount != 1 {
		t.Errorf("requests %d, idle %d, loaded %d; want 5, 2, 1", m.Requests, m.IdleCount, m.LoadedCount)
	}
	if m.IdleP50Sec != 0.010 || m.IdleP99Sec != 0.020 || m.LoadedP50Sec != 0.300 || m.LoadedP99Sec != 0.300 {
		t.Errorf("idle p50/p99 %v/%v, loaded %v/%v; want 0.01/0.02, 0.3/0.3", m.IdleP50Sec, m.IdleP99Sec, m.LoadedP50Sec, m.LoadedP99Sec)
	}
	if m.BulkStartSec != 2 || m.BulkSec != 1.5 {
		t.Errorf("bulk at %v for %v s, want 2, 1.5", m.BulkStartSec, m.BulkSec)
	}
}

// rpcTest is 60 requests at 20/s (4 KB answers) beside a 2 MB download
// that starts at 1 s, over two lossless paths of 10 Mbit/s, 20 ms and 40
// ms RTT, with 100 KB drop-tail queues.
func rpcTest() scenario.Scenario {
	l := func(delayMs float64) scenario.Link {
		return scenario.Link{RateBps: 10 * scenario.Mbps, Delay: scenario.Duration(delayMs * float64(time.Millisecond)), QueueBytes: 100_000}
	}
	r := &scenario.RPC{RateHz: 20, Requests: 60, RequestBytes: 200, ResponseBytes: 4096, BulkBytes: 2_000_000, BulkStart: scenario.Duration(time.Second), Urgency: 1}
	w := &scenario.Workload{Kind: scenario.WorkloadRPC, RPC: r}
	return scenario.Scenario{
		Name:     "rpc-test",
		Paths:    []scenario.PathSpec{{Name: "a", Up: l(10), Down: l(10)}, {Name: "b", Up: l(20), Down: l(20)}},
		Bytes:    w.TotalBytes(),
		Duration: scenario.Duration(30 * time.Second),
		Workload: w,
	}
}

// The rpc workload end to end in virtual time. Ranges from the setup:
//   - every answer and the bulk download arrive and verify: 60 × 4096 +
//     2,000,000 B;
//   - the bulk download (2 MB at up to 20 Mbit/s) takes at least 0.8 s,
//     and, at 20 Mbit/s of capacity, under 3 s;
//   - without it, a request takes at least the fast path's round trip
//     plus 4 KB at 10 Mbit/s (23 ms) and, on idle paths, under 100 ms;
//   - with it the queues fill: the loaded p99 is above the idle p99, and
//     below the bulk's own time (the answers go first, urgency 1 against
//     3);
//   - the 20 requests due in the first second are idle, about 20 of those
//     due while the bulk runs (at least 15: 0.8 s × 20/s) are loaded.
func TestRPCEndToEnd(t *testing.T) {
	res, _ := runScenario(t, rpcTest(), "minrtt", 1, nil)
	m := res.RPC
	if m == nil {
		t.Fatal("no rpc metrics")
	}
	t.Logf("idle %d p50/p99 %.1f/%.1f ms, loaded %d p50/p99 %.1f/%.1f ms, bulk %.3f s from %.3f s",
		m.IdleCount, 1000*m.IdleP50Sec, 1000*m.IdleP99Sec, m.LoadedCount, 1000*m.LoadedP50Sec, 1000*m.LoadedP99Sec, m.BulkSec, m.BulkStartSec)
	if m.Requests != 60 || !res.SHA256OK || res.Bytes != 60*4096+2_000_000 {
		t.Errorf("%d requests, sha %v, %d bytes; want 60, verified, %d", m.Requests, res.SHA256OK, res.Bytes, 60*4096+2_000_000)
	}
	if m.BulkSec < 0.8 || m.BulkSec >= 3 || m.BulkStartSec < 1 || m.BulkStartSec > 1.01 {
		t.Errorf("bulk %.3f s from %.3f s, want in [0.8, 3) from 1 s", m.BulkSec, m.BulkStartSec)
	}
	if m.IdleCount != 20 || m.IdleP50Sec < 0.023 || m.IdleP99Sec >= 0.1 {
		t.Errorf("idle: %d, p50 %.4f, p99 %.4f; want 20 in [23 ms, 100 ms)", m.IdleCount, m.IdleP50Sec, m.IdleP99Sec)
	}
	if m.LoadedCount < 15 || m.LoadedP99Sec <= m.IdleP99Sec || m.LoadedP99Sec >= m.BulkSec {
		t.Errorf("loaded: %d, p99 %.4f; want at least 15, above idle's %.4f and below the bulk's %.3f s", m.LoadedCount, m.LoadedP99Sec, m.IdleP99Sec, m.BulkSec)
	}
}
