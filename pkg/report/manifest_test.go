package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// writeShard writes one shard's results directory: results.jsonl and its
// manifest, for shard k of n of a matrix of runs jobs (one scheduler, seeds
// 1..jobs).
func writeShard(t *testing.T, k, n, jobs int) string {
	t.Helper()
	dir := t.TempDir()
	m := Manifest{Matrix: "abc", Jobs: jobs, Shard: k, Shards: n, Time: "virtual"}
	f, err := os.Create(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for i := k; i < jobs; i += n {
		r := metrics.Result{Scheduler: "minrtt", Scenario: "s", Seed: int64(i + 1), SHA256OK: true}
		m.Runs = append(m.Runs, ManifestRun{Index: i, Scheduler: r.Scheduler, Scenario: r.Scenario, Seed: r.Seed})
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The shards of one matrix merge into the unsharded run's manifest and
// results; a missing or repeated shard is refused, naming it.
func TestMergeShards(t *testing.T) {
	a, b := writeShard(t, 0, 2, 5), writeShard(t, 1, 2, 5)
	m, rs, err := MergeShards([]string{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if m.Shard != 0 || m.Shards != 1 || len(m.Runs) != 5 || len(rs) != 5 || rs[0].Seed != 1 || rs[4].Seed != 5 {
		t.Errorf("merged shard %d/%d, %d runs, %d results: want 0/1 with all 5 in order", m.Shard, m.Shards, len(m.Runs), len(rs))
	}
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{[]string{a}, "missing shards 1/2"},
		{[]string{a, a, b}, "duplicate"},
	} {
		if _, _, err := MergeShards(tc.dirs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("merge of %d directories: error %v, want %q", len(tc.dirs), err, tc.want)
		}
	}
}
