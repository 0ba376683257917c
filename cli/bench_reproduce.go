package cli

// The reproduce command: runs the experiments of the PRS-MPTCP, LLHD and FPRS
// papers (and fitting scenarios for BLEST, ECF and Peekaboo) from the
// scenario library in virtual time, and writes OUT/reproduction.md with the
// papers' setups, our tables, plots, and a verdict on each claim computed
// from our data. Every paper's experiments run in two columns: uncoupled
// (coupling none) and under the coupling the paper ran (paperPlan.coupling),
// and the report judges each claim in both with the same rule. Each paper's
// results go to OUT/reproduction/<paper>/<coupling>/ (results.jsonl,
// summary.csv, results.md, plots/, claims/, run.json). OUT is -out:
// results/reproduce by default; `make reproduce` writes docs/.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/cc"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
)

// Output names of the reproduce command, relative to its -out directory.
const (
	reproDoc    = "reproduction.md" // the report
	reproDir    = "reproduction"    // per-paper result directories
	reproRunLog = "run.json"        // per paper: when and how long its matrix ran
	claimsDir   = "claims"          // per paper: the claim figures
)

// matrix is one scheduler × scenario × seed matrix of a paper, expanded by
// buildJobs exactly as `mpquic-bench run` would expand its flags.
type matrix struct {
	scenarios  string        // -scenarios: comma-separated names or globs
	schedulers []string      // -schedulers
	maxBytes   int64         // -max-bytes (0 = as in the scenario)
	maxDur     time.Duration // -max-duration (0 = as in the scenario)
	// dropShrunk leaves out the sweep variants that -max-bytes would shrink,
	// so that a sweep over sizes keeps its small sizes exactly instead of
	// turning its large ones into copies of the cap.
	dropShrunk bool
}

// paperPlan is one section of the report and one results directory.
type paperPlan struct {
	key      string   // directory name under reproduction/
	title    string   // section title
	source   string   // where the paper's text is
	setup    []string // the paper's setup, quoted
	ours     string   // how we ran it (Markdown)
	matrices []matrix
	figures  []string // "<kind>_<scenario>" report figures embedded in the doc
	reasons  string   // likely reasons for differences, shown when a claim is not "agree"
	// extra, if set, writes a side-by-side of the paper's own numbers and
	// ours, from the results of one column run under coupling.
	extra func(rs []metrics.Result, timed map[string]bool, coupling string) string
	// coupling is the coupled congestion control the paper ran (a cc rule
	// name other than none): the report's second column. Where the paper
	// does not say (couplingSaid false), it is LIA, RFC 6356's coupled
	// increase.
	coupling     string
	couplingSaid bool
	// couplingQuotes are the paper's sentences about its congestion control
	// or its stack, verbatim from text; none when the text is not here.
	couplingQuotes []string
	text           string // the paper's text under shared/papers, "" if not there
}

// The report's columns: each paper's experiments run once per column.
const (
	colNone  = "none"  // uncoupled: quic-go's NewReno on every path alone
	colPaper = "paper" // the coupling the paper ran (paperPlan.coupling)
)

// reproColumns are the report's columns, in order.
var reproColumns = []string{colNone, colPaper}

// couplingOf is the coupling p runs under in column col, which also names
// the column's results directory, reproduction/<paper>/<coupling>/.
func (p paperPlan) couplingOf(col string) string {
	if col == colPaper {
		return p.coupling
	}
	return "none"
}

// metric is one measured quantity a claim is about.
type metric struct {
	name        string  // column heading
	unit        string  // display unit
	scale       float64 // display = value · scale
	prec        int     // display decimals
	lowerBetter bool
	value       func(metrics.Result) float64
	// floor: if the baseline's overall mean is below it, there is nothing to
	// improve on and the verdict is n/a (0 = no floor).
	floor float64
}

var (
	mOOO = metric{name: "out-of-order segments", unit: "", scale: 1, prec: 0, lowerBetter: true,
		value: func(r metrics.Result) float64 { return float64(r.OOOSegments) }}
	mFCT = metric{name: "FCT", unit: " s", scale: 1, prec: 3, lowerBetter: true,
		value: func(r metrics.Result) float64 { return r.FCTSeconds }}
	mGoodput = metric{name: "goodput", unit: " Mbit/s", scale: 1e-6, prec: 2,
		value: func(r metrics.Result) float64 { return r.GoodputBps }}
	mHoL = metric{name: "HoL-blocked time", unit: " s", scale: 1, prec: 3, lowerBetter: true,
		value: func(r metrics.Result) float64 { return r.HoLBlockedSec }}
	mResent = metric{name: "re-sent bytes", unit: " KB", scale: 1.0 / 1024, prec: 1, lowerBetter: true,
		value: func(r metrics.Result) float64 { return float64(r.RedundantBytes) }, floor: report.AssumedSegmentBytes}
)

// claim is one statement of a paper, checked against our data.
type claim struct {
	paper     string    // key of the paperPlan whose section shows the details
	id        string    // file-name-safe identifier
	source    string    // who claims it
	text      string    // the claim, as stated
	sched     string    // the scheduler the claim is about
	baselines []string  // what it is compared with
	claimed   []float64 // per baseline, the claimed relative change (−0.38 = 38% less); NaN: only the direction is claimed
	metric    metric
	match     func(name string) bool // the scenarios (recorded names) the claim is judged on
	scope     string                 // which scenarios, and whether they are the paper's own
	own       bool                   // the scenarios are the paper's own experiments
}

