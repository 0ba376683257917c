package stats

import (
	"math"
	"slices"
	"testing"
)

// A worked example: a = 1..5, b = 2, 4, ..., 10. s_a²/n = 0.5, s_b²/n = 2,
// so t = −3/√2.5 = −1.8974 and df = 2.5² / (0.5²/4 + 2²/4) = 5.8824; the
// two-sided p-value, 0.10753, is the t density integrated numerically
// (Simpson's rule, 200,000 steps), independently of gonum.
func TestWelchTWorkedExample(t *testing.T) {
	tt, df, p := WelchT([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10})
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"t", tt, -1.8973666}, {"df", df, 5.8823529}, {"p", p, 0.1075312}} {
		if math.Abs(c.got-c.want) > 1e-5 {
			t.Errorf("%s = %.7f, want %.7f", c.name, c.got, c.want)
		}
	}
}

func TestWelchTDegenerate(t *testing.T) {
	if _, _, p := WelchT([]float64{3, 3, 3}, []float64{3, 3}); p != 1 {
		t.Errorf("equal constant samples: p = %v, want 1", p)
	}
	if tt, _, p := WelchT([]float64{3, 3, 3}, []float64{4, 4}); p != 0 || !math.IsInf(tt, -1) {
		t.Errorf("different constant samples: t, p = %v, %v, want -Inf, 0", tt, p)
	}
	if _, _, p := WelchT([]float64{3}, []float64{4, 5}); !math.IsNaN(p) {
		t.Errorf("a single value: p = %v, want NaN", p)
	}
}

// Holm (1979): with p_(1) ≤ … ≤ p_(m), reject H_(1) … H_(k) for the
// largest k with p_(j) ≤ α/(m−j+1) for all j ≤ k.
func TestHolm(t *testing.T) {
	for _, c := range []struct {
		ps   []float64
		want []bool
	}{
		// 0.005 ≤ .05/4, 0.01 ≤ .05/3, 0.03 > .05/2: stop.
		{[]float64{0.01, 0.04, 0.03, 0.005}, []bool{true, false, false, true}},
		// Step-down rejects all three, where Bonferroni (.05/3) keeps 0.03.
		{[]float64{0.03, 0.01, 0.015}, []bool{true, true, true}},
		// A NaN is never rejected, and does not stop the others.
		{[]float64{math.NaN(), 0.001}, []bool{false, true}},
		{nil, []bool{}},
	} {
		if got := Holm(c.ps, 0.05); !slices.Equal(got, c.want) {
			t.Errorf("Holm(%v) = %v, want %v", c.ps, got, c.want)
		}
	}
}
