// Package alloctest counts heap allocations for tests that require a code
// path not to allocate.
//
// testing.AllocsPerRun divides the allocations of its runs by their number
// as integers, so a function that allocates in 99 of 100 runs reports 0.
// Mallocs returns the total instead, and a test compares it with a bound.
package alloctest

import "runtime"

// attempts is how many times Mallocs measures before it believes a
// non-zero total.
const attempts = 3

// Mallocs calls f once to warm it up, then runs times, and returns the
// number of heap allocations made during those runs (the growth of
// runtime.MemStats.Mallocs), in total. GOMAXPROCS is 1 while it measures,
// as in testing.AllocsPerRun.
//
// Allocations by other goroutines of the process count too. So a non-zero
// total is measured again, up to 3 times in all, and the smallest is
// returned: f's own allocations recur in every attempt (f is called again,
// so it must tolerate 1+3·runs calls), another goroutine's seldom do.
//
// Mallocs must not run during a parallel test; it is not safe for
// concurrent use.
func Mallocs(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	best := ^uint64(0)
	var ms runtime.MemStats
	for range attempts {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		for range runs {
			f()
		}
		runtime.ReadMemStats(&ms)
		best = min(best, ms.Mallocs-before)
		if best == 0 {
			break
		}
	}
	return best
}
