package cli

// reproduce -claims FILE: a researcher's own claims, run and judged by the
// rule the papers' claims are judged by.

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/report"
	repro "github.com/mpqsched/mpqsched/pkg/reproduce"
)

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
	if err := repro.Registered(cs); err != nil {
		return "", usagef("%v", err)
	}
	jobs, err := ownJobs(cs, o.seeds)
	if err != nil {
		return "", err
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	dir := filepath.Join(o.out, "claims", repro.Slug(name))
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
	return repro.WriteOwn(stdout, dir, file, o.seeds, cs, rs, timed)
}
