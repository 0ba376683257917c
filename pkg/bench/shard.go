package bench

// Slicing a matrix into shards, and its fingerprint.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Sharding. `mpquic-bench run -shard K/N` expands the whole matrix exactly as an unsharded
// run does (same job order, same seeds) and runs only the jobs whose index i
// satisfies i mod N = K. K counts from 0, like a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX and a Slurm array started at 0: 0 ≤ K < N. Taking every
// N-th job, rather than a contiguous block, spreads each scenario's runs over
// all shards, so shards take about the same time.

// MaxShards bounds N in -shard K/N: far more machines than any sweep needs,
// small enough that a typo (a seed pasted in) is caught.
const MaxShards = 100000

// Shard is one slice of the matrix: K of N, 0 ≤ K < N. The zero value (N = 0)
// means no sharding; it behaves as 0/1.
type Shard struct {
	K int // the slice, from 0
	N int // the number of slices
}

// String is the flag form "K/N" ("" when unsharded).
func (s *Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Set parses "K/N" (flag.Value).
func (s *Shard) Set(v string) error {
	ks, ns, ok := strings.Cut(v, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return fmt.Errorf("%q: want K/N, such as 0/4 (K counts from 0)", v)
	case n < 1 || n > MaxShards:
		return fmt.Errorf("%q: N = %d shards outside [1, %d]", v, n, MaxShards)
	case k < 0 || k >= n:
		return fmt.Errorf("%q: K = %d outside [0, %d]; K counts from 0 (JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID with --array=0-%d)", v, k, n-1, n-1)
	}
	s.K, s.N = k, n
	return nil
}

// Of returns the jobs of the full matrix that belong to s: those whose
// Index is K modulo N.
func (s Shard) Of(jobs []Job) []Job {
	if s.N <= 1 {
		return jobs
	}
	var out []Job
	for _, j := range jobs {
		if j.Index%s.N == s.K {
			out = append(out, j)
		}
	}
	return out
}

// TimeMode names the time domain of a run for the manifest: "real" or
// "virtual".
func TimeMode(realtime bool) string {
	if realtime {
		return "real"
	}
	return "virtual"
}

// Fingerprint is the hex SHA-256 of the full matrix (every job, as JSON)
// and its time mode (TimeMode): equal for every shard of one sweep.
func Fingerprint(jobs []Job, mode string) (string, error) {
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
