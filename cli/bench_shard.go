package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// Sharding. `run -shard K/N` expands the whole matrix exactly as an unsharded
// run does (same job order, same seeds) and runs only the jobs whose index i
// satisfies i mod N = K. K counts from 0, like a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX and a Slurm array started at 0: 0 ≤ K < N. Taking every
// N-th job, rather than a contiguous block, spreads each scenario's runs over
// all shards, so shards take about the same time.

// maxShards bounds N in -shard K/N: far more machines than any sweep needs,
// small enough that a typo (a seed pasted in) is caught.
const maxShards = 100000

// shard is one slice of the matrix: K of N, 0 ≤ K < N. The zero value (N = 0)
// means no sharding; it behaves as 0/1.
type shard struct{ K, N int }

// String is the flag form "K/N" ("" when unsharded).
func (s *shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Set parses "K/N" (flag.Value).
func (s *shard) Set(v string) error {
	ks, ns, ok := strings.Cut(v, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return fmt.Errorf("%q: want K/N, such as 0/4 (K counts from 0)", v)
	case n < 1 || n > maxShards:
		return fmt.Errorf("%q: N = %d shards outside [1, %d]", v, n, maxShards)
	case k < 0 || k >= n:
		return fmt.Errorf("%q: K = %d outside [0, %d]; K counts from 0 (JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID with --array=0-%d)", v, k, n-1, n-1)
	}
	s.K, s.N = k, n
	return nil
}

// of returns the jobs of the full matrix that belong to s.
func (s shard) of(jobs []job) []job {
	if s.N <= 1 {
		return jobs
	}
	var out []job
	for _, j := range jobs {
		if j.Index%s.N == s.K {
			out = append(out, j)
		}
	}
	return out
}

// ManifestFile is the name of the file, next to results.jsonl, in which `run`
// records which matrix and which shard of it a results directory holds;
// `merge` reads it to refuse duplicates, gaps and mixed matrices.
const ManifestFile = "matrix.json"

// manifest is the content of ManifestFile.
type manifest struct {
	// Matrix is the SHA-256 of the fully expanded matrix (every job's
	// scheduler, resolved scenario, seed, model and options, and the time
	// mode), hex: equal for every shard of one sweep.
	Matrix string `json:"matrix_sha256"`
	Jobs   int    `json:"jobs"`   // runs in the full matrix
	Shard  int    `json:"shard"`  // K of -shard K/N (0 when unsharded)
	Shards int    `json:"shards"` // N of -shard K/N (1 when unsharded)
	Time   string `json:"time"`   // "virtual" or "real"
	// Runs are this directory's jobs, in job order, each with the key its
	// result record carries in results.jsonl.
	Runs []manifestRun `json:"runs"`
}

// manifestRun is one job of a results directory.
type manifestRun struct {
	Index     int    `json:"index"`     // job index in the full matrix
	Scheduler string `json:"scheduler"` // as recorded (with +or, or a fallback's name)
	Scenario  string `json:"scenario"`
	Seed      int64  `json:"seed"`
}

// timeMode names the time domain of a run for the manifest.
func timeMode(realtime bool) string {
	if realtime {
		return "real"
	}
	return "virtual"
}

// fingerprint is the hex SHA-256 of the full matrix and its time mode.
func fingerprint(jobs []job, mode string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "mpquic-bench matrix v1 %s %d\n", mode, len(jobs))
	enc := json.NewEncoder(h)
	for _, j := range jobs {
		if err := enc.Encode(j); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// key is the identity of a result record within a matrix.
func (r manifestRun) key() string {
	return fmt.Sprintf("%s|%s|%d", r.Scenario, r.Scheduler, r.Seed)
}

// resultKey is the key of a result record (see manifestRun.key).
func resultKey(r metrics.Result) string {
	return manifestRun{Scheduler: r.Scheduler, Scenario: r.Scenario, Seed: r.Seed}.key()
}

// writeManifest writes dir/ManifestFile.
func writeManifest(dir string, m manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644)
}

// readManifest reads dir/ManifestFile.
func readManifest(dir string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		if os.IsNotExist(err) {
			return m, fmt.Errorf("%s has no %s: not the output of `mpquic-bench run` (or the run did not finish), so it cannot be checked against the matrix", dir, ManifestFile)
		}
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Shards < 1 || m.Shard < 0 || m.Shard >= m.Shards || m.Jobs < 0 || m.Matrix == "" {
		return m, fmt.Errorf("%s: shard %d/%d of %d jobs is not a valid manifest", filepath.Join(dir, ManifestFile), m.Shard, m.Shards, m.Jobs)
	}
	return m, nil
}

// sortRuns orders runs by job index.
func sortRuns(rs []manifestRun) {
	slices.SortFunc(rs, func(a, b manifestRun) int { return a.Index - b.Index })
}
