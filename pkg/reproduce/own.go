package reproduce

// The page of a researcher's own claims (reproduce -claims FILE), judged by
// the rule the papers' claims are judged by.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// OwnClaimsDoc is the name of the verdicts page WriteOwn writes.
const OwnClaimsDoc = "claims.md"

// WriteOwn judges the claims of file (cs, as Load read them) on rs, the
// results of their runs (seeds per scheduler and scenario), by the rule
// the papers' claims are judged by (VerdictRule). timed says, per recorded
// scenario name, whether the scenario is timed (see report.OK). It prints
// one line per claim and baseline to w and writes the verdicts with every
// scenario's figures to dir/OwnClaimsDoc, whose path it returns.
func WriteOwn(w io.Writer, dir, file string, seeds int, cs []Claim, rs []metrics.Result, timed map[string]bool) (string, error) {
	claims, err := claimsFrom(cs)
	if err != nil {
		return "", err
	}
	col := &column{key: ColNone, all: rs, byPaper: map[string][]verdictRow{}}
	col.judgeClaims(claims, timed)
	if err := writeVerdicts(w, col.rows); err != nil {
		return "", err
	}
	page := filepath.Join(dir, OwnClaimsDoc)
	if err := os.WriteFile(page, []byte(ownClaimsPage(file, seeds, claims, col.rows)), 0o644); err != nil {
		return "", err
	}
	return page, nil
}

// writeVerdicts prints one line per claim and baseline.
func writeVerdicts(w io.Writer, rows []verdictRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tscheduler vs baseline\tmetric\tclaimed\tours\tscenarios (for / against)\tverdict")
	for _, v := range rows {
		change, _, seps := verdictCell(v)
		fmt.Fprintf(tw, "%s\t%s vs %s\t%s\t%s\t%s\t%s\t%s\n", v.c.id, v.c.sched, v.baseline, v.c.metric.name, claimedCell(v), change, seps, v.verdict)
	}
	return tw.Flush()
}

// claimedCell is the claimed change, or the direction alone.
func claimedCell(v verdictRow) string {
	if v.claimed != v.claimed { // NaN: a direction only
		if v.c.metric.lowerBetter {
			return "lower"
		}
		return "higher"
	}
	return reproPct(v.claimed)
}

// ownClaimsPage is claims.md: the rule, the verdicts, and per claim its
// scenarios' comparison.
func ownClaimsPage(file string, seeds int, claims []claim, rows []verdictRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Claims of %s\n\n", filepath.Base(file))
	fmt.Fprintf(&b, "Each claim's scheduler and baselines ran on the scenarios it names, %d seeds, uncoupled, in virtual time; every run is in [results.md](results.md). The verdicts follow the rule `make reproduce` applies to the papers' claims:\n\n%s\n\n", seeds, VerdictRule)
	b.WriteString("| claim | scheduler vs baseline | metric | claimed | ours | means | scenarios (for / against) | verdict |\n|---|---|---|---:|---:|---|---:|---|\n")
	for _, v := range rows {
		change, means, seps := verdictCell(v)
		fmt.Fprintf(&b, "| %s | %s vs %s | %s | %s | %s | %s | %s | %s |\n", v.c.id, v.c.sched, v.baseline, v.c.metric.name, claimedCell(v), change, means, seps, v.verdict)
	}
	for _, c := range claims {
		var vs []verdictRow
		for _, v := range rows {
			if v.c.id == c.id && len(v.comps) > 0 {
				vs = append(vs, v)
			}
		}
		fmt.Fprintf(&b, "\n## %s\n\n> %s\n\n%s", c.id, reproMdCell(c.text), reproMdCell(c.source))
		if c.scope != "" {
			b.WriteString(" Scenarios: " + c.scope)
		}
		b.WriteString("\n\n")
		if len(vs) > 0 {
			b.WriteString(detailTable(vs))
		} else {
			b.WriteString("No scenario of these runs matches the claim's globs.\n")
		}
	}
	return b.String()
}
