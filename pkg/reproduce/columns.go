package reproduce

// The report's two columns (uncoupled and the papers' coupling): loading
// each column's results, judging the claims in both with the same rule, the
// two-column claims table and the list of verdicts that change.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
)

// column is one column of the report: every paper's results under the
// column's coupling, and the claims judged on them.
type column struct {
	key     string                      // ColNone or ColPaper
	results map[string][]metrics.Result // by paper key; scheduler names without "+<coupling>"
	logs    map[string]*RunLog          // by paper key
	all     []metrics.Result            // every paper's results, in plan order
	rows    []verdictRow                // one per claim and baseline, in claims order
	byPaper map[string][]verdictRow     // rows by the claim's paper
}

// loadColumn reads column key's results of every paper of plan from
// base/<paper>/<coupling>/; a paper not run yet in this column has none.
func loadColumn(base string, plan []Paper, key string) (*column, error) {
	c := &column{key: key, results: map[string][]metrics.Result{}, logs: map[string]*RunLog{}, byPaper: map[string][]verdictRow{}}
	for _, p := range plan {
		coupling := p.CouplingOf(key)
		dir := filepath.Join(base, p.Key, coupling)
		rs, err := report.ReadResults(filepath.Join(dir, report.ResultsFile))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // not run yet
			}
			return nil, err
		}
		for i := range rs {
			rs[i].Scheduler = strings.TrimSuffix(rs[i].Scheduler, "+"+coupling)
		}
		c.results[p.Key] = rs
		c.all = append(c.all, rs...)
		if b, err := os.ReadFile(filepath.Join(dir, RunLogFile)); err == nil {
			var lg RunLog
			if json.Unmarshal(b, &lg) == nil {
				c.logs[p.Key] = &lg
			}
		}
	}
	return c, nil
}

// judgeClaims judges every claim on the column's results, by judge's rule:
// the same for both columns.
func (c *column) judgeClaims(claims []claim, timed map[string]bool) {
	var scens []string
	for _, r := range c.all {
		scens = append(scens, r.Scenario)
	}
	slices.Sort(scens)
	scens = slices.Compact(scens)
	for _, cl := range claims {
		vals := claimValues(c.all, cl.metric, timed)
		for i, bl := range cl.baselines {
			v := judge(cl, bl, cl.claimed[i], vals, scens)
			c.rows = append(c.rows, v)
			c.byPaper[cl.paper] = append(c.byPaper[cl.paper], v)
		}
	}
}

// counts is the column's verdict tally, as printed.
func (c *column) counts() string {
	n := map[string]int{}
	for _, v := range c.rows {
		n[strings.Fields(v.verdict)[0]]++
	}
	return fmt.Sprintf("**%d agree, %d partly, %d disagree, %d n/a**", n["agree"], n["partly"], n["disagree"], n["n/a"])
}

// paperCoupling is the coupling of the paper with key k in plan ("" if none).
func paperCoupling(plan []Paper, k string) string {
	for _, p := range plan {
		if p.Key == k {
			return p.Coupling
		}
	}
	return ""
}

// columnName names column key in headings: "none", or the papers'
// couplings ("lia", or "lia/olia" when they differ).
func columnName(plan []Paper, key string) string {
	if key == ColNone {
		return "none"
	}
	var cs []string
	for _, p := range plan {
		if !slices.Contains(cs, p.Coupling) {
			cs = append(cs, p.Coupling)
		}
	}
	return strings.Join(cs, "/")
}

// couplingPhrase describes a run's congestion control in a sentence.
func couplingPhrase(coupling string) string {
	if coupling == "none" {
		return "uncoupled NewReno (quic-go's, per path)"
	}
	return "the `" + coupling + "` coupling over quic-go's NewReno"
}

// verdictCell is one column's judgement of a row: change, means and the
// scenario count with its separations.
func verdictCell(v verdictRow) (change, means, seps string) {
	m := v.c.metric
	return reproPct(v.change),
		fmt.Sprintf("%s%s vs %s%s", reproNum(m, v.aggX), m.unit, reproNum(m, v.aggB), m.unit),
		fmt.Sprintf("%d (%d / %d)", len(v.comps), v.pro, v.con)
}

