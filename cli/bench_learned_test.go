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

	"github.com/mpqsched/mpqsched/sched/learned"
)

// A policy exported by the environment runs as the learned scheduler with
// nothing else to write: one that always chooses "every path, new data"
// (pkg/model/testdata/gym-minrtt.onnx) must do what minRTT does, within
// pkg/bench.DeterminismTolerance (2%).
func TestLearnedPolicyRuns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := benchCmd(t, "run", "-schedulers", "learned,minrtt", "-policy", "../pkg/model/testdata/gym-minrtt.onnx",
		"-max-bytes", "2000000", "-seeds", "1", "-q", "-format", "csv", "-out", out)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(recs) < 3 {
		t.Fatalf("csv %v:\n%s", err, stdout)
	}
	col := slices.Index(recs[0], "goodput_mbps")
	if col < 0 {
		col = slices.IndexFunc(recs[0], func(h string) bool { return strings.HasPrefix(h, "goodput") })
	}
	g := map[string]float64{}
	for _, r := range recs[1:] {
		g[r[0]], _ = strconv.ParseFloat(r[col], 64)
	}
	if g["learned"] == 0 || math.Abs(g["learned"]-g["minrtt"])/g["minrtt"] > 0.02 {
		t.Errorf("goodput: learned with an always-minRTT policy %v, minRTT %v (want within 2%%)\n%s", g["learned"], g["minrtt"], stdout)
	}
}

// An unusable -policy refuses the matrix, naming -edar-fallback; with it the
// runs are minRTT's and named learned-minrtt-fallback.
func TestLearnedBadPolicy(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.onnx")
	os.WriteFile(bad, []byte("not a model"), 0o644)
	args := []string{"run", "-schedulers", "learned", "-policy", bad, "-max-bytes", "200000", "-seeds", "1", "-q",
		"-format", "csv", "-out", filepath.Join(dir, "out")}
	code, _, stderr := benchCmd(t, args...)
	if code == exitOK || !strings.Contains(stderr, "-edar-fallback") || !strings.Contains(stderr, "not a readable ONNX model") {
		t.Errorf("corrupt policy: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := benchCmd(t, append(args, "-edar-fallback")...)
	if code != exitOK || !strings.Contains(stdout, "learned-minrtt-fallback") {
		t.Errorf("-edar-fallback: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// "all" takes learned only when a policy is given.
func TestAllSchedulersTakeLearnedOnlyWithPolicy(t *testing.T) {
	for _, pol := range []string{"", "x.onnx"} {
		jobs, err := buildJobs(&runFlags{schedulers: "all", scenarios: "hetero-2path", seeds: 1, seed: 1, policy: pol, or: "off"})
		if err != nil {
			t.Fatal(err)
		}
		has := slices.ContainsFunc(jobs, func(j job) bool { return j.Scheduler == learned.Name })
		if has != (pol != "") {
			t.Errorf("-policy %q: learned in the matrix = %v", pol, has)
		}
	}
}
