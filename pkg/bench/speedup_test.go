package bench

import (
	"context"
	"flag"
	"runtime"
	rtmetrics "runtime/metrics"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

var (
	speedupScenario = flag.String("speedup.scenario", scenario.Default,
		"scenario of BenchmarkVirtualSpeedup and BenchmarkVirtualTransfer (go test -bench VirtualSpeedup -args -speedup.scenario=NAME)")
	speedupProcs = flag.Int("speedup.procs", 0,
		"GOMAXPROCS while a virtual-time run of BenchmarkVirtualSpeedup or BenchmarkVirtualTransfer runs (0 = unchanged)")
)

// inBubble runs f in a synctest bubble with GOMAXPROCS set to
// -speedup.procs if given. A benchmark has no *testing.T for synctest.Test;
// testing.RunTests makes a real one.
func inBubble(f func()) {
	testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: "virtual",
		F: func(t *testing.T) {
			if *speedupProcs > 0 { // RunTests itself sets GOMAXPROCS from -test.cpu
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*speedupProcs))
			}
			synctest.Test(t, func(*testing.T) { f() })
		},
	}})
}

// speedupRun is the run of the speed benchmarks: -speedup.scenario, minRTT,
// seed 1.
func speedupRun(b *testing.B) Run {
	s, err := scenario.Get(*speedupScenario)
	if err != nil {
		b.Fatal(err)
	}
	r, err := FromScenario(s, "minrtt", 1)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkVirtualSpeedup runs one scenario (hetero-2path, 20 MB, minRTT,
// unless -speedup.scenario names another) on the wall clock and in a synctest bubble, alternately in the same run,
// and reports how many times faster virtual time finished it (speedup), with
// both runs' goodput. On a loaded machine the real-time run also loses
// goodput, since the emulator and quic-go then miss their timers.
func BenchmarkVirtualSpeedup(b *testing.B) {
	r := speedupRun(b)
	var real, virt time.Duration
	var realGP, virtGP float64
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, _, err := Transfer(context.Background(), r)
		if err != nil {
			b.Fatal(err)
		}
		real += time.Since(t0)
		realGP += res.GoodputBps
		t0 = time.Now()
		inBubble(func() { res, _, err = Transfer(context.Background(), r) })
		if err != nil {
			b.Fatal(err)
		}
		virt += time.Since(t0)
		virtGP += res.GoodputBps
	}
	b.ReportMetric(real.Seconds()/virt.Seconds(), "speedup")
	b.ReportMetric(realGP/float64(b.N)/1e6, "real-Mbit/s")
	b.ReportMetric(virtGP/float64(b.N)/1e6, "virtual-Mbit/s")
}

// BenchmarkVirtualTransfer runs the BenchmarkVirtualSpeedup scenario in a
// synctest bubble only, and reports the process's CPU time (user+system, all
// goroutines) per transfer, cpu-s/op, and the bytes allocated per transfer,
// alloc-MB/op (runtime.MemStats.TotalAlloc, so the whole process: both
// quic-go ends, the session and the emulator), and the goroutine wake-ups
// per transfer, wakeups/op (estimated from the runtime's 1-in-8 sample of
// scheduling latencies). -cpuprofile and -memprofile
// on this benchmark profile virtual time alone.
func BenchmarkVirtualTransfer(b *testing.B) {
	r := speedupRun(b)
	var gp float64
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	w0 := schedEvents()
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var res metrics.Result
		var err error
		inBubble(func() { res, _, err = Transfer(context.Background(), r) })
		if err != nil {
			b.Fatal(err)
		}
		gp += res.GoodputBps
	}
	b.StopTimer()
	cpu := processCPU() - cpu0
	w := schedEvents() - w0
	runtime.ReadMemStats(&m1)
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/1e6, "alloc-MB/op")
	b.ReportMetric(float64(w)/float64(b.N), "wakeups/op")
	b.ReportMetric(gp/float64(b.N)/1e6, "virtual-Mbit/s")
}

// schedEvents estimates how many times goroutines were scheduled to run
// since the process started: the runtime samples one transition in 8 into
// /sched/latencies:seconds.
func schedEvents() uint64 {
	s := []rtmetrics.Sample{{Name: "/sched/latencies:seconds"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindFloat64Histogram {
		return 0
	}
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return 8 * n
}

// processCPU returns the process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