// claimsTable is the summary table: one row per claim and baseline, with
// the judgement in each column side by side. cols are in Columns
// order and judged on the same claims.
func claimsTable(plan []Paper, cols []*column) string {
	var b strings.Builder
	b.WriteString("| claim | paper's own scenarios? | scheduler vs baseline | metric | claimed |")
	for _, c := range cols {
		n := "none"
		if c.key == ColPaper {
			n = "coupled"
		}
		fmt.Fprintf(&b, " %s: overall change | %s: means over the scenarios | %s: scenarios (CIs separate for / against) | %s: verdict |", n, n, n, n)
	}
	b.WriteString(" coupled column's coupling |\n|---|---|---|---|---:|")
	for range cols {
		b.WriteString("---:|---|---:|---|")
	}
	b.WriteString("---|\n")
	for i, v := range cols[0].rows {
		claimed := reproPct(v.claimed)
		if math.IsNaN(v.claimed) { // only the direction is claimed
			claimed = "higher"
			if v.c.metric.lowerBetter {
				claimed = "lower"
			}
		}
		own := "no"
		if v.c.own {
			own = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s vs %s | %s | %s |", reproMdCell(v.c.text), own, v.c.sched, v.baseline, v.c.metric.name, claimed)
		for _, c := range cols {
			w := c.rows[i]
			ch, means, seps := verdictCell(w)
			fmt.Fprintf(&b, " %s | %s | %s | **%s** |", ch, means, seps, w.verdict)
		}
		fmt.Fprintf(&b, " %s |\n", paperCoupling(plan, v.c.paper))
	}
	return b.String()
}

// verdictChanges lists every claim and baseline whose verdict differs
// between the uncoupled column (none) and the papers' coupling (coupled),
// with both judgements' figures. Papers with results in only one column
// are named, since their claims cannot be compared.
func verdictChanges(plan []Paper, none, coupled *column) string {
	var b strings.Builder
	var missing []string
	for _, p := range plan {
		if (len(none.results[p.Key]) == 0) != (len(coupled.results[p.Key]) == 0) {
			missing = append(missing, p.Key)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Papers with results in only one column, whose claims read n/a (no data) in the other: %s. Run `mpquic-bench reproduce -coupling both` to fill both.\n\n", strings.Join(missing, ", "))
	}
	var changed []int
	for i := range none.rows {
		if none.rows[i].verdict != coupled.rows[i].verdict {
			changed = append(changed, i)
		}
	}
	if len(changed) == 0 {
		fmt.Fprintf(&b, "No verdict changes: all %d comparisons get the same verdict uncoupled and under the papers' coupling.\n", len(none.rows))
		return b.String()
	}
	fmt.Fprintf(&b, "%d of %d comparisons change verdict between the uncoupled column and the papers' coupling:\n\n", len(changed), len(none.rows))
	b.WriteString("| claim | scheduler vs baseline | metric | claimed | coupling | none: verdict (change; means; scenarios, CIs for / against) | coupled: verdict (change; means; scenarios, CIs for / against) |\n|---|---|---|---:|---|---|---|\n")
	for _, i := range changed {
		u, k := none.rows[i], coupled.rows[i]
		uc, um, us := verdictCell(u)
		kc, km, ks := verdictCell(k)
		claimed := reproPct(u.claimed)
		if math.IsNaN(u.claimed) {
			claimed = "direction only"
		}
		fmt.Fprintf(&b, "| %s | %s vs %s | %s | %s | %s | **%s** (%s; %s; %s) | **%s** (%s; %s; %s) |\n",
			reproMdCell(u.c.text), u.c.sched, u.baseline, u.c.metric.name, claimed, paperCoupling(plan, u.c.paper), u.verdict, uc, um, us, k.verdict, kc, km, ks)
	}
	b.WriteString("\nRead each change with the claim's per-scenario tables below: a verdict can turn on one scenario whose separation (CIs apart and at least 1% of B) holds in one column and not the other, while the overall change hardly moves.\n")
	return b.String()
}
