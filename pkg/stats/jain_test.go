package stats

import (
	"math"
	"testing"
)

// Jain, Chiu and Hawe (1984) define the fairness index of n allocations as
// "(Σ x_i)² / (n Σ x_i²)": 1 for equal allocations, k/n when k users share
// equally and the others get nothing, and independent of the scale.
func TestJain(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"one flow", []float64{7}, 1},
		{"equal", []float64{5, 5, 5, 5}, 1},
		{"one of two gets all", []float64{10, 0}, 0.5},
		{"k=2 of n=4 share", []float64{3, 3, 0, 0}, 0.5},
		{"k=3 of n=4 share", []float64{1, 1, 1, 0}, 0.75},
		// (1+2)² / (2·(1+4)) = 9/10
		{"1 and 2", []float64{1, 2}, 0.9},
		// (2+1+1)² / (3·(4+1+1)) = 16/18
		{"2, 1, 1", []float64{2, 1, 1}, 16.0 / 18},
		// Scale independence: Mbit/s or bit/s give the same index.
		{"1 and 2, in bit/s", []float64{1e6, 2e6}, 0.9},
		{"huge values", []float64{1e300, 2e300}, 0.9},
		// The session/competitor ratio 2 gives 0.9, and ratio
		// 1.25 gives (2.25)²/(2·2.5625) = 0.98780.
		{"ratio 1.25", []float64{1.25, 1}, 5.0625 / 5.125},
	} {
		if got := Jain(c.xs...); !near(got, c.want, 1e-12) {
			t.Errorf("%s: Jain(%v) = %v, want %v", c.name, c.xs, got, c.want)
		}
	}
}

// The index is undefined without a positive allocation or with one that is
// not a finite non-negative number: NaN, never a panic.
func TestJainUndefined(t *testing.T) {
	for _, xs := range [][]float64{nil, {}, {0, 0}, {1, -1}, {math.NaN(), 1}, {math.Inf(1), 1}} {
		if got := Jain(xs...); !math.IsNaN(got) {
			t.Errorf("Jain(%v) = %v, want NaN", xs, got)
		}
	}
}