// reproduceOpts are the flags of the reproduce command.
type reproduceOpts struct {
	out      string
	papers   map[string]bool // nil = all
	noRun    bool
	columns  []string // the columns to run (reproColumns' keys); nil = both
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
	fs.StringVar(&o.out, "out", defaultReproduceOut, "directory for "+reproDoc+" and "+reproDir+"/")
	fs.StringVar(&papers, "papers", "all", "comma-separated papers to run ("+strings.Join(planKeys(reproPlan()), ", ")+"); the others' earlier results are reused")
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
	plan := reproPlan()
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
	doc, err := reproduce(o, plan, reproClaims())
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
	case colNone, colPaper:
		return []string{v}, nil
	}
	return nil, usagef("-coupling %q: want none, paper or both", v)
}

// runsColumn reports whether o runs column col.
func (o reproduceOpts) runsColumn(col string) bool {
	return o.columns == nil || slices.Contains(o.columns, col)
}

func planKeys(plan []paperPlan) []string {
	var ks []string
	for _, p := range plan {
		ks = append(ks, p.key)
	}
	return ks
}

// reproRunLogEntry is what run.json records about one paper's matrix.
type reproRunLogEntry struct {
	Finished string  `json:"finished"` // RFC 3339, UTC
	Coupling string  `json:"coupling"` // the column's coupling; "both" for the whole run
	WallSec  float64 `json:"wall_s"`   // wall-clock time of the runs, s
	Runs     int     `json:"runs"`
	Failed   int     `json:"failed"`
	Seeds    int     `json:"seeds"`
	Parallel int     `json:"parallel"`
	CPUs     int     `json:"cpus"`
	Go       string  `json:"go"`
}

// reproduce runs the selected papers of plan, then writes the report from
// every paper's results directory. It returns the report's path.
func reproduce(o reproduceOpts, plan []paperPlan, claims []claim) (string, error) {
	base := filepath.Join(o.out, reproDir)
	jobsOf := map[string]map[string][]job{} // paper → column → jobs
	for _, p := range plan {
		if c, err := cc.New(p.coupling); err != nil {
			return "", fmt.Errorf("%s: %w", p.key, err)
		} else if p.coupling == "" || c.Name() == "none" {
			return "", fmt.Errorf("%s: coupling %q: the paper's column needs a coupled rule", p.key, p.coupling)
		}
		jobsOf[p.key] = map[string][]job{}
		for _, col := range reproColumns {
			jobs, err := paperJobs(p, o.seeds, p.couplingOf(col))
			if err != nil {
				return "", fmt.Errorf("%s: %w", p.key, err)
			}
			jobsOf[p.key][col] = jobs
		}
	}
	start := time.Now()
	for _, p := range plan {
		if o.noRun || (o.papers != nil && !o.papers[p.key]) {
			continue
		}
		for _, col := range reproColumns {
			if !o.runsColumn(col) {
				continue
			}
			c := p.couplingOf(col)
			if err := runPaper(filepath.Join(base, p.key, c), jobsOf[p.key][col], c, o); err != nil {
				return "", fmt.Errorf("%s, coupling %s: %w", p.key, c, err)
			}
		}
	}
	if o.noRun || o.papers != nil || o.columns != nil {
		return writeReproduction(o.out, plan, claims, jobsOf)
	}
	// A full run: write the report once to time it, record the time, and
	// write it again with the time at the top.
	if _, err := writeReproduction(o.out, plan, claims, jobsOf); err != nil {
		return "", err
	}
	lg := reproRunLogEntry{Finished: time.Now().UTC().Format(time.RFC3339), Coupling: "both", WallSec: time.Since(start).Seconds(), Seeds: o.seeds, Parallel: o.parallel, CPUs: runtime.NumCPU(), Go: runtime.Version()}
	b, _ := json.MarshalIndent(lg, "", "  ")
	if err := os.WriteFile(filepath.Join(base, reproRunLog), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return writeReproduction(o.out, plan, claims, jobsOf)
}

// paperJobs expands a paper's matrices into one job list, every run under
// coupling (the result names get the suffix "+<coupling>", which
// columnResults takes off again).
func paperJobs(p paperPlan, seeds int, coupling string) ([]job, error) {
	var all []job
	for _, m := range p.matrices {
		f := runFlags{schedulers: strings.Join(m.schedulers, ","), scenarios: m.scenarios, seeds: seeds, seed: 1,
			maxBytes: m.maxBytes, maxDur: m.maxDur, coupling: coupling}
		jobs, err := buildJobs(&f)
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if m.dropShrunk && strings.HasSuffix(j.Scenario.Name, ".short") {
				continue
			}
			j.Index = len(all)
			all = append(all, j)
		}
	}
	if len(all) == 0 {
		return nil, errors.New("no runs")
	}
	return all, nil
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
	err := runVirtual(jobs, o.parallel, func(j job, r metrics.Result) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		prog.done(j, r)
	})
	wall := time.Since(start)
	if err != nil {
		return err
	}
	sortResults(results)
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
	lg := reproRunLogEntry{Finished: time.Now().UTC().Format(time.RFC3339), Coupling: coupling, WallSec: wall.Seconds(), Runs: len(results), Failed: failed,
		Seeds: o.seeds, Parallel: o.parallel, CPUs: runtime.NumCPU(), Go: runtime.Version()}
	b, _ := json.MarshalIndent(lg, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, reproRunLog), append(b, '\n'), 0o644); err != nil {
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
