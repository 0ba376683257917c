package cli

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

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/bench/modelrun"
	"github.com/mpqsched/mpqsched/pkg/bench/runner"
	"github.com/mpqsched/mpqsched/pkg/cc"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched/edar"
)

// Limits of the run command's numeric flags. A value outside them is a
// mistake (a typo, a seed pasted into -seeds), not a wish.
const (
	maxSeeds    = 10000 // -seeds: repetitions per scheduler and scenario
	maxParallel = 4096  // -parallel: runs at once
)

const runWhat = `Runs every scheduler × scenario × seed of the matrix, in virtual time (child
processes of this binary, each run in a testing/synctest bubble) unless
-realtime. Writes DIR/results.jsonl (one record per run), DIR/matrix.json
(which matrix and shard), and the report: summary.csv, plots/ and results.md.
-repeat K runs each scenario's first seed K more times into DIR/repeats.jsonl;
the report shows how much one seed varies from run to run.
-shard K/N runs the runs whose index in the full matrix is K modulo N (K
counts from 0); 'mpquic-bench merge' joins the shards' directories.`

func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "[run] [flags]", runWhat, stdout)
	var f runFlags
	fs.StringVar(&f.schedulers, "schedulers", "all", "comma-separated scheduler names, or all")
	fs.StringVar(&f.scenarios, "scenarios", scenario.Default, "comma-separated scenario names or globs (e.g. 'prs-*'), or all; not with -scenario-file")
	fs.StringVar(&f.file, "scenario-file", "", "a scenario JSON file to run instead of library scenarios; not with -scenarios")
	fs.IntVar(&f.seeds, "seeds", 0, fmt.Sprintf("seeds (repetitions) per scheduler and scenario, 1..%d (default: the scenario's own count, else 3)", maxSeeds))
	fs.Int64Var(&f.seed, "seed", 1, "first seed")
	fs.IntVar(&f.parallel, "parallel", runtime.NumCPU(), fmt.Sprintf("runs at once, 1..%d", maxParallel))
	fs.BoolVar(&f.realtime, "realtime", false, "run on the wall clock instead of virtual time")
	fs.StringVar(&f.format, "format", "table", "stdout format: table, json (one object per run) or csv")
	fs.StringVar(&f.out, "out", "", "results directory (results.jsonl, report); default results/<first scenario>, or results/run-<time>")
	fs.Int64Var(&f.maxBytes, "max-bytes", 0, "shrink every scenario's transfer to at most this many bytes (0 = as in the scenario)")
	fs.DurationVar(&f.maxDur, "max-duration", 0, "shrink every scenario's duration to at most this (0 = as in the scenario)")
	fs.BoolVar(&f.noReport, "no-report", false, "do not write the Markdown report and plots")
	fs.BoolVar(&f.quiet, "q", false, "no progress lines on stderr")
	fs.StringVar(&f.model, "edar-model", "", "EdAR ONNX model file (default: testdata/edar.onnx of the module, else beside the binary, else the copy built into the binary)")
	fs.StringVar(&f.policy, "policy", "", "ONNX policy exported by python/mpqgym, for -schedulers learned (docs/gym.md)")
	fs.BoolVar(&f.fallback, "edar-fallback", false, "if the EdAR model (or learned's -policy) cannot be used, run edar, edar-o and learned as minRTT, named <name>-minrtt-fallback (default: refuse the run)")
	fs.StringVar(&f.coupling, "coupling", "", "coupled congestion control of the sending session, a comma-separated list run as one more dimension of the matrix: "+strings.Join(cc.Names(), ", ")+" (runs named <scheduler>+<coupling>; empty: the scenario's own, else none)")
	fs.StringVar(&f.or, "opportunistic", "off", "the session's opportunistic reinjection: off, on, or both (each scheduler twice, the runs with it named <scheduler>"+runner.ORSuffix+")")
	fs.StringVar(&f.transport, "transport", "stream", "where the sessions carry their segments: stream (each path's QUIC stream), datagram (QUIC datagrams, session.Config.DatagramData), or both (each scheduler twice, the datagram runs named <scheduler>"+runner.DatagramSuffix+")")
	fs.IntVar(&f.repeat, "repeat", 0, fmt.Sprintf("also run the first seed this many more times for every scheduler and scenario, into DIR/%s, to measure how much one seed varies from run to run (0..%d; not with -shard)", report.RepeatsFile, maxRepeat))
	fs.Var(&f.shard, "shard", "K/N: run only slice K (from 0) of N of the matrix: the runs whose index is K modulo N")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("run: unexpected arguments %q", pos)
	}
	if err := checkRunFlags(&f, fs.given()); err != nil {
		return err
	}
	all, err := buildJobs(&f)
	if err != nil {
		return err
	}
	logf := func(s string) {
		if !f.quiet {
			fmt.Fprintln(stderr, "mpquic-bench:", s)
		}
	}
	specs := make([]modelrun.Spec, len(all))
	for i, j := range all {
		specs[i] = modelrun.SpecOf(j)
	}
	if err := modelrun.CheckModel(specs, logf); err != nil {
		return err
	}
	if err := modelrun.CheckPolicy(specs, logf); err != nil {
		return err
	}
	return runMatrix(&f, all, stdout, stderr)
}

