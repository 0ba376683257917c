package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// RepeatsFile is the name, inside a results directory, of the records of
// one seed run again (mpquic-bench run -repeat): how much a run varies when
// nothing but the goroutine order changes. Optional.
const RepeatsFile = "repeats.jsonl"

// Spread compares, for one scheduler on one scenario, the run-to-run spread
// of one seed with the spread across the matrix's seeds. Goodputs in
// bits/s.
type Spread struct {
	Scenario, Scheduler string
	Seed                int64         // the repeated seed
	OneSeed             stats.Summary // goodput of the repeated seed's OK runs: the repeats and the matrix's own run of that seed
	Seeds               stats.Summary // goodput of the matrix's OK runs, one per seed
}

// Spreads pairs the repeated runs with the matrix's runs, per scenario ×
// scheduler in table order; nil without repeats.
func Spreads(results, repeats []metrics.Result) []Spread {
	if len(repeats) == 0 {
		return nil
	}
	keys, reps := group(repeats)
	_, main := group(results)
	var out []Spread
	for _, k := range keys {
		timed := timedRuns(k.scenario, reps[k])
		s := Spread{Scenario: k.scenario, Scheduler: k.scheduler, Seed: reps[k][0].Seed}
		var one, all []float64
		for _, r := range append(slices.Clone(reps[k]), main[k]...) {
			if OK(r, timed) && r.Seed == s.Seed {
				one = append(one, r.GoodputBps)
			}
		}
		for _, r := range main[k] {
			if OK(r, timed) {
				all = append(all, r.GoodputBps)
			}
		}
		s.OneSeed, s.Seeds = stats.Summarize(one), stats.Summarize(all)
		out = append(out, s)
	}
	return out
}

// readRepeats reads dir/RepeatsFile; nil if there is none.
func readRepeats(dir string) ([]metrics.Result, error) {
	p := filepath.Join(dir, RepeatsFile)
	if _, err := os.Stat(p); os.IsNotExist(err) {
		return nil, nil
	}
	return ReadResults(p)
}

// SpreadSection renders spreads as Markdown: a sentence per scenario
// comparing the two spreads, and a table of the standard deviations and
// ranges; "" without spreads.
func SpreadSection(spreads []Spread) string {
	if len(spreads) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Run-to-run spread of one seed.** Seed %d of every scenario was run %d times per scheduler (`-repeat`, in [%s](%s), and the matrix's own run). "+
		"Runs of one seed are not bit-for-bit repeatable: the goroutines inside the emulator's bubble run in a different order each time, and EdAR-o's model learns from run to run. "+
		"Standard deviation of goodput (Mbit/s), one seed against the matrix's seeds, and the median over the schedulers of their ratio:\n\n",
		spreads[0].Seed, spreads[0].OneSeed.N, RepeatsFile, RepeatsFile)
	b.WriteString("| scenario | scheduler | one seed: runs | one seed: s.d. (min–max) | across seeds: runs | across seeds: s.d. (min–max) |\n|---|---|---:|---:|---:|---:|\n")
	ratios := map[string][]float64{}
	var order []string
	for _, s := range spreads {
		if _, ok := ratios[s.Scenario]; !ok {
			order = append(order, s.Scenario)
		}
		if s.Seeds.StdDev > 0 {
			ratios[s.Scenario] = append(ratios[s.Scenario], s.OneSeed.StdDev/s.Seeds.StdDev)
		} else {
			ratios[s.Scenario] = append(ratios[s.Scenario], math.NaN())
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %d | %s |\n", mdEscape(s.Scenario), mdEscape(s.Scheduler),
			s.OneSeed.N, sdRange(s.OneSeed), s.Seeds.N, sdRange(s.Seeds))
	}
	b.WriteString("\n")
	for _, scn := range order {
		rs := slices.DeleteFunc(ratios[scn], math.IsNaN)
		fmt.Fprintf(&b, "- %s: one seed's s.d. is %s of the s.d. across seeds (median over the schedulers).\n", scn, pm(stats.Quantile(rs, 0.5), math.NaN(), 1, 2, "×"))
	}
	return b.String()
}

// sdRange is "s.d. (min–max)" of a goodput summary, Mbit/s.
func sdRange(s stats.Summary) string {
	if s.N < 2 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f (%.2f–%.2f)", s.StdDev*1e-6, s.Min*1e-6, s.Max*1e-6)
}
