package reproduce

// Comparing a claim's scheduler with its baselines and judging the claim.

import (
	"fmt"
	"math"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// okRun reports whether a run counts: report.OK with the scenario's own
// timed flag (a shortened scenario's name is not in the library, so report
// cannot look it up).
func okRun(r metrics.Result, timed map[string]bool) bool { return report.OK(r, timed[r.Scenario]) }

// comparison is one scheduler against one baseline on one scenario.
type comparison struct {
	scenario string
	x, b     stats.Summary // the claim's scheduler, the baseline
	change   float64       // (x − b)/b
	sep      int           // +1: CIs separate in the claimed direction, −1: against it, 0: they overlap
}

// verdictRow is a claim judged against one baseline.
type verdictRow struct {
	c          claim
	baseline   string
	claimed    float64
	comps      []comparison
	aggX       float64 // mean over the scenarios of the scheduler's means
	aggB       float64 // the same for the baseline
	change     float64 // (aggX − aggB)/aggB
	pro, con   int     // scenarios whose CIs separate for, and against, the claim
	belowFloor int     // scenarios left out because the baseline is below the metric's floor
	verdict    string
}

// claimValues returns each scheduler's metric values per scenario over OK runs.
func claimValues(rs []metrics.Result, m metric, timed map[string]bool) map[[2]string][]float64 {
	out := map[[2]string][]float64{}
	for _, r := range rs {
		if !okRun(r, timed) {
			continue
		}
		v := m.value(r)
		if math.IsNaN(v) {
			continue
		}
		k := [2]string{r.Scenario, r.Scheduler}
		out[k] = append(out[k], v)
	}
	return out
}

// better reports whether a change is in the good direction of m.
func (m metric) better(change float64) bool {
	if m.lowerBetter {
		return change < 0
	}
	return change > 0
}

// judge compares c.sched with baseline on every matching scenario and gives
// the verdict (see verdictRule).
func judge(c claim, baseline string, claimed float64, vals map[[2]string][]float64, scens []string) verdictRow {
	v := verdictRow{c: c, baseline: baseline, claimed: claimed, aggX: math.NaN(), aggB: math.NaN(), change: math.NaN()}
	var xs, bs []float64
	for _, s := range scens {
		if !c.match(s) {
			continue
		}
		x, b := vals[[2]string{s, c.sched}], vals[[2]string{s, baseline}]
		if len(x) == 0 || len(b) == 0 {
			continue
		}
		cp := comparison{scenario: s, x: stats.Summarize(x), b: stats.Summarize(b)}
		if cp.b.Mean < c.metric.floor {
			v.belowFloor++
			continue // nothing to improve on here
		}
		cp.change = relChange(cp.x.Mean, cp.b.Mean)
		if separate(cp) {
			if c.metric.better(cp.x.Mean - cp.b.Mean) {
				cp.sep = 1
				v.pro++
			} else {
				cp.sep = -1
				v.con++
			}
		}
		v.comps = append(v.comps, cp)
		xs, bs = append(xs, cp.x.Mean), append(bs, cp.b.Mean)
	}
	if len(v.comps) == 0 {
		v.verdict = "n/a (no data)"
		if v.belowFloor > 0 {
			v.verdict = "n/a (baseline below the floor everywhere)"
		}
		return v
	}
	v.aggX, v.aggB = stats.Mean(xs), stats.Mean(bs)
	v.change = relChange(v.aggX, v.aggB)
	switch {
	case math.IsNaN(v.change):
		v.verdict = "n/a (baseline is 0)"
	case !c.metric.better(v.change) || v.pro == 0:
		v.verdict = "disagree"
	case (math.IsNaN(claimed) || math.Abs(v.change) >= math.Abs(claimed)/2) && 2*v.pro > len(v.comps) && v.con == 0:
		v.verdict = "agree"
	default:
		v.verdict = "partly"
	}
	return v
}

// minEffect is the smallest relative difference between two means that
// counts as a difference in one scenario (0.01 = 1%). Many of the emulated
// scenarios are so repeatable that the 95% CIs are microseconds wide, and a
// shift of 0.2% between two builds of the same code (FPRS against BLEST:
// 0.2091 s against 0.2087 s) turned a scenario into a loss and the verdict
// with it. 1% is below any size a paper claims (the smallest is 12%) and
// above the run-to-run shifts seen between builds.
const minEffect = 0.01

// separate reports whether the scheduler and the baseline differ in cp's
// scenario: their 95% CIs do not overlap and their means differ by at least
// minEffect of the baseline's.
func separate(cp comparison) bool {
	if math.IsNaN(cp.x.CI95) || math.IsNaN(cp.b.CI95) || math.IsNaN(cp.change) {
		return false
	}
	return math.Abs(cp.x.Mean-cp.b.Mean) > cp.x.CI95+cp.b.CI95 && math.Abs(cp.change) >= minEffect
}

func relChange(x, b float64) float64 {
	if b == 0 || math.IsNaN(b) || math.IsNaN(x) {
		if b == 0 && x == 0 {
			return 0
		}
		return math.NaN()
	}
	return (x - b) / b
}

// VerdictRule is the rule, as printed in the report.
const VerdictRule = `For each claim and baseline we take the scenarios listed with the claim, and in each the mean of the metric over the successful runs of the claim's scheduler (X) and of the baseline (B), each with the half-width of its 95% Student-t confidence interval. As the PRS paper does for its Table 6, the overall change is (mean over scenarios of X − mean over scenarios of B) / (mean over scenarios of B). In a scenario the CIs *separate* when |X − B| is larger than the sum of the two half-widths and at least 1% of B (smaller differences count as ties: in these emulated scenarios CIs can be microseconds wide, and shifts of a few tenths of a percent between builds of the same code would otherwise flip verdicts).

* **agree**: the overall change is in the claimed direction, at least half the claimed size (when the paper gives a size), the CIs separate in the claimed direction in more than half of the scenarios, and in none against it;
* **partly**: the overall change is in the claimed direction and the CIs separate in the claimed direction in at least one scenario, but the change is smaller than half the claim, or the CIs separate in half of the scenarios or fewer, or in some scenario against the claim;
* **disagree**: the overall change is zero or opposite to the claim, or it is in the claimed direction but the CIs separate in the claimed direction in no scenario (our data give no evidence for it);
* **n/a**: no successful runs to compare, or the baseline's value is 0 so a relative change is undefined.

For re-sent bytes a scenario where the baseline re-sends less than one segment (1200 B) per run on average is left out (there is nothing to reduce by a percentage); the claims table counts only the scenarios compared.`

func reproPct(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	s := fmt.Sprintf("%+.1f%%", 100*v)
	return strings.Replace(s, "-", "−", 1)
}

func reproNum(m metric, v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", m.prec, v*m.scale)
}

func numCI(m metric, s stats.Summary) string {
	if math.IsNaN(s.Mean) {
		return "n/a"
	}
	if math.IsNaN(s.CI95) {
		return reproNum(m, s.Mean)
	}
	return reproNum(m, s.Mean) + " ± " + reproNum(m, s.CI95)
}
