package cli

// The reproduce command: runs the experiments of the PRS-MPTCP, LLHD and FPRS
// papers (and fitting scenarios for BLEST, ECF and Peekaboo) from the
// scenario library in virtual time, and writes OUT/reproduction.md with the
// papers' setups, our tables, plots, and a verdict on each claim computed
// from our data. Every paper's experiments run in two columns: uncoupled
// (coupling none) and under the coupling the paper ran (repro.Paper.Coupling),
// and the report judges each claim in both with the same rule. Each paper's
// results go to OUT/reproduction/<paper>/<coupling>/ (results.jsonl,
// summary.csv, results.md, plots/, claims/, run.json). OUT is -out:
// results/reproduce by default; `make reproduce` writes docs/.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench/runner"
	"github.com/mpqsched/mpqsched/pkg/cc"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
	repro "github.com/mpqsched/mpqsched/pkg/reproduce"
)

// reproduceOpts are the flags of the reproduce command.
type reproduceOpts struct {
	out      string
	papers   map[string]bool // nil = all
	noRun    bool
	columns  []string // the columns to run (repro.Columns' keys); nil = both
	seeds    int
	parallel int
	quiet    bool
	log      io.Writer // progress lines (stderr); nil = none
}

// logw is where o's progress lines go.
func (o reproduceOpts) logw() io.Writer {
	if o.log == nil {
		return io.Discard
	}
	return o.log
}

// defaultReproduceOut is reproduce's default -out. `make reproduce` passes
// -out docs to refresh the committed report; a plain run must not overwrite it.
var defaultReproduceOut = filepath.Join("results", "reproduce")

const reproduceWhat = `Runs the experiments of the PRS-MPTCP, LLHD and FPRS papers (and fitting
scenarios for BLEST, ECF and Peekaboo) in virtual time, uncoupled and under
the coupled congestion control each paper ran, and writes OUT/reproduction.md
with each claim's verdict in both columns, and
OUT/reproduction/<paper>/<coupling>/. 'make reproduce' writes the committed
copy with -out docs. The papers' claims are data (pkg/reproduce/claims/
papers.json); -claims FILE runs and judges claims of your own, written in
the same format, by the same rule.`

func reproduceCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reproduce", "reproduce [flags]", reproduceWhat, stdout)
	o := reproduceOpts{log: stderr}
	var papers, cols, claimsFile string
	fs.StringVar(&o.out, "out", defaultReproduceOut, "directory for "+repro.ReportFile+" and "+repro.ResultsDir+"/")
	fs.StringVar(&papers, "papers", "all", "comma-separated papers to run ("+strings.Join(planKeys(repro.Plan()), ", ")+"); the others' earlier results are reused")
	fs.BoolVar(&o.noRun, "no-run", false, "run nothing; rebuild the report from the results already in -out")
	fs.StringVar(&cols, "coupling", "both", "columns to run: none (uncoupled), paper (the coupling each paper ran) or both; the report shows both, reusing earlier results for a column not run")
	fs.IntVar(&o.seeds, "seeds", 5, fmt.Sprintf("seeds per scheduler and scenario, 1..%d", maxSeeds))
	fs.IntVar(&o.parallel, "parallel", runtime.NumCPU(), fmt.Sprintf("runs at once, 1..%d", maxParallel))
	fs.BoolVar(&o.quiet, "q", false, "no progress lines on stderr")
	fs.StringVar(&claimsFile, "claims", "", "a claims file of your own (JSON, the format of pkg/reproduce/claims/papers.json): run each claim's scheduler and baselines on its scenarios, uncoupled, into OUT/claims/<file's name>/, and judge the claims by the papers' rule (claims.md); not with -papers or -coupling")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("reproduce: unexpected arguments %q", pos)
	}
	if given := fs.given(); claimsFile != "" && (given["papers"] || given["coupling"]) {
		return usagef("-claims with -papers or -coupling: a claims file runs its own scenarios, uncoupled")
	}
	if o.seeds < 1 || o.seeds > maxSeeds {
		return usagef("-seeds %d: want 1..%d", o.seeds, maxSeeds)
	}
	if o.parallel < 1 || o.parallel > maxParallel {
		return usagef("-parallel %d: want 1..%d", o.parallel, maxParallel)
	}
	if o.columns, err = parseColumns(cols); err != nil {
		return err
	}
	if claimsFile != "" {
		page, err := reproduceOwn(o, claimsFile, stdout)
		if err != nil {
			return err
		}
		if !o.quiet {
			fmt.Fprintf(stderr, "mpquic-bench: verdicts %s\n", page)
		}
		return nil
	}
	plan := repro.Plan()
	if papers != "all" {
		o.papers = map[string]bool{}
		for _, p := range strings.Split(papers, ",") {
			p = strings.TrimSpace(p)
			if !slices.Contains(planKeys(plan), p) {
				return usagef("-papers: unknown paper %q (have %s)", p, strings.Join(planKeys(plan), ", "))
			}
			o.papers[p] = true
		}
	}
	doc, err := reproduce(o, plan, repro.Papers())
	if err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "mpquic-bench: report %s\n", doc)
	}
	return nil
}

