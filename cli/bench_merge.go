package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
)

const mergeWhat = `Merges the result directories of the shards of one sweep (run -shard K/N,
the same flags otherwise) into OUT: results.jsonl, matrix.json and the report,
the same as one unsharded run of the matrix would have written (apart from
wall times). Refuses directories of different matrices, the same shard twice,
a missing or incomplete shard, and results that do not match their matrix.json.`

func mergeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge", "merge -out DIR DIR...", mergeWhat, stdout)
	out := fs.String("out", "", "directory for the merged results and report (required)")
	noReport := fs.Bool("no-report", false, "do not write the Markdown report and plots")
	quiet := fs.Bool("q", false, "no summary line on stderr")
	dirs, err := fs.parse(args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("merge: -out DIR is required")
	}
	if len(dirs) == 0 {
		return usagef("merge: give the shards' result directories")
	}
	for _, d := range dirs {
		if filepath.Clean(d) == filepath.Clean(*out) {
			return usagef("merge: -out %s is also an input; write the merge elsewhere", *out)
		}
	}
	m, results, err := mergeDirs(dirs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := writeResults(filepath.Join(*out, report.ResultsFile), results); err != nil {
		return err
	}
	if err := writeManifest(*out, m); err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stderr, "mpquic-bench: merged %d runs from %d shards → %s\n", len(results), len(dirs), *out)
	}
	if !*noReport && len(results) > 0 {
		md, err := report.Markdown(*out)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		fmt.Fprintln(stdout, md)
	}
	return nil
}

// shardDir is one input of merge.
type shardDir struct {
	dir     string
	m       manifest
	results []metrics.Result
}

// mergeDirs reads and checks the shards in dirs and returns the merged
// manifest (shard 0 of 1) and results, in table order.
func mergeDirs(dirs []string) (manifest, []metrics.Result, error) {
	var shards []shardDir
	for _, d := range dirs {
		m, err := readManifest(d)
		if err != nil {
			return manifest{}, nil, err
		}
		rs, err := report.ReadResults(filepath.Join(d, report.ResultsFile))
		if err != nil {
			return manifest{}, nil, err
		}
		if err := checkShard(d, m, rs); err != nil {
			return manifest{}, nil, err
		}
		shards = append(shards, shardDir{d, m, rs})
	}
	first := shards[0]
	byShard := map[int]string{}
	for _, s := range shards {
		if s.m.Matrix != first.m.Matrix || s.m.Jobs != first.m.Jobs || s.m.Time != first.m.Time {
			return manifest{}, nil, fmt.Errorf("%s and %s hold different matrices (%d runs in %s time, matrix %.12s…; %d runs in %s time, matrix %.12s…): merge only shards of one `mpquic-bench run` command line",
				first.dir, s.dir, first.m.Jobs, first.m.Time, first.m.Matrix, s.m.Jobs, s.m.Time, s.m.Matrix)
		}
		if s.m.Shards != first.m.Shards {
			return manifest{}, nil, fmt.Errorf("%s is shard %d/%d but %s is shard %d/%d: a sweep is split one way (the same N)",
				first.dir, first.m.Shard, first.m.Shards, s.dir, s.m.Shard, s.m.Shards)
		}
		if prev, dup := byShard[s.m.Shard]; dup {
			return manifest{}, nil, fmt.Errorf("duplicate: %s and %s both hold shard %d/%d", prev, s.dir, s.m.Shard, s.m.Shards)
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
		return manifest{}, nil, fmt.Errorf("missing shards %s of the %d-run matrix", strings.Join(missing, ", "), first.m.Jobs)
	}
	merged := manifest{Matrix: first.m.Matrix, Jobs: first.m.Jobs, Shard: 0, Shards: 1, Time: first.m.Time}
	var results []metrics.Result
	for _, s := range shards {
		merged.Runs = append(merged.Runs, s.m.Runs...)
		results = append(results, s.results...)
	}
	sortRuns(merged.Runs)
	for i, r := range merged.Runs {
		if r.Index != i { // checkShard makes this unreachable; kept as the invariant's guard
			return manifest{}, nil, fmt.Errorf("merged runs do not cover the matrix: index %d where %d was expected", r.Index, i)
		}
	}
	sortResults(results)
	return merged, results, nil
}

// checkShard checks one directory against its own manifest: every job of
// its shard ran once, and results.jsonl holds exactly the recorded runs.
func checkShard(dir string, m manifest, rs []metrics.Result) error {
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
		a = append(a, r.key())
	}
	for _, r := range rs {
		b = append(b, resultKey(r))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		return fmt.Errorf("%s: %s (%d records) does not match the runs in %s (%d): edited or mixed with another run's results",
			dir, report.ResultsFile, len(rs), ManifestFile, len(m.Runs))
	}
	return nil
}
