package stats

import "math"

// Jain is Jain's fairness index of the allocations xs (goodputs, say, in
// any one unit):
//
//	J(x_1, ..., x_n) = (Σ x_i)² / (n · Σ x_i²)
//
// (R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and
// Discrimination for Resource Allocation in Shared Computer Systems",
// DEC-TR-301, 1984). It is 1 when every x_i is equal, k/n when k of the n
// share equally and the rest get nothing, and so at least 1/n; it does not
// depend on the unit. NaN when the index is undefined: no values, all of
// them 0, or any negative, NaN or infinite.
func Jain(xs ...float64) float64 {
	top := 0.0
	for _, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return math.NaN()
		}
		top = max(top, x)
	}
	if top == 0 {
		return math.NaN()
	}
	var s, s2 float64
	for _, x := range xs {
		x /= top // the index does not depend on the scale; this keeps Σx² finite
		s += x
		s2 += x * x
	}
	return s * s / (float64(len(xs)) * s2)
}