// checkRunFlags refuses out-of-range values and contradictory flags.
func checkRunFlags(f *runFlags, given map[string]bool) error {
	if given["seeds"] && (f.seeds < 1 || f.seeds > maxSeeds) {
		return usagef("-seeds %d: want 1..%d (leave it out for the scenario's own count)", f.seeds, maxSeeds)
	}
	if f.repeat < 0 || f.repeat > maxRepeat {
		return usagef("-repeat %d: want 0..%d", f.repeat, maxRepeat)
	}
	if f.repeat > 0 && f.shard.N > 1 {
		return usagef("-repeat with -shard: run the repeats in an unsharded run")
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		return usagef("-parallel %d: want 1..%d", f.parallel, maxParallel)
	}
	if f.maxBytes < 0 {
		return usagef("-max-bytes %d: want >= 0 (0 = as in the scenario)", f.maxBytes)
	}
	if f.maxDur < 0 {
		return usagef("-max-duration %v: want >= 0 (0 = as in the scenario)", f.maxDur)
	}
	if given["scenario-file"] && given["scenarios"] {
		return usagef("-scenario-file and -scenarios contradict each other: the file replaces the library scenarios; give one")
	}
	if given["scenario-file"] && f.file == "" {
		return usagef("-scenario-file: empty file name")
	}
	switch f.format {
	case "table", "json", "csv":
	default:
		return usagef("-format %q: want table, json or csv", f.format)
	}
	switch f.or {
	case "off", "on", "both":
	default:
		return usagef("-opportunistic %q: want off, on or both", f.or)
	}
	switch f.transport {
	case "", "stream", "datagram", "both": // "": the stream, as bench.Matrix reads it
	default:
		return usagef("-transport %q: want stream, datagram or both", f.transport)
	}
	if f.coupling != "" {
		for _, c := range strings.Split(f.coupling, ",") {
			if _, err := cc.New(c); err != nil {
				return usagef("-coupling %q: %v", f.coupling, err)
			}
		}
	}
	return nil
}

