package cli

// reproduce -claims FILE: a researcher's own claims, run and judged by the
// rule the papers' claims are judged by.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mpqsched/mpqsched/pkg/report"
	repro "github.com/mpqsched/mpqsched/pkg/reproduce"
)

// OwnClaimsDoc is the name of the verdicts page reproduce -claims writes.
const OwnClaimsDoc = "claims.md"

// ownJobs is the matrix that can judge claims: for each claim, its
// scheduler and baselines on every library scenario its globs name (the
// part of a glob before '@' picks the library scenario, every variant of
// which runs; names of shortened scenarios, ".short", match nothing), seeds
// 1..seeds, uncoupled. A run two claims share runs once.
func ownJobs(cs []repro.Claim, seeds int) ([]job, error) {
	var all []job
	seen := map[string]bool{}
	for i, c := range cs {
		var pats []string
		for _, g := range c.Scenarios {
			p, _, _ := strings.Cut(g, "@")
			if !slices.Contains(pats, p) {
				pats = append(pats, p)
			}
		}
		f := runFlags{schedulers: strings.Join(append([]string{c.Scheduler}, c.Baselines...), ","), scenarios: strings.Join(pats, ","), seeds: seeds, seed: 1}
		jobs, err := buildJobs(&f)
		if err != nil {
			return nil, fmt.Errorf("claims[%d] (%s).scenarios: %w", i, c.ID, err)
		}
		for _, j := range jobs {
			k := fmt.Sprintf("%s|%s|%d", j.Scenario.Name, j.Scheduler, j.Seed)
			if seen[k] {
				continue
			}
			seen[k] = true
			j.Index = len(all)
			all = append(all, j)
		}
	}
	return all, nil
}

// reproduceOwn runs the claims of file (unless o.noRun) into
// o.out/claims/<file's name>/ (results.jsonl and its report), judges each
// claim against each baseline with judge, prints the verdicts and writes
// them with every scenario's figures to claims.md there. It returns the
// page's path.
func reproduceOwn(o reproduceOpts, file string, stdout io.Writer) (string, error) {
	cs, err := repro.Load(file)
	if err != nil {
		return "", err
	}
	claims, err := claimsFrom(cs)
	if err != nil {
		return "", err
	}
	jobs, err := ownJobs(cs, o.seeds)
	if err != nil {
		return "", err
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	dir := filepath.Join(o.out, "claims", slugRE.ReplaceAllString(name, "_"))
	if !o.noRun {
		if err := runPaper(dir, jobs, "none", o); err != nil {
			return "", err
		}
	}
	rs, err := report.ReadResults(filepath.Join(dir, report.ResultsFile))
	if err != nil {
		return "", fmt.Errorf("%w (run without -no-run first)", err)
	}
	timed := map[string]bool{}
	for _, j := range jobs {
		timed[j.Scenario.Name] = j.Scenario.Timed
	}
	col := &reproColumn{key: colNone, all: rs, byPaper: map[string][]verdictRow{}}
	col.judgeClaims(claims, timed)
	if err := writeVerdicts(stdout, col.rows); err != nil {
		return "", err
	}
	page := filepath.Join(dir, OwnClaimsDoc)
	if err := os.WriteFile(page, []byte(ownClaimsPage(file, o.seeds, claims, col.rows)), 0o644); err != nil {
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
	fmt.Fprintf(&b, "Each claim's scheduler and baselines ran on the scenarios it names, %d seeds, uncoupled, in virtual time; every run is in [results.md](results.md). The verdicts follow the rule `make reproduce` applies to the papers' claims:\n\n%s\n\n", seeds, verdictRule)
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