// parseColumns reads -coupling: "both" (nil: every column), "none" or "paper".
func parseColumns(v string) ([]string, error) {
	switch v {
	case "both":
		return nil, nil
	case repro.ColNone, repro.ColPaper:
		return []string{v}, nil
	}
	return nil, usagef("-coupling %q: want none, paper or both", v)
}

// runsColumn reports whether o runs column col.
func (o reproduceOpts) runsColumn(col string) bool {
	return o.columns == nil || slices.Contains(o.columns, col)
}

func planKeys(plan []repro.Paper) []string {
	var ks []string
	for _, p := range plan {
		ks = append(ks, p.Key)
	}
	return ks
}

// reproduce runs the selected papers of plan, then writes the report from
// every paper's results directory. It returns the report's path.
func reproduce(o reproduceOpts, plan []repro.Paper, claims []repro.Claim) (string, error) {
	base := filepath.Join(o.out, repro.ResultsDir)
	jobsOf := map[string]map[string][]job{} // paper → column → jobs
	for _, p := range plan {
		if c, err := cc.New(p.Coupling); err != nil {
			return "", fmt.Errorf("%s: %w", p.Key, err)
		} else if p.Coupling == "" || c.Name() == "none" {
			return "", fmt.Errorf("%s: coupling %q: the paper's column needs a coupled rule", p.Key, p.Coupling)
		}
		jobsOf[p.Key] = map[string][]job{}
		for _, col := range repro.Columns {
			jobs, err := p.Jobs(o.seeds, p.CouplingOf(col))
			if err != nil {
				return "", fmt.Errorf("%s: %w", p.Key, err)
			}
			jobsOf[p.Key][col] = jobs
		}
	}
	start := time.Now()
	for _, p := range plan {
		if o.noRun || (o.papers != nil && !o.papers[p.Key]) {
			continue
		}
		for _, col := range repro.Columns {
			if !o.runsColumn(col) {
				continue
			}
			c := p.CouplingOf(col)
			if err := runPaper(filepath.Join(base, p.Key, c), jobsOf[p.Key][col], c, o); err != nil {
				return "", fmt.Errorf("%s, coupling %s: %w", p.Key, c, err)
			}
		}
	}
	if o.noRun || o.papers != nil || o.columns != nil {
		return repro.WriteReport(o.out, plan, claims, jobsOf)
	}
	// A full run: write the report once to time it, record the time, and
	// write it again with the time at the top.
	if _, err := repro.WriteReport(o.out, plan, claims, jobsOf); err != nil {
		return "", err
	}
	lg := repro.RunLog{Finished: time.Now().UTC().Format(time.RFC3339), Coupling: "both", WallSec: time.Since(start).Seconds(), Seeds: o.seeds, Parallel: o.parallel, CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if err := lg.Write(filepath.Join(base, repro.RunLogFile)); err != nil {
		return "", err
	}
	return repro.WriteReport(o.out, plan, claims, jobsOf)
}

// runPaper runs jobs (all under coupling) in virtual time and writes
// dir/results.jsonl, run.json and the per-directory report (summary.csv,
// results.md, plots).
func runPaper(dir string, jobs []job, coupling string, o reproduceOpts) error {
	if err := os.RemoveAll(dir); err != nil { // no stale plots from an earlier plan
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(o.logw(), "mpquic-bench: %s: %d runs (virtual time, %d at once)\n", dir, len(jobs), o.parallel)
	}
	prog := newBenchProgress(len(jobs), o.quiet, o.logw())
	var mu sync.Mutex
	var results []metrics.Result
	start := time.Now()
	err := runner.Virtual(jobs, o.parallel, func(j job, r metrics.Result) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		prog.done(j, r)
	})
	wall := time.Since(start)
	if err != nil {
		return err
	}
	report.SortResults(results)
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	failed := 0
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
		if r.Error != "" || !r.SHA256OK {
			failed++
		}
	}
	if err := os.WriteFile(filepath.Join(dir, report.ResultsFile), []byte(buf.String()), 0o644); err != nil {
		return err
	}
	lg := repro.RunLog{Finished: time.Now().UTC().Format(time.RFC3339), Coupling: coupling, WallSec: wall.Seconds(), Runs: len(results), Failed: failed,
		Seeds: o.seeds, Parallel: o.parallel, CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if err := lg.Write(filepath.Join(dir, repro.RunLogFile)); err != nil {
		return err
	}
	if _, err := report.Markdown(dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if !o.quiet {
		fmt.Fprintf(o.logw(), "mpquic-bench: %s: %d runs in %.1f s wall; %d failed\n", dir, len(results), wall.Seconds(), failed)
	}
	return nil
}