// runMatrix runs f's shard of the full matrix all and writes the results
// directory.
func runMatrix(f *runFlags, all []job, stdout, stderr io.Writer) error {
	mode := bench.TimeMode(f.realtime)
	sum, err := bench.Fingerprint(all, mode)
	if err != nil {
		return err
	}
	jobs := f.shard.Of(all)
	if f.out == "" {
		f.out = filepath.Join("results", strings.NewReplacer("*", "all", "/", "_", "@", "_").Replace(all[0].Scenario.Name))
		if f.scenarios != scenario.Default || f.file != "" {
			f.out = filepath.Join("results", "run-"+time.Now().Format("20060102-150405"))
		}
		if f.shard.N > 1 {
			f.out += fmt.Sprintf("-shard-%d-of-%d", f.shard.K, f.shard.N)
		}
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	online := filepath.Join(f.out, "edar-online")
	for i := range jobs { // after the fingerprint: the directory names no run
		jobs[i].OnlineDir = online
	}
	usesOnline := slices.ContainsFunc(jobs, func(j job) bool { return j.Scheduler == edar.NameOnline })
	if usesOnline && os.Getenv(modelrun.EnvOnlineDir) == "" && fileExists(filepath.Join(online, "model.onnx")) && !f.quiet {
		fmt.Fprintf(stderr, "mpquic-bench: EdAR-o continues from the live model an earlier run left in %s (delete the directory to start afresh)\n", online)
	}
	// A manifest left by an earlier run would vouch for these new results.
	if err := os.Remove(filepath.Join(f.out, report.ManifestFile)); err != nil && !os.IsNotExist(err) {
		return err
	}
	resultsPath := filepath.Join(f.out, report.ResultsFile)
	rf, err := os.Create(resultsPath)
	if err != nil {
		return err
	}
	defer rf.Close()

	if !f.quiet {
		of := ""
		if f.shard.N > 1 {
			of = fmt.Sprintf(" (shard %s of a %d-run matrix)", f.shard.String(), len(all))
		}
		fmt.Fprintf(stderr, "mpquic-bench: %d runs%s (%s time, %d at once) → %s\n", len(jobs), of, mode, f.parallel, f.out)
	}
	prog := newBenchProgress(len(jobs), f.quiet, stderr)
	var mu sync.Mutex
	var results []metrics.Result
	ran := make([]report.ManifestRun, 0, len(jobs))
	enc := json.NewEncoder(rf) // records as they finish, so a crash keeps what finished
	collect := func(j job, r metrics.Result) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		ran = append(ran, report.ManifestRun{Index: j.Index, Scheduler: r.Scheduler, Scenario: r.Scenario, Seed: r.Seed})
		enc.Encode(r)
		prog.done(j, r)
	}
	start := time.Now()
	if len(jobs) == 0 {
		// An empty shard (N above the matrix's size) still leaves a manifest.
	} else if f.realtime {
		runner.Local(jobs, f.parallel, collect)
	} else if err := runner.Virtual(jobs, f.parallel, collect); err != nil {
		return err
	}
	wall := time.Since(start)
	report.SortResults(results)
	if err := rf.Close(); err != nil {
		return err
	}
	if err := writeResults(resultsPath, results); err != nil { // rewritten in table order
		return err
	}
	report.SortRuns(ran)
	m := report.Manifest{Matrix: sum, Jobs: len(all), Shard: f.shard.K, Shards: max(f.shard.N, 1), Time: mode, Runs: ran}
	if err := report.WriteManifest(f.out, m); err != nil {
		return err
	}
	if err := report.WriteFormat(stdout, f.format, results); err != nil {
		return err
	}
	var sim float64
	failed := 0
	for _, r := range results {
		sim += r.FCTSeconds
		if r.Error != "" || !r.SHA256OK {
			failed++
		}
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "mpquic-bench: %d runs in %.1f s wall for %.1f s of emulated transfers (%.0f× the wall clock); %d failed\n",
			len(results), wall.Seconds(), sim, sim/max(wall.Seconds(), 1e-9), failed)
	}
	if err := runRepeats(f, jobs, len(all), stderr); err != nil {
		return err
	}
	if !f.noReport && len(results) > 0 {
		md, err := report.Markdown(f.out)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "mpquic-bench: report %s\n", md)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d runs failed (see the error column of %s)", failed, len(results), resultsPath)
	}
	return nil
}

// writeResults writes rs to path as JSON lines, through a temporary file.
func writeResults(path string, rs []metrics.Result) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
