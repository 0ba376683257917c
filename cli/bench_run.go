package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
)

// job is one run of the matrix.
type job struct {
	Index     int               `json:"index"`
	Scheduler string            `json:"scheduler"`
	Scenario  scenario.Scenario `json:"scenario"` // resolved, expanded, possibly shortened
	Seed      int64             `json:"seed"`
	Model     string            `json:"model,omitempty"` // EdAR model file
	// Opportunistic turns on the session's opportunistic reinjection; the
	// result's scheduler name then gets the suffix orSuffix.
	Opportunistic bool `json:"opportunistic,omitempty"`
}

// orSuffix marks, in results, the runs made with opportunistic reinjection.
const orSuffix = "+or"

type runFlags struct {
	schedulers string
	scenarios  string
	file       string
	seeds      int
	seed       int64
	parallel   int
	realtime   bool
	format     string
	out        string
	maxBytes   int64
	maxDur     time.Duration
	noReport   bool
	quiet      bool
	model      string
	or         string
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	fs.StringVar(&f.schedulers, "schedulers", "all", "comma-separated scheduler names, or all")
	fs.StringVar(&f.scenarios, "scenarios", scenario.Default, "comma-separated scenario names or globs (e.g. 'prs-*'), or all")
	fs.StringVar(&f.file, "scenario-file", "", "a scenario JSON file to run instead of library scenarios")
	fs.IntVar(&f.seeds, "seeds", 0, "seeds (repetitions) per scheduler and scenario; 0 = the scenario's own count, else 3")
	fs.Int64Var(&f.seed, "seed", 1, "first seed")
	fs.IntVar(&f.parallel, "parallel", runtime.NumCPU(), "runs at once")
	fs.BoolVar(&f.realtime, "realtime", false, "run on the wall clock instead of virtual time")
	fs.StringVar(&f.format, "format", "table", "stdout format: table, json (one object per run) or csv")
	fs.StringVar(&f.out, "out", "", "results directory (results.jsonl, report); default results/<first scenario>")
	fs.Int64Var(&f.maxBytes, "max-bytes", 0, "shrink every scenario's transfer to at most this many bytes (0 = as in the scenario)")
	fs.DurationVar(&f.maxDur, "max-duration", 0, "shrink every scenario's duration to at most this (0 = as in the scenario)")
	fs.BoolVar(&f.noReport, "no-report", false, "do not write the Markdown report and plots")
	fs.BoolVar(&f.quiet, "q", false, "no progress lines on stderr")
	fs.StringVar(&f.model, "edar-model", defaultModel(), "EdAR ONNX model file")
	fs.StringVar(&f.or, "opportunistic", "off", "the session's opportunistic reinjection: off, on, or both (each scheduler twice, the runs with it named <scheduler>"+orSuffix+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch f.format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("-format %q: want table, json or csv", f.format)
	}
	switch f.or {
	case "off", "on", "both":
	default:
		return fmt.Errorf("-opportunistic %q: want off, on or both", f.or)
	}
	jobs, err := buildJobs(&f)
	if err != nil {
		return err
	}
	if f.out == "" {
		f.out = filepath.Join("results", strings.NewReplacer("*", "all", "/", "_", "@", "_").Replace(jobs[0].Scenario.Name))
		if f.scenarios != scenario.Default || f.file != "" {
			f.out = filepath.Join("results", "run-"+time.Now().Format("20060102-150405"))
		}
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	rf, err := os.Create(filepath.Join(f.out, report.ResultsFile))
	if err != nil {
		return err
	}
	defer rf.Close()

	mode := "virtual time"
	if f.realtime {
		mode = "real time"
	}
	if !f.quiet {
		fmt.Fprintf(os.Stderr, "mpquic-bench: %d runs (%s, %d at once) → %s\n", len(jobs), mode, f.parallel, f.out)
	}
	prog := newProgress(len(jobs), f.quiet)
	var mu sync.Mutex
	var results []metrics.Result
	enc := json.NewEncoder(rf)
	collect := func(j job, r metrics.Result) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		enc.Encode(r)
		prog.done(j, r)
	}
	start := time.Now()
	if f.realtime {
		runLocal(jobs, f.parallel, collect)
	} else if err := runVirtual(jobs, f.parallel, collect); err != nil {
		return err
	}
	wall := time.Since(start)
	slices.SortFunc(results, func(a, b metrics.Result) int {
		if c := strings.Compare(a.Scenario, b.Scenario); c != 0 {
			return c
		}
		if c := strings.Compare(a.Scheduler, b.Scheduler); c != 0 {
			return c
		}
		return int(a.Seed - b.Seed)
	})
	if err := writeStdout(os.Stdout, f.format, results); err != nil {
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
		fmt.Fprintf(os.Stderr, "mpquic-bench: %d runs in %.1f s wall for %.1f s of emulated transfers (%.0f× the wall clock); %d failed\n",
			len(results), wall.Seconds(), sim, sim/max(wall.Seconds(), 1e-9), failed)
	}
	if !f.noReport {
		md, err := report.Markdown(f.out)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if !f.quiet {
			fmt.Fprintf(os.Stderr, "mpquic-bench: report %s\n", md)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d runs failed (see the error column of %s)", failed, len(results), filepath.Join(f.out, report.ResultsFile))
	}
	return nil
}

// buildJobs expands the flags into the run matrix.
func buildJobs(f *runFlags) ([]job, error) {
	var names []string
	if f.schedulers == "all" {
		names = sched.Names()
	} else {
		for _, n := range strings.Split(f.schedulers, ",") {
			n = strings.TrimSpace(n)
			if _, err := sched.New(n); err != nil {
				return nil, err
			}
			names = append(names, n)
		}
	}
	var scns []scenario.Scenario
	if f.file != "" {
		s, err := scenario.Load(f.file)
		if err != nil {
			return nil, err
		}
		scns = append(scns, s)
	} else {
		lib := scenario.Library()
		for _, pat := range strings.Split(f.scenarios, ",") {
			pat = strings.TrimSpace(pat)
			if pat == "all" {
				pat = "*"
			}
			n := 0
			for _, s := range lib {
				if ok, _ := path.Match(pat, s.Name); ok {
					scns = append(scns, s)
					n++
				}
			}
			if n == 0 {
				if _, err := scenario.Get(pat); err != nil {
					return nil, err
				}
			}
		}
	}
	var jobs []job
	for _, s := range scns {
		variants, err := s.Expand()
		if err != nil {
			return nil, err
		}
		for _, v := range variants {
			if f.maxBytes > 0 || f.maxDur > 0 {
				mb, md := f.maxBytes, scenario.Duration(f.maxDur)
				if mb == 0 {
					mb = v.Bytes
				}
				if md == 0 {
					md = v.Duration
				}
				v = scenario.Short(v, mb, md)
			}
			seeds := v.Seeds(f.seed)
			if f.seeds > 0 {
				seeds = seeds[:0]
				for i := 0; i < f.seeds; i++ {
					seeds = append(seeds, f.seed+int64(i))
				}
			} else if v.Repeat == 0 {
				seeds = []int64{f.seed, f.seed + 1, f.seed + 2}
			}
			for _, seed := range seeds {
				for _, n := range names {
					for _, or := range []bool{false, true} {
						if or != (f.or == "on") && f.or != "both" { // "" (other callers) is off
							continue
						}
						jobs = append(jobs, job{Index: len(jobs), Scheduler: n, Scenario: v, Seed: seed, Model: f.model, Opportunistic: or})
					}
				}
			}
		}
	}
	if len(jobs) == 0 {
		return nil, errors.New("no runs: no scenario matched")
	}
	return jobs, nil
}

// runLocal runs jobs in this process on the wall clock.
func runLocal(jobs []job, parallel int, collect func(job, metrics.Result)) {
	ch := make(chan job)
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				collect(j, runJob(j))
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

// writeStdout prints the results in the chosen format.
func writeStdout(w io.Writer, format string, rs []metrics.Result) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		for _, r := range rs {
			r.GoodputSeries = nil // keep stdout to one readable line per run; results.jsonl has the series
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"scheduler", "scenario", "seed", "bytes", "fct_s", "goodput_bps", "capacity_bps", "ooo_segments", "hol_blocked_s", "retrans_packets", "sent_bytes", "redundant_bytes", "per_path_bytes", "sha256_ok", "error"})
		for _, r := range rs {
			pp := make([]string, len(r.PerPathBytes))
			for i, b := range r.PerPathBytes {
				pp[i] = strconv.FormatUint(b, 10)
			}
			cw.Write([]string{r.Scheduler, r.Scenario, strconv.FormatInt(r.Seed, 10), strconv.FormatUint(r.Bytes, 10),
				ff(r.FCTSeconds), ff(r.GoodputBps), ff(r.CapacityBps), strconv.FormatUint(r.OOOSegments, 10), ff(r.HoLBlockedSec),
				strconv.FormatUint(r.RetransPackets, 10), strconv.FormatUint(r.SentBytes, 10), strconv.FormatUint(r.RedundantBytes, 10),
				strings.Join(pp, ";"), strconv.FormatBool(r.SHA256OK), r.Error})
		}
		cw.Flush()
		return cw.Error()
	}
	rows := report.Summarize(rs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tscheduler\truns\tgoodput Mbit/s\t/capacity\tFCT s\tOOO segs\tHoL s\tredundancy\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.2f ± %.2f\t%.3f\t%.2f ± %.2f\t%.0f\t%.2f\t%.3f\t\n",
			r.Scenario, r.Scheduler, r.Runs-r.Failed, r.Runs, r.Goodput.Mean/1e6, r.Goodput.CI95/1e6, r.Goodput.Mean/max(r.CapacityBps, 1),
			r.FCT.Mean, r.FCT.CI95, r.OOO.Mean, r.HoL.Mean, r.Redundancy.Mean)
	}
	return tw.Flush()
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func reportCmd(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: mpquic-bench report DIR")
	}
	md, err := report.Markdown(args[0])
	if err != nil {
		return err
	}
	fmt.Println(md)
	return nil
}

func listCmd(args []string) error {
	if len(args) != 0 {
		return errors.New("usage: mpquic-bench list")
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCHEDULERS")
	for _, n := range sched.Names() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintln(w, "\nSCENARIOS")
	for _, s := range scenario.Library() {
		desc := s.Description
		if len(desc) > 100 {
			desc = desc[:97] + "..."
		}
		fmt.Fprintf(w, "  %s\t%s\n", s.Name, desc)
	}
	return w.Flush()
}
