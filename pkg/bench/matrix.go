package bench

// The run matrix: scheduler × scenario × seed, expanded into jobs.

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// Job is one run of a Matrix. Its JSON form is what a virtual-time child
// process of mpquic-bench reads, and what the matrix fingerprint hashes.
type Job struct {
	Index     int               `json:"index"`            // position in the fully expanded matrix, from 0
	Scheduler string            `json:"scheduler"`        // registered scheduler name
	Scenario  scenario.Scenario `json:"scenario"`         // resolved, expanded, possibly shortened
	Seed      int64             `json:"seed"`             // the emulator's seed
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
	// result's scheduler name then gets the suffix "+or".
	Opportunistic bool `json:"opportunistic,omitempty"`
	// Coupling is the session's coupled congestion control for this run
	// ("" or "none": the scenario's, else uncoupled); the result's scheduler
	// name then gets the suffix "+<coupling>".
	Coupling string `json:"coupling,omitempty"`
	// Datagram carries the sessions' segments in QUIC datagrams
	// (session.Config.DatagramData); the result's scheduler name then gets
	// the suffix "+dg".
	Datagram bool `json:"datagram,omitempty"`
}

// Matrix is a scheduler × scenario × seed matrix, as the flags of
// `mpquic-bench run` give it.
type Matrix struct {
	// Schedulers are comma-separated registered names, or "all" (every
	// registered scheduler; learned only with a Policy).
	Schedulers string
	// Scenarios are comma-separated library names or globs ("all" is "*");
	// ignored when File is set.
	Scenarios string
	File      string // a scenario file, the matrix's only scenario
	// Seeds is the number of seeds per scheduler and scenario, from Seed
	// on; 0: the scenario's own seeds (Scenario.Seeds), else 3.
	Seeds    int
	Seed     int64         // the first seed
	MaxBytes int64         // shorten every scenario to at most this many bytes (0: as it is)
	MaxDur   time.Duration // shorten every scenario to at most this long (0: as it is)
	Model    string        // Job.Model of every job
	Policy   string        // Job.Policy of every job
	Fallback bool          // Job.Fallback of every job
	// Opportunistic is "off" (or ""), "on" or "both": each run without,
	// with, or both without and with the session's opportunistic
	// reinjection (Job.Opportunistic).
	Opportunistic string
	// Couplings are comma-separated coupling names, each run once per
	// coupling (Job.Coupling); "": one run with the scenario's own.
	Couplings string
	// Transport is "stream" (or ""), "datagram" or "both": each run with
	// segments on each path's QUIC stream, in QUIC datagrams, or both
	// (Job.Datagram).
	Transport string
}

// MatrixError is a field of a Matrix that names nothing: an unknown
// scheduler or scenario, or a scenario file that does not exist.
type MatrixError struct {
	Field string // "Schedulers", "Scenarios" or "File"
	Err   error  // what is wrong with it
}

// Error is the field and what is wrong with it.
func (e *MatrixError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap is e.Err.
func (e *MatrixError) Unwrap() error { return e.Err }

// Jobs expands m into its runs, in matrix order: by scenario (and each
// scenario's variants), seed, scheduler, opportunistic reinjection and
// coupling; each job's Index is its position. It errors with a
// *MatrixError for a name that matches nothing.
func (m Matrix) Jobs() ([]Job, error) {
	f := &m
	var names []string
	if f.Schedulers == "all" {
		for _, n := range sched.Names() {
			if n != learned.Name || f.Policy != "" { // learned only with a policy
				names = append(names, n)
			}
		}
	} else {
		for _, n := range strings.Split(f.Schedulers, ",") {
			n = strings.TrimSpace(n)
			if _, err := sched.New(n); err != nil {
				return nil, &MatrixError{"Schedulers", err}
			}
			names = append(names, n)
		}
	}
	var scns []scenario.Scenario
	if f.File != "" {
		s, err := scenario.Load(f.File)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &MatrixError{"File", err}
		}
		if err != nil {
			return nil, err
		}
		scns = append(scns, s)
	} else {
		lib := scenario.Library()
		for _, pat := range strings.Split(f.Scenarios, ",") {
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
					return nil, &MatrixError{"Scenarios", err}
				}
			}
		}
	}
	var jobs []Job
	for _, s := range scns {
		variants, err := s.Expand()
		if err != nil {
			return nil, err
		}
		for _, v := range variants {
			if f.MaxBytes > 0 || f.MaxDur > 0 {
				mb, md := f.MaxBytes, scenario.Duration(f.MaxDur)
				if mb == 0 {
					mb = v.Bytes
				}
				if md == 0 {
					md = v.Duration
				}
				v = scenario.Short(v, mb, md)
			}
			seeds := v.Seeds(f.Seed)
			if f.Seeds > 0 {
				seeds = seeds[:0]
				for i := 0; i < f.Seeds; i++ {
					seeds = append(seeds, f.Seed+int64(i))
				}
			} else if v.Repeat == 0 {
				seeds = []int64{f.Seed, f.Seed + 1, f.Seed + 2}
			}
			for _, seed := range seeds {
				for _, n := range names {
					for _, or := range []bool{false, true} {
						if or != (f.Opportunistic == "on") && f.Opportunistic != "both" { // "" (other callers) is off
							continue
						}
						for _, c := range couplings(f.Couplings) {
							for _, dg := range []bool{false, true} {
								if dg != (f.Transport == "datagram") && f.Transport != "both" { // "" (other callers) is the stream
									continue
								}
								jobs = append(jobs, Job{Index: len(jobs), Scheduler: n, Scenario: v, Seed: seed, Model: f.Model, Policy: f.Policy, Fallback: f.Fallback, Opportunistic: or, Coupling: c, Datagram: dg})
							}
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

// RepeatJobs returns the jobs of the first seed of each scenario in jobs,
// k times over, with indices past the matrix's (from first), so that they
// name no run of the matrix (`mpquic-bench run -repeat k`).
func RepeatJobs(jobs []Job, k, first int) []Job {
	seed := map[string]int64{}
	for _, j := range jobs {
		if s, ok := seed[j.Scenario.Name]; !ok || j.Seed < s {
			seed[j.Scenario.Name] = j.Seed
		}
	}
	var out []Job
	for range k {
		for _, j := range jobs {
			if j.Seed == seed[j.Scenario.Name] {
				j.Index = first + len(out)
				out = append(out, j)
			}
		}
	}
	return out
}
