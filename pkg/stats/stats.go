// Package stats summarises repeated runs: mean, sample standard deviation,
// Student-t confidence intervals for small samples, quantiles and empirical
// CDFs. Values keep whatever unit the caller gives them.
package stats

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Mean is the arithmetic mean of xs; NaN if xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stat.Mean(xs, nil)
}

// StdDev is the sample standard deviation of xs (n−1 in the denominator);
// NaN if len(xs) < 2.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	return stat.StdDev(xs, nil)
}

// TQuantile is the p-quantile of Student's t distribution with df degrees of
// freedom (df > 0).
func TQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// CI is the half-width of the two-sided confidence interval for the mean of
// xs at the given level (0.95 for 95%), from Student's t with n−1 degrees of
// freedom: t_{(1+level)/2, n−1} · s / √n. The interval is Mean ± CI. NaN if
// len(xs) < 2.
func CI(xs []float64, level float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return math.NaN()
	}
	return TQuantile((1+level)/2, n-1) * StdDev(xs) / math.Sqrt(n)
}

// CI95 is CI(xs, 0.95).
func CI95(xs []float64) float64 { return CI(xs, 0.95) }

// Quantile is the p-quantile (p in [0, 1]) of xs by linear interpolation
// between order statistics (the "R-7" definition, so Quantile(xs, 0.5) of an
// even-length sample is the mean of the two middle values); NaN if xs is
// empty. xs is not modified.
func Quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Summary describes a sample.
type Summary struct {
	N      int     // sample size
	Mean   float64 // arithmetic mean
	StdDev float64 // sample standard deviation (NaN if N < 2)
	CI95   float64 // half-width of the 95% Student-t interval of the mean (NaN if N < 2)
	Min    float64 // smallest value
	Median float64 // 0.5-quantile
	Max    float64 // largest value
}

// Format renders the mean ± the 95% CI half-width, both multiplied by scale
// and with prec decimals: "n/a" for an empty sample, and "mean ± n/a" for a
// single value, from which no interval can be drawn (never "NaN").
func (s Summary) Format(scale float64, prec int) string {
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "n/a"
		}
		return strconv.FormatFloat(v*scale, 'f', prec, 64)
	}
	if s.N == 0 || math.IsNaN(s.Mean) {
		return "n/a"
	}
	return f(s.Mean) + " ± " + f(s.CI95)
}

// Summarize computes the Summary of xs. For an empty xs every field but N is
// NaN.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs), Mean: Mean(xs), StdDev: StdDev(xs), CI95: CI95(xs),
		Min: math.NaN(), Median: Quantile(xs, 0.5), Max: math.NaN()}
	if len(xs) > 0 {
		s.Min, s.Max = slices.Min(xs), slices.Max(xs)
	}
	return s
}

// ECDF returns the empirical CDF of xs as a step function: the distinct
// values in increasing order and, for each, the fraction of xs that are at
// most that value. The last fraction is 1.
func ECDF(xs []float64) (x, p []float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := float64(len(s))
	for i, v := range s {
		if i+1 < len(s) && s[i+1] == v {
			continue // count ties at their last position
		}
		x = append(x, v)
		p = append(p, float64(i+1)/n)
	}
	return x, p
}

// CDFAt is the fraction of xs that are at most v; NaN if xs is empty.
func CDFAt(xs []float64, v float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	n := 0
	for _, x := range xs {
		if x <= v {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}
