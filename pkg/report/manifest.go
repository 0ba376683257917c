package report

// The manifest of a results directory (which matrix, and which shard of
// it, the directory holds) and the merge of a sharded sweep's directories.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// ManifestFile is the name of the file, next to ResultsFile, in which
// `mpquic-bench run` records which matrix and which shard of it a results directory holds;
// `merge` reads it to refuse duplicates, gaps and mixed matrices.
const ManifestFile = "matrix.json"

// Manifest is the content of ManifestFile.
type Manifest struct {
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
	Runs []ManifestRun `json:"runs"`
}

// ManifestRun is one job of a results directory.
type ManifestRun struct {
	Index     int    `json:"index"`     // job index in the full matrix
	Scheduler string `json:"scheduler"` // as recorded (with +or, or a fallback's name)
	Scenario  string `json:"scenario"`  // the recorded scenario name
	Seed      int64  `json:"seed"`      // the emulator's seed
}

// Key is the identity of a result record within a matrix:
// "scenario|scheduler|seed".
func (r ManifestRun) Key() string {
	return fmt.Sprintf("%s|%s|%d", r.Scenario, r.Scheduler, r.Seed)
}

// ResultKey is the key of a result record (see ManifestRun.Key).
func ResultKey(r metrics.Result) string {
	return ManifestRun{Scheduler: r.Scheduler, Scenario: r.Scenario, Seed: r.Seed}.Key()
}

// WriteManifest writes dir/ManifestFile.
func WriteManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644)
}

// ReadManifest reads and checks dir/ManifestFile.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
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

// SortRuns orders runs by job index.
func SortRuns(rs []ManifestRun) {
	slices.SortFunc(rs, func(a, b ManifestRun) int { return a.Index - b.Index })
}

// SortResults orders results as ResultsFile and the tables list them: by
// scenario, then scheduler, then seed.
func SortResults(rs []metrics.Result) {
	slices.SortStableFunc(rs, func(a, b metrics.Result) int {
		if c := strings.Compare(a.Scenario, b.Scenario); c != 0 {
			return c
		}
		if c := strings.Compare(a.Scheduler, b.Scheduler); c != 0 {
			return c
		}
		switch {
		case a.Seed < b.Seed:
			return -1
		case a.Seed > b.Seed:
			return 1
		}
		return 0
	})
}

// shardDir is one input of MergeShards.
type shardDir struct {
	dir     string
	m       Manifest
	results []metrics.Result
}

// MergeShards reads and checks the results directories of the shards of
// one sweep (`mpquic-bench run -shard K/N`) and returns the merged manifest
// (shard 0 of 1) and results, in table order. It refuses directories of
// different matrices, the same shard twice, a missing or incomplete shard,
// and results that do not match their manifest.
func MergeShards(dirs []string) (Manifest, []metrics.Result, error) {
	var shards []shardDir
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			return Manifest{}, nil, err
		}
		rs, err := ReadResults(filepath.Join(d, ResultsFile))
		if err != nil {
			return Manifest{}, nil, err
		}
		if err := checkShard(d, m, rs); err != nil {
			return Manifest{}, nil, err
		}
		shards = append(shards, shardDir{d, m, rs})
	}
	first := shards[0]
	byShard := map[int]string{}
	for _, s := range shards {
		if s.m.Matrix != first.m.Matrix || s.m.Jobs != first.m.Jobs || s.m.Time != first.m.Time {
			return Manifest{}, nil, fmt.Errorf("%s and %s hold different matrices (%d runs in %s time, matrix %.12s…; %d runs in %s time, matrix %.12s…): merge only shards of one `mpquic-bench run` command line",
				first.dir, s.dir, first.m.Jobs, first.m.Time, first.m.Matrix, s.m.Jobs, s.m.Time, s.m.Matrix)
		}
		if s.m.Shards != first.m.Shards {
			return Manifest{}, nil, fmt.Errorf("%s is shard %d/%d but %s is shard %d/%d: a sweep is split one way (the same N)",
				first.dir, first.m.Shard, first.m.Shards, s.dir, s.m.Shard, s.m.Shards)
		}
		if prev, dup := byShard[s.m.Shard]; dup {
			return Manifest{}, nil, fmt.Errorf("duplicate: %s and %s both hold shard %d/%d", prev, s.dir, s.m.Shard, s.m.Shards)
		}
		byShard[s.m.Shard] = s.dir
	}
	var missing []string
	for k := range first.m.Shards {
		if _, ok := byShard[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.m.Shards))
		}
	}
	if len(missing) > 0 {
		return Manifest{}, nil, fmt.Errorf("missing shards %s of the %d-run matrix", strings.Join(missing, ", "), first.m.Jobs)
	}
	merged := Manifest{Matrix: first.m.Matrix, Jobs: first.m.Jobs, Shard: 0, Shards: 1, Time: first.m.Time}
	var results []metrics.Result
	for _, s := range shards {
		merged.Runs = append(merged.Runs, s.m.Runs...)
		results = append(results, s.results...)
	}
	SortRuns(merged.Runs)
	for i, r := range merged.Runs {
		if r.Index != i { // checkShard makes this unreachable; kept as the invariant's guard
			return Manifest{}, nil, fmt.Errorf("merged runs do not cover the matrix: index %d where %d was expected", r.Index, i)
		}
	}
	SortResults(results)
	return merged, results, nil
}

// checkShard checks one directory against its own manifest: every job of
// its shard ran once, and results.jsonl holds exactly the recorded runs.
func checkShard(dir string, m Manifest, rs []metrics.Result) error {
	want := 0
	for i := m.Shard; i < m.Jobs; i += m.Shards {
		want++
	}
	seen := map[int]bool{}
	for _, r := range m.Runs {
		switch {
		case r.Index < 0 || r.Index >= m.Jobs || r.Index%m.Shards != m.Shard:
			return fmt.Errorf("%s: run %d is not in shard %d/%d of a %d-run matrix", dir, r.Index, m.Shard, m.Shards, m.Jobs)
		case seen[r.Index]:
			return fmt.Errorf("%s: duplicate: run %d is recorded twice", dir, r.Index)
		}
		seen[r.Index] = true
	}
	if len(seen) != want {
		return fmt.Errorf("%s: shard %d/%d is incomplete: %d of its %d runs recorded", dir, m.Shard, m.Shards, len(seen), want)
	}
	var a, b []string
	for _, r := range m.Runs {
		a = append(a, r.Key())
	}
	for _, r := range rs {
		b = append(b, ResultKey(r))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		return fmt.Errorf("%s: %s (%d records) does not match the runs in %s (%d): edited or mixed with another run's results",
			dir, ResultsFile, len(rs), ManifestFile, len(m.Runs))
	}
	return nil
}
