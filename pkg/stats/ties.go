package stats

import (
	"slices"
	"strconv"
)

// TieMethod names the test behind Ties, for reports.
const TieMethod = "Welch's two-sided t-test, with Holm's correction over the scenario's pairs at a family-wise error rate of 5%"

// TieAlpha is the family-wise error rate of Ties.
const TieAlpha = 0.05

// Pair is the comparison of samples A and B (indices into Ties' samples).
type Pair struct {
	A, B      int
	Diff      float64 // mean(A) − mean(B), in the samples' unit
	P         float64 // Welch's two-sided p-value, uncorrected (NaN if a sample has fewer than two values)
	Different bool    // rejected by Holm's procedure: the means differ
}

// Ties compares every pair of samples with WelchT and corrects the
// p-values with Holm at family-wise error rate alpha. Two samples are tied
// when their pair is not rejected; a sample with fewer than two values is
// tied with every other, since nothing can be concluded about it.
func Ties(samples [][]float64, alpha float64) []Pair {
	var pairs []Pair
	var ps []float64
	for a := range samples {
		for b := a + 1; b < len(samples); b++ {
			_, _, p := WelchT(samples[a], samples[b])
			pairs = append(pairs, Pair{A: a, B: b, Diff: Mean(samples[a]) - Mean(samples[b]), P: p})
			ps = append(ps, p)
		}
	}
	for i, r := range Holm(ps, alpha) {
		pairs[i].Different = r
	}
	return pairs
}

// TieLetters gives each of n items the letters of the tie groups it
// belongs to (a compact letter display): every maximal set of items that
// are pairwise tied gets a letter, so two items share a letter exactly when
// they are tied. Letters go to the groups in order of their items' ranks
// (rank[i] is item i's position, 0 first; the groups' sorted ranks compared
// lexicographically), so the best item is in group "a". Groups past the 26th are named by number ("27", "28", ...).
func TieLetters(n int, pairs []Pair, rank []int) []string {
	tied := make([][]bool, n)
	for i := range tied {
		tied[i] = make([]bool, n)
	}
	for _, p := range pairs {
		tied[p.A][p.B] = !p.Different
		tied[p.B][p.A] = !p.Different
	}
	var cliques [][]int
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	bronKerbosch(tied, nil, all, nil, &cliques)
	ranks := func(c []int) []int {
		r := make([]int, len(c))
		for k, i := range c {
			r[k] = rank[i]
		}
		slices.Sort(r)
		return r
	}
	slices.SortStableFunc(cliques, func(x, y []int) int { return slices.Compare(ranks(x), ranks(y)) })
	out := make([]string, n)
	for k, c := range cliques {
		name := strconv.Itoa(k + 1)
		if k < 26 {
			name = string(rune('a' + k))
		}
		for _, i := range c {
			out[i] += name
		}
	}
	return out
}

// bronKerbosch appends to out every maximal clique of the graph adj that
// contains r, extends it with vertices of p and excludes those of x
// (Bron–Kerbosch with a pivot).
func bronKerbosch(adj [][]bool, r, p, x []int, out *[][]int) {
	if len(p) == 0 && len(x) == 0 {
		c := slices.Clone(r)
		slices.Sort(c)
		*out = append(*out, c)
		return
	}
	pivot := -1
	for _, u := range append(slices.Clone(p), x...) {
		if pivot < 0 || degreeIn(adj, u, p) > degreeIn(adj, pivot, p) {
			pivot = u
		}
	}
	for _, v := range slices.Clone(p) {
		if pivot >= 0 && adj[pivot][v] {
			continue
		}
		bronKerbosch(adj, append(slices.Clone(r), v), neighbours(adj, v, p), neighbours(adj, v, x), out)
		p = slices.DeleteFunc(p, func(u int) bool { return u == v })
		x = append(x, v)
	}
}

// neighbours is the vertices of set adjacent to v.
func neighbours(adj [][]bool, v int, set []int) []int {
	var out []int
	for _, u := range set {
		if u != v && adj[v][u] {
			out = append(out, u)
		}
	}
	return out
}

// degreeIn is how many vertices of set are adjacent to v.
func degreeIn(adj [][]bool, v int, set []int) int { return len(neighbours(adj, v, set)) }
