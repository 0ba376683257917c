package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/stats"
)

// markTies sets GoodputTie on every row: within each scenario, the tie
// groups of the schedulers' goodputs over their successful runs
// (stats.Ties, stats.TieLetters), "a" holding the highest mean.
func markTies(rows []Row) {
	for _, idx := range byScenario(rows) {
		samples := make([][]float64, len(idx))
		for k, i := range idx {
			samples[k] = rows[i].goodputs
		}
		letters := stats.TieLetters(len(idx), stats.Ties(samples, stats.TieAlpha), rankByMean(samples))
		for k, i := range idx {
			rows[i].GoodputTie = letters[k]
		}
	}
}

// byScenario returns, per scenario in order of first appearance, the
// indices of its rows.
func byScenario(rows []Row) [][]int {
	var out [][]int
	at := map[string]int{}
	for i, r := range rows {
		k, ok := at[r.Scenario]
		if !ok {
			k = len(out)
			at[r.Scenario] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// rankByMean ranks samples by decreasing mean (an empty sample last): 0 is
// the highest.
func rankByMean(samples [][]float64) []int {
	mean := func(i int) float64 {
		if m := stats.Mean(samples[i]); !math.IsNaN(m) {
			return m
		}
		return math.Inf(-1)
	}
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch ma, mb := mean(a), mean(b); {
		case ma > mb:
			return -1
		case ma < mb:
			return 1
		}
		return 0
	})
	rank := make([]int, len(samples))
	for r, i := range idx {
		rank[i] = r
	}
	return rank
}

// ResolvableDiff is the smallest difference of mean goodput, bits/s, that
// the first (strictest) step of Holm's procedure can declare between the
// two schedulers of rows with the widest spread: the difference whose
// Welch t reaches the two-sided critical value at TieAlpha/m, m being the
// scenario's number of pairs. Smaller differences are reported as ties;
// more runs lower it by about √n. NaN with fewer than two schedulers or
// runs.
func ResolvableDiff(rows []Row) float64 {
	if len(rows) < 2 {
		return math.NaN()
	}
	byVar := slices.Clone(rows)
	v := func(r Row) float64 { return r.Goodput.StdDev * r.Goodput.StdDev / float64(r.Goodput.N) }
	slices.SortFunc(byVar, func(a, b Row) int {
		switch va, vb := v(a), v(b); {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	a, b := byVar[0].Goodput, byVar[1].Goodput
	if a.N < 2 || b.N < 2 {
		return math.NaN()
	}
	va, vb := v(byVar[0]), v(byVar[1])
	if va+vb == 0 {
		return 0
	}
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	m := float64(len(rows) * (len(rows) - 1) / 2)
	return stats.TQuantile(1-stats.TieAlpha/(2*m), df) * math.Sqrt(va+vb)
}

// TieMethodText says, in the report, how the tie groups are drawn.
const TieMethodText = "**Tie groups** (goodput): within each scenario every pair of schedulers is compared with " + stats.TieMethod +
	". Schedulers that share a letter are statistically tied (no difference shown); \"a\" holds the highest mean. " +
	"A scheduler can carry two letters when it is tied with two schedulers that differ from each other. " +
	"The test is unpaired: runs of one seed vary about as much from run to run as runs of different seeds (see the run-to-run spread below, when the run has repeats), so pairing runs by seed gains nothing."

// TieSection renders, per scenario, the tie groups of goodput with each
// group's range of means and ResolvableDiff; rows as Summarize returns
// them (GoodputTie set).
func TieSection(rows []Row) string {
	var b strings.Builder
	b.WriteString(TieMethodText + "\n\n")
	b.WriteString("| scenario | runs per scheduler | tie groups, best first (mean goodput, Mbit/s) | smallest difference resolvable (Mbit/s) |\n|---|---:|---|---:|\n")
	for _, idx := range byScenario(rows) {
		rs := make([]Row, len(idx))
		for k, i := range idx {
			rs[k] = rows[i]
		}
		groups := map[string][]Row{}
		var letters []string
		for _, r := range rs {
			for _, l := range splitLetters(r.GoodputTie) {
				if _, ok := groups[l]; !ok {
					letters = append(letters, l)
				}
				groups[l] = append(groups[l], r)
			}
		}
		slices.SortFunc(letters, compareLetters)
		var parts []string
		for _, l := range letters {
			g := groups[l]
			slices.SortStableFunc(g, func(x, y Row) int {
				switch {
				case x.Goodput.Mean > y.Goodput.Mean:
					return -1
				case x.Goodput.Mean < y.Goodput.Mean:
					return 1
				}
				return 0
			})
			var names []string
			for _, r := range g {
				names = append(names, mdEscape(r.Scheduler))
			}
			lo, hi := g[len(g)-1].Goodput.Mean, g[0].Goodput.Mean
			rng := fmt.Sprintf("%.2f", hi*1e-6)
			if fmt.Sprintf("%.2f", lo*1e-6) != rng {
				rng = fmt.Sprintf("%.2f–%.2f", lo*1e-6, hi*1e-6)
			}
			parts = append(parts, fmt.Sprintf("**%s**: %s (%s)", l, strings.Join(names, ", "), rng))
		}
		n := []int{}
		for _, r := range rs {
			n = append(n, r.Goodput.N)
		}
		runs := fmt.Sprintf("%d", slices.Min(n))
		if slices.Max(n) != slices.Min(n) {
			runs = fmt.Sprintf("%d–%d", slices.Min(n), slices.Max(n))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(rs[0].Scenario), runs, strings.Join(parts, " · "), pm(ResolvableDiff(rs), math.NaN(), 1e-6, 2, ""))
	}
	b.WriteString("\nThe last column is the smallest difference of means that the strictest step of Holm's procedure can declare between the two schedulers of the scenario with the widest spread; smaller differences show as ties. It shrinks with about the square root of the runs.\n")
	return b.String()
}

// splitLetters splits a TieLetters label into its group names: single
// letters, or numbers past the 26th group ("ab27" is a, b and 27).
func splitLetters(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i + 1
		if s[i] >= '0' && s[i] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// compareLetters orders group names as TieLetters assigns them: a to z,
// then 27, 28, ...
func compareLetters(x, y string) int {
	if len(x) != len(y) {
		return len(x) - len(y)
	}
	return strings.Compare(x, y)
}
