// Package schedtest has helpers shared by the scheduler packages' tests and
// benchmarks: path-snapshot builders and the BenchmarkDecide harness.
package schedtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/sched"
)

// MSS is the segment payload the helpers use, bytes.
const MSS = 1200

// Path returns a snapshot of a path with the given ID, smoothed RTT, and
// congestion window and bytes in flight counted in segments of MSS bytes.
func Path(id sched.PathID, srtt time.Duration, cwndSegs, inflightSegs uint64) sched.PathInfo {
	return sched.PathInfo{
		ID:               id,
		SmoothedRTT:      srtt,
		MinRTT:           srtt,
		LatestRTT:        srtt,
		RTTVar:           srtt / 4,
		CongestionWindow: cwndSegs * MSS,
		BytesInFlight:    inflightSegs * MSS,
		SegmentsInFlight: inflightSegs,
		MSS:              MSS,
		PacketsSent:      1000,
		BytesSent:        1000 * MSS,
		BytesAcked:       990 * MSS,
		DeliveryRate:     float64(cwndSegs*MSS) / srtt.Seconds(),
	}
}

// Conn returns a connection snapshot at now with sendBufSegs segments of new
// data waiting and a large peer window; the data is stream 0's, at RFC
// 9218's default urgency (3, not incremental), with no deadline or path
// preference.
func Conn(now time.Time, sendBufSegs uint64) sched.ConnInfo {
	return sched.ConnInfo{
		Now:             now,
		SendBufferBytes: sendBufSegs * MSS,
		PeerWindow:      4 << 20,
		SegmentSize:     MSS,
		HasStream:       true,
		Urgency:         3,
	}
}

// Paths returns n heterogeneous paths: path i has RTT 10·(i+1) ms and a
// window of 20 segments; every path but the last is full, so a scheduler has
// a real choice to make between waiting and the slowest path.
func Paths(n int) []sched.PathInfo {
	ps := make([]sched.PathInfo, n)
	for i := range ps {
		inflight := uint64(20)
		if i == n-1 {
			inflight = 5
		}
		ps[i] = Path(sched.PathID(i+1), time.Duration(10*(i+1))*time.Millisecond, 20, inflight)
	}
	return ps
}

// BenchmarkDecide runs b.Run("<n>", ...) for n = 2, 4 and 8 paths, calling
// Decide on a fresh scheduler from newSched, and reports allocations. Name
// the calling benchmark BenchmarkDecide/<scheduler>.
func BenchmarkDecide(b *testing.B, newSched func() sched.Scheduler) {
	for _, n := range []int{2, 4, 8} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newSched()
			paths := Paths(n)
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			conn := Conn(now, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				conn.Now = now.Add(time.Duration(i) * time.Microsecond)
				d := s.Decide(&conn, paths)
				if d.Action > sched.SendCopy {
					b.Fatal("bad action")
				}
			}
		})
	}
}

// AllocsPerDecide returns the allocations of one Decide call on n paths,
// averaged exactly over 200 calls (not truncated, as testing.AllocsPerRun's
// mean is): one allocation in 200 calls gives 0.005, so a test that wants 0
// sees it.
func AllocsPerDecide(s sched.Scheduler, n int) float64 {
	const runs = 200
	paths := Paths(n)
	conn := Conn(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 1000)
	return float64(alloctest.Mallocs(runs, func() { s.Decide(&conn, paths) })) / runs
}

// Conformance checks what every scheduler package owes the transport: the
// registry returns it under name, and "Decide is on the hot path: it must
// not allocate" (sched.Scheduler) at 2, 4 and 8 paths.
func Conformance(t *testing.T, name string, newSched func() sched.Scheduler) {
	t.Helper()
	s, err := sched.New(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Name(); got != name {
		t.Errorf("registry: got a scheduler named %q, want %q", got, name)
	}
	for _, n := range []int{2, 4, 8} {
		if got := AllocsPerDecide(newSched(), n); got != 0 {
			t.Errorf("%d paths: got %v allocs per Decide, want 0", n, got)
		}
	}
	DatagramConformance(t, newSched)
}
