package schedtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/sched"
)

// DatagramConformance checks what a scheduler owes the transport for
// application datagrams, through sched.DecideDatagram (its own
// DecideDatagram if it implements sched.DatagramScheduler, else
// sched.FastestLive), at 2, 4 and 8 paths:
//   - the choice never allocates ("as Decide, must not allocate",
//     sched.DatagramScheduler), counted over many calls with
//     TotalAllocs, not as a truncated mean;
//   - it marks only indexes of the paths slice;
//   - it marks at least one path when one is live, so a datagram is not
//     dropped while a path could carry it.
//
// Conformance calls it.
func DatagramConformance(t *testing.T, newSched func() sched.Scheduler) {
	t.Helper()
	for _, n := range []int{2, 4, 8} {
		s := newSched()
		paths := Paths(n)
		conn := Conn(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 1000)
		if got := TotalAllocs(1000, func() { sched.DecideDatagram(s, &conn, paths, 1000) }); got != 0 {
			t.Errorf("%d paths: %d allocations in 1000 DecideDatagram calls, want 0", n, got)
		}
		// Full windows must not matter to the validity checks: try the
		// snapshot as built, with the first path failed, and with every
		// path but the last a backup.
		for k, mutate := range []func([]sched.PathInfo){
			func([]sched.PathInfo) {},
			func(p []sched.PathInfo) { p[0].PotentiallyFailed = true },
			func(p []sched.PathInfo) {
				for i := range p[:len(p)-1] {
					p[i].Backup = true
				}
			},
		} {
			ps := Paths(n)
			mutate(ps)
			set := sched.DecideDatagram(s, &conn, ps, 1000)
			if set>>uint(n) != 0 {
				t.Errorf("%d paths, case %d: marks %b beyond the %d paths", n, k, set, n)
			}
			if set == 0 {
				t.Errorf("%d paths, case %d: no path marked though paths are live", n, k)
			}
		}
	}
}

// TotalAllocs runs f runs times (after one warm-up call) and returns the
// number of heap allocations they made in total. Unlike
// testing.AllocsPerRun, whose integer mean reads 0 while up to runs−1 of
// the calls allocate, it lets a test require that no call allocates.
//
// The count is process-wide, so a runtime goroutine can add an allocation
// now and then: it sets GOMAXPROCS to 1, as AllocsPerRun does, and returns
// the least of up to three counts (internal/alloctest.Mallocs). A call that
// allocates shows in every count. Call it outside parallel tests.
func TotalAllocs(runs int, f func()) uint64 { return alloctest.Mallocs(runs, f) }

// BenchmarkDecideDatagram runs b.Run("<n>", ...) for n = 2, 4 and 8 paths,
// calling sched.DecideDatagram on a fresh scheduler from newSched, and
// reports allocations. Name the calling benchmark
// BenchmarkDecideDatagram/<scheduler>.
func BenchmarkDecideDatagram(b *testing.B, newSched func() sched.Scheduler) {
	for _, n := range []int{2, 4, 8} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newSched()
			paths := Paths(n)
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			conn := Conn(now, 1000)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				conn.Now = now.Add(time.Duration(i) * time.Microsecond)
				if sched.DecideDatagram(s, &conn, paths, 1000) == 0 {
					b.Fatal("no path")
				}
			}
		})
	}
}
