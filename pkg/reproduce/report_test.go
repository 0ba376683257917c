package reproduce

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
)

// TestReproduceVerdictChanges writes results by hand for both columns, so
// that one claim's verdict changes with coupling and another's does not,
// and checks both verdict columns and the list of changes.
func TestReproduceVerdictChanges(t *testing.T) {
	out := t.TempDir()
	plan := []Paper{{Key: "syn", Title: "Synthetic", Source: "a test", Ours: "hand-written results.", Coupling: "olia"}}
	claims := []claim{
		{paper: "syn", id: "flip", text: "X is faster than B", sched: "x", baselines: []string{"b"}, claimed: []float64{-0.3},
			metric: mFCT, match: matchAny("s1", "s2"), scope: "s1, s2"},
		{paper: "syn", id: "keep", text: "Y is faster than B", sched: "y", baselines: []string{"b"}, claimed: []float64{-0.3},
			metric: mFCT, match: matchAny("s1", "s2"), scope: "s1, s2"},
	}
	// FCTs per column and scheduler; three seeds each spread by ±1%.
	fct := map[string]map[string]float64{
		"none": {"b": 1.0, "x": 1.0, "y": 0.5}, // x no faster: disagree; y 50% faster: agree
		"olia": {"b": 1.0, "x": 0.5, "y": 0.5}, // x and y 50% faster: agree
	}
	for coupling, bySched := range fct {
		var rs []metrics.Result
		for _, s := range []string{"s1", "s2"} {
			for sch, f := range bySched {
				for seed, d := range []float64{-0.01, 0, 0.01} {
					rs = append(rs, metrics.Result{Scheduler: sch + "+" + coupling, Scenario: s, Seed: int64(seed + 1), FCTSeconds: f * (1 + d), SHA256OK: true})
				}
			}
		}
		dir := filepath.Join(out, ResultsDir, "syn", coupling)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONL(filepath.Join(dir, report.ResultsFile), rs); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := writeReport(out, plan, claims, map[string]map[string][]bench.Job{"syn": {}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"Uncoupled (`none`): **1 agree, 0 partly, 1 disagree, 0 n/a**. Under the papers' coupling (`olia`): **2 agree, 0 partly, 0 disagree, 0 n/a**",
		// Both columns of the claims table: none, then olia.
		"| X is faster than B | no | x vs b | FCT | −30.0% | +0.0% | 1.000 s vs 1.000 s | 2 (0 / 0) | **disagree** | −50.0% | 0.500 s vs 1.000 s | 2 (2 / 0) | **agree** | olia |",
		"| Y is faster than B | no | y vs b | FCT | −30.0% | −50.0% | 0.500 s vs 1.000 s | 2 (2 / 0) | **agree** | −50.0% | 0.500 s vs 1.000 s | 2 (2 / 0) | **agree** | olia |",
		"1 of 2 comparisons change verdict",
		"| X is faster than B | x vs b | FCT | −30.0% | olia | **disagree** (+0.0%; 1.000 s vs 1.000 s; 2 (0 / 0)) | **agree** (−50.0%; 0.500 s vs 1.000 s; 2 (2 / 0)) |",
		"| Synthetic | `olia` | the paper does not say; LIA stands in |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if i := strings.Index(md, "### Verdicts that change with coupling"); i < 0 || strings.Contains(md[i:strings.Index(md, "## Failed runs")], "Y is faster") {
		t.Errorf("the change list is missing or lists the unchanged claim")
	}
	// Without the coupled column's results, nothing can be compared.
	if err := os.RemoveAll(filepath.Join(out, ResultsDir, "syn", "olia")); err != nil {
		t.Fatal(err)
	}
	if _, err := writeReport(out, plan, claims, map[string]map[string][]bench.Job{"syn": {}}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(doc)
	if md := string(b); !strings.Contains(md, "Papers with results in only one column, whose claims read n/a (no data) in the other: syn.") || !strings.Contains(md, "### Our results: syn, olia\n\nNot run yet in this column.") {
		t.Errorf("a report with one column lacks the note on the missing column:\n%s", md)
	}
}

// writeJSONL writes rs as results.jsonl: one JSON object per line.
func writeJSONL(path string, rs []metrics.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
