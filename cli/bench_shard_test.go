package cli

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/report"
)

// A 3-way sharded run of a small matrix (2 schedulers × 1 short scenario × 2
// seeds, virtual time), merged, gives the summary.csv rows of the unsharded
// run: the same groups and run counts exactly, and every figure that the
// README's repeatability note covers (goodput and FCT of a lossless
// scenario: two runs of one seed agree within 2%) within 2%.
func TestShardMergeEquivalence(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 8 transfers")
	}
	base := t.TempDir()
	matrix := []string{"run", "-schedulers", "minrtt,roundrobin", "-scenarios", "hetero-2path", "-max-bytes", "2000000", "-seeds", "2", "-parallel", "2", "-q", "-format", "csv"}
	dir := func(name string) string { return filepath.Join(base, name) }
	run := func(out string, extra ...string) {
		t.Helper()
		args := append(slices.Clone(matrix), append([]string{"-out", out}, extra...)...)
		if code, _, errs := benchCmd(t, args...); code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errs)
		}
	}
	run(dir("whole"))
	var shards []string
	for k := range 3 {
		shards = append(shards, dir("shard"+strconv.Itoa(k)))
		run(shards[k], "-shard", strconv.Itoa(k)+"/3", "-no-report")
	}
	code, _, errs := benchCmd(t, append([]string{"merge", "-q", "-out", dir("merged")}, shards...)...)
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}

	whole, merged := readCSV(t, dir("whole")), readCSV(t, dir("merged"))
	if len(whole) != 3 || len(merged) != len(whole) { // header + 2 schedulers
		t.Fatalf("summary rows: whole %d, merged %d; want 3 each", len(whole), len(merged))
	}
	col := map[string]int{}
	for i, h := range whole[0] {
		col[h] = i
	}
	if !slices.Equal(whole[0], merged[0]) {
		t.Fatalf("headers differ: %q vs %q", whole[0], merged[0])
	}
	for i := 1; i < len(whole); i++ {
		w, m := whole[i], merged[i]
		for _, c := range []string{"scenario", "scheduler", "runs", "failed", "capacity_bps", "fct_lower_bound_s"} {
			if w[col[c]] != m[col[c]] {
				t.Errorf("row %d %s: unsharded %q, merged %q", i, c, w[col[c]], m[col[c]])
			}
		}
		if w[col["runs"]] != "2" || w[col["failed"]] != "0" {
			t.Errorf("row %d: %s runs, %s failed; want 2 and 0", i, w[col["runs"]], w[col["failed"]])
		}
		for _, c := range []string{"goodput_bps_mean", "fct_s_mean"} {
			a, _ := strconv.ParseFloat(w[col[c]], 64)
			b, _ := strconv.ParseFloat(m[col[c]], 64)
			if !(a > 0 && math.Abs(a-b)/a <= 0.02) {
				t.Errorf("row %d (%s) %s: unsharded %v, merged %v: more than 2%% apart", i, w[col["scheduler"]], c, a, b)
			}
		}
	}

	// Merging is exact: one directory merged on its own reproduces its
	// summary.csv byte for byte.
	if code, _, errs := benchCmd(t, "merge", "-q", "-out", dir("remerged"), dir("whole")); code != exitOK {
		t.Fatalf("merge of the whole run: exit %d: %s", code, errs)
	}
	a, _ := os.ReadFile(filepath.Join(dir("whole"), report.SummaryFile))
	b, _ := os.ReadFile(filepath.Join(dir("remerged"), report.SummaryFile))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("a run merged alone changed summary.csv:\n%s\nvs\n%s", a, b)
	}

	// Refusals: a duplicate shard, a missing shard, another matrix.
	run(dir("other"), "-shard", "1/3", "-no-report", "-seed", "5")
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{[]string{shards[0], shards[1], shards[2], shards[1]}, "duplicate: " + shards[1] + " and " + shards[1] + " both hold shard 1/3"},
		{[]string{shards[0], shards[2]}, "missing shards 1/3 of the 4-run matrix"},
		{[]string{shards[0], dir("other"), shards[2]}, "hold different matrices"},
		{[]string{shards[0], dir("whole")}, "a sweep is split one way"},
	} {
		code, _, errs := benchCmd(t, append([]string{"merge", "-q", "-out", dir("bad")}, tc.dirs...)...)
		if code != exitFail || !strings.Contains(errs, tc.want) {
			t.Errorf("merge %q: exit %d, stderr %q; want 1 and %q", tc.dirs, code, errs, tc.want)
		}
	}
	// A results file that no longer matches its manifest.
	rs, err := report.ReadResults(filepath.Join(shards[0], report.ResultsFile))
	if err != nil || len(rs) != 2 {
		t.Fatalf("shard 0: %d results, %v; want 2", len(rs), err)
	}
	rs[1].Seed = 99
	if err := writeResults(filepath.Join(shards[0], report.ResultsFile), rs); err != nil {
		t.Fatal(err)
	}
	code, _, errs = benchCmd(t, append([]string{"merge", "-q", "-out", dir("bad")}, shards...)...)
	if code != exitFail || !strings.Contains(errs, "does not match the runs in matrix.json") {
		t.Errorf("merge of an edited shard: exit %d, stderr %q", code, errs)
	}
}

// readCSV reads dir/summary.csv.
func readCSV(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
