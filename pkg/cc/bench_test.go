package cc

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mpqsched/mpqsched/internal/alloctest"
)

// benchPaths are n random coupled paths, fixed by the seed.
func benchPaths(n int) []Path {
	rng := rand.New(rand.NewPCG(uint64(n), 99))
	paths := make([]Path, n)
	for k := range paths {
		paths[k] = randomPath(rng)
	}
	return paths
}

// TestNoAllocations checks that Acked and Lost allocate nothing, on every
// rule and path count the benchmarks cover.
func TestNoAllocations(t *testing.T) {
	for _, c := range all(t) {
		for _, n := range []int{1, 2, 4, 8} {
			paths := benchPaths(n)
			if a := alloctest.Mallocs(100, func() { c.Acked(n-1, 1200, paths); c.Lost(0, paths) }); a != 0 {
				t.Errorf("%s with %d paths: %d allocations in 100 calls, want 0", c.Name(), n, a)
			}
		}
	}
}

// BenchmarkAcked measures one Acked call per rule and path count
// (BenchmarkAcked/<rule>/<paths>).
func BenchmarkAcked(b *testing.B) {
	for _, c := range all(b) {
		for _, n := range []int{1, 2, 4, 8} {
			paths := benchPaths(n)
			b.Run(fmt.Sprintf("%s/%d", c.Name(), n), func(b *testing.B) {
				b.ReportAllocs()
				sum := 0.0
				for i := 0; b.Loop(); i++ {
					sum += c.Acked(i%n, 1200, paths)
				}
				if !finite(sum) {
					b.Fatal("non-finite increase")
				}
			})
		}
	}
}
