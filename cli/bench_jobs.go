package cli

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench/modelrun"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// job is one run of the matrix.
type job struct {
	Index     int               `json:"index"` // position in the fully expanded matrix, from 0
	Scheduler string            `json:"scheduler"`
	Scenario  scenario.Scenario `json:"scenario"` // resolved, expanded, possibly shortened
	Seed      int64             `json:"seed"`
	Model     string            `json:"model,omitempty"`  // EdAR model file (-edar-model; "": modelrun.FindModel's default)
	Policy    string            `json:"policy,omitempty"` // the learned scheduler's model (-policy)
	// Fallback lets edar and edar-o run minRTT, named
	// "<name>-minrtt-fallback", when their model cannot be used
	// (-edar-fallback); else such a run fails.
	Fallback bool `json:"fallback,omitempty"`
	// OnlineDir is EdAR-o's default working directory (DIR/edar-online for
	// -out DIR); set after the matrix's fingerprint, as it names no run.
	OnlineDir string `json:"online_dir,omitempty"`
	// Opportunistic turns on the session's opportunistic reinjection; the
	// result's scheduler name then gets the suffix orSuffix.
	Opportunistic bool `json:"opportunistic,omitempty"`
	// Coupling is the session's coupled congestion control for this run
	// ("" or "none": the scenario's, else uncoupled); the result's scheduler
	// name then gets the suffix "+<coupling>".
	Coupling string `json:"coupling,omitempty"`
}

// spec is what modelrun needs of j to set up its scheduler.
func (j job) spec() modelrun.Spec {
	return modelrun.Spec{Scheduler: j.Scheduler, Seed: j.Seed, Model: j.Model, Policy: j.Policy, Fallback: j.Fallback, OnlineDir: j.OnlineDir}
}

// orSuffix marks, in results, the runs made with opportunistic reinjection.
const orSuffix = "+or"

// runFlags are the flags of the run command that shape the matrix and its
// output.
type runFlags struct {
	schedulers string
	scenarios  string
	file       string
	seeds      int // per scheduler and scenario; 0 = the scenario's own count, else 3
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
	policy     string // -policy: the learned scheduler's model
	fallback   bool   // -edar-fallback
	or         string
	coupling   string // -coupling: comma-separated coupling names, or ""
	shard      shard
	repeat     int // -repeat: runs of the first seed beyond the matrix's, into repeats.jsonl
}

// buildJobs expands the flags into the run matrix.
func buildJobs(f *runFlags) ([]job, error) {
	var names []string
	if f.schedulers == "all" {
		for _, n := range sched.Names() {
			if n != learned.Name || f.policy != "" { // learned only with a policy
				names = append(names, n)
			}
		}
	} else {
		for _, n := range strings.Split(f.schedulers, ",") {
			n = strings.TrimSpace(n)
			if _, err := sched.New(n); err != nil {
				return nil, usagef("-schedulers: %v (mpquic-bench list names them)", err)
			}
			names = append(names, n)
		}
	}
	var scns []scenario.Scenario
	if f.file != "" {
		s, err := scenario.Load(f.file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("-scenario-file: %v", err)
		}
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
					return nil, usagef("-scenarios: %v (mpquic-bench list names them)", err)
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
						for _, c := range couplings(f.coupling) {
							jobs = append(jobs, job{Index: len(jobs), Scheduler: n, Scenario: v, Seed: seed, Model: f.model, Policy: f.policy, Fallback: f.fallback, Opportunistic: or, Coupling: c})
						}
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

// couplings splits the -coupling list ("" is one run with the scenario's
// own coupling).
func couplings(list string) []string {
	if list == "" {
		return []string{""}
	}
	return strings.Split(list, ",")
}
