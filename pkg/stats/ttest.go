package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// WelchT is Welch's unequal-variance t-test of the means of a and b: the
// statistic t = (mean(a) − mean(b)) / √(s_a²/n_a + s_b²/n_b), its
// Welch–Satterthwaite degrees of freedom, and the two-sided p-value. Both
// samples need at least two values, else every result is NaN. When both
// samples have zero variance the test is exact: p is 1 if the means are
// equal and 0 if not (t is then ±Inf or 0, df NaN).
func WelchT(a, b []float64) (t, df, p float64) {
	na, nb := float64(len(a)), float64(len(b))
	if na < 2 || nb < 2 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	va, vb := StdDev(a)*StdDev(a)/na, StdDev(b)*StdDev(b)/nb
	d := Mean(a) - Mean(b)
	if va+vb == 0 {
		if d == 0 {
			return 0, math.NaN(), 1
		}
		return math.Copysign(math.Inf(1), d), math.NaN(), 0
	}
	t = d / math.Sqrt(va+vb)
	df = (va + vb) * (va + vb) / (va*va/(na-1) + vb*vb/(nb-1))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return t, df, p
}

// Holm applies Holm's step-down correction to the p-values ps at
// family-wise error rate alpha: with the p-values sorted increasingly,
// p_(1) ≤ … ≤ p_(m), hypothesis (k) is rejected if p_(j) ≤ alpha/(m−j+1)
// for every j ≤ k. It reports, in the order of ps, which hypotheses are
// rejected. A NaN p-value is never rejected (and sorts last).
func Holm(ps []float64, alpha float64) []bool {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := ps[i], ps[j]
		switch {
		case math.IsNaN(a) && math.IsNaN(b):
			return 0
		case math.IsNaN(a):
			return 1
		case math.IsNaN(b):
			return -1
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	out := make([]bool, m)
	for k, i := range idx {
		if math.IsNaN(ps[i]) || ps[i] > alpha/float64(m-k) {
			break
		}
		out[i] = true
	}
	return out
}
