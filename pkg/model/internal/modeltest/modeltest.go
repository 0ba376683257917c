// Package modeltest has helpers shared by the EdAR model backends' tests:
// random states, the test-model paths, and a latency benchmark that reports
// the median and 99th percentile of single calls.
package modeltest

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched/edar"
)

// Model returns the path of a test model in pkg/model/testdata: "a" or "b",
// two SYNTHETIC models (trained on cmd/edar-synth data with different seeds,
// only to test loading, parity and hot reload). MPQ_EDAR_MODEL overrides
// model "a".
func Model(name string) string {
	if p := os.Getenv("MPQ_EDAR_MODEL"); p != "" && name == "a" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "edar-synthetic-"+name+".onnx")
}

// State returns a random state with n subflows and features in [0, 2), the
// range the normalised features mostly take.
func State(rng *rand.Rand, n int) edar.State {
	s := edar.State{N: n}
	s.Conn[edar.ConnPrevAction] = float32(rng.IntN(2))
	s.Conn[edar.ConnRecvWindow] = 2 * rng.Float32()
	s.Conn[edar.ConnInFlight] = 2 * rng.Float32()
	for i := 0; i < n; i++ {
		for j := range s.Sub[i] {
			for k := range s.Sub[i][j] {
				s.Sub[i][j][k] = 2 * rng.Float32()
			}
		}
	}
	return s
}

// BenchmarkQ benchmarks one inference (one EdAR decision) of p on states
// with 1, 2, 4 and 8 subflows, reporting allocations and the median and
// 99th-percentile latency of single calls as p50-ns and p99-ns.
func BenchmarkQ(b *testing.B, p edar.Policy) {
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(map[int]string{1: "1", 2: "2", 4: "4", 8: "8"}[n], func(b *testing.B) {
			s := State(rand.New(rand.NewPCG(uint64(n), 7)), n)
			var q [2]float32
			lat := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				if err := p.Q(&s, &q); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(t)
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
