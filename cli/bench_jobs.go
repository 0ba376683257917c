package cli

import (
	"errors"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
)

// job is one run of the matrix.
type job = bench.Job

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
	transport  string // bench.Matrix.Transport
	coupling   string // -coupling: comma-separated coupling names, or ""
	shard      bench.Shard
	repeat     int // -repeat: runs of the first seed beyond the matrix's, into repeats.jsonl
}

// buildJobs expands the flags into the run matrix; a name that matches
// nothing is a usage error naming its flag.
func buildJobs(f *runFlags) ([]job, error) {
	m := bench.Matrix{Schedulers: f.schedulers, Scenarios: f.scenarios, File: f.file, Seeds: f.seeds, Seed: f.seed,
		MaxBytes: f.maxBytes, MaxDur: f.maxDur, Model: f.model, Policy: f.policy, Fallback: f.fallback, Opportunistic: f.or, Couplings: f.coupling, Transport: f.transport}
	jobs, err := m.Jobs()
	var me *bench.MatrixError
	if errors.As(err, &me) {
		switch me.Field {
		case "Schedulers":
			return nil, usagef("-schedulers: %v (mpquic-bench list names them)", me.Err)
		case "Scenarios":
			return nil, usagef("-scenarios: %v (mpquic-bench list names them)", me.Err)
		default:
			return nil, usagef("-scenario-file: %v", me.Err)
		}
	}
	return jobs, err
}
