package stats

import (
	"slices"
	"testing"
)

// noisy is base plus a fixed pattern of ±1 noise, ten values.
func noisy(base float64) []float64 {
	d := []float64{-1, 0.5, 1, -0.5, 0, 0.8, -0.8, 0.3, -0.3, 0}
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = base + v
	}
	return out
}

// rankDesc ranks samples by decreasing mean.
func rankDesc(samples [][]float64) []int {
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if Mean(samples[a]) > Mean(samples[b]) {
			return -1
		}
		return 1
	})
	rank := make([]int, len(samples))
	for r, i := range idx {
		rank[i] = r
	}
	return rank
}

func TestTiesSeparatesOnlyWhatTheNoiseAllows(t *testing.T) {
	// A and B differ by 0.1 within noise of ±1: tied. C is 10 above both.
	samples := [][]float64{noisy(10), noisy(10.1), noisy(20)}
	pairs := Ties(samples, TieAlpha)
	want := map[[2]int]bool{{0, 1}: false, {0, 2}: true, {1, 2}: true}
	for _, p := range pairs {
		if p.Different != want[[2]int{p.A, p.B}] {
			t.Errorf("pair %d,%d: different = %v (p = %.3g), want %v", p.A, p.B, p.Different, p.P, want[[2]int{p.A, p.B}])
		}
	}
	got := TieLetters(3, pairs, rankDesc(samples))
	if w := []string{"b", "b", "a"}; !slices.Equal(got, w) {
		t.Errorf("letters = %q, want %q", got, w)
	}
}

// A sample of one value says nothing: it is tied with everything.
func TestTiesSingleRun(t *testing.T) {
	samples := [][]float64{noisy(10), {50}, noisy(20)}
	got := TieLetters(3, Ties(samples, TieAlpha), rankDesc(samples))
	if w := []string{"b", "ab", "a"}; !slices.Equal(got, w) {
		t.Errorf("letters = %q, want %q", got, w)
	}
}

// Ties need not be transitive: X ~ Y and Y ~ Z but X ≠ Z. Y then carries
// both letters, and X and Z share none.
func TestTieLettersIntransitive(t *testing.T) {
	pairs := []Pair{{A: 0, B: 1}, {A: 1, B: 2}, {A: 0, B: 2, Different: true}}
	got := TieLetters(3, pairs, []int{0, 1, 2})
	if w := []string{"a", "ab", "b"}; !slices.Equal(got, w) {
		t.Errorf("letters = %q, want %q", got, w)
	}
	// All different: one letter each, in rank order.
	pairs = []Pair{{A: 0, B: 1, Different: true}, {A: 1, B: 2, Different: true}, {A: 0, B: 2, Different: true}}
	got = TieLetters(3, pairs, []int{2, 0, 1})
	if w := []string{"c", "a", "b"}; !slices.Equal(got, w) {
		t.Errorf("letters = %q, want %q", got, w)
	}
}
