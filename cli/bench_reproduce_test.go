package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/report"
	repro "github.com/mpqsched/mpqsched/pkg/reproduce"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// TestReproduceTiny runs the reproduce pipeline on one scenario, two
// schedulers and a 64 KB download, and checks the report it writes.
func TestReproduceTiny(t *testing.T) {
	out := t.TempDir()
	plan := []repro.Paper{{
		Key:      "tiny",
		Title:    "Tiny",
		Source:   "a test",
		Setup:    []string{"One download."},
		Ours:     "hetero-2path shortened to 64 KB.",
		Matrices: []repro.Matrix{{Scenarios: scenario.Default, Schedulers: []string{"minrtt", "blest"}, MaxBytes: 64 * scenario.KB}},
		Figures:  []string{"fct_" + repro.Slug(scenario.Default+".short")},
		Reasons:  "Tiny transfers.",
		Coupling: "lia",
	}}
	claimed := -0.1
	claims := []repro.Claim{{Paper: "tiny", ID: "tiny-fct", Source: "Nobody.", Text: "BLEST is faster than minRTT",
		Scheduler: "blest", Baselines: []string{"minrtt"}, Claimed: []*float64{&claimed}, Metric: "fct",
		Scenarios: []string{scenario.Default + ".short"}, Scope: "hetero-2path.short"}}
	doc, err := reproduce(reproduceOpts{out: out, seeds: 2, parallel: 2, quiet: true}, plan, claims)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"## Claims",
		"| claim | paper's own scenarios? | scheduler vs baseline | metric | claimed | none: overall change | none: means over the scenarios | none: scenarios (CIs separate for / against) | none: verdict | coupled: overall change |",
		"| BLEST is faster than minRTT | no | blest vs minrtt | FCT | −10.0% |",
		"| Tiny | `lia` | the paper does not say; LIA stands in |",
		"### Verdicts that change with coupling",
		"### Claim: BLEST is faster than minRTT",
		"#### tiny-fct, coupling none",
		"#### tiny-fct, coupling lia",
		"### Our results: tiny, none",
		"### Our results: tiny, lia",
		"| hetero-2path.short | hetero-2path | 20MB → 64KB |",
		"reproduction/tiny/none/claims/tiny-fct.png",
		"reproduction/tiny/lia/claims/tiny-fct.png",
		"reproduction/tiny/none/plots/fct_hetero-2path.short.png",
		"reproduction/tiny/lia/plots/fct_hetero-2path.short.png",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Every verdict is one of the rule's words.
	if !strings.Contains(md, "**agree**") && !strings.Contains(md, "**partly**") && !strings.Contains(md, "**disagree**") {
		t.Errorf("claims table has no verdict:\n%s", md)
	}
	// Each column ran the matrix under its coupling, in its own directory.
	for _, coupling := range []string{"none", "lia"} {
		dir := filepath.Join(out, repro.ResultsDir, "tiny", coupling)
		rs, err := report.ReadResults(filepath.Join(dir, report.ResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 4 {
			t.Errorf("%s: got %d runs, want 2 schedulers × 2 seeds", coupling, len(rs))
		}
		for _, r := range rs {
			if r.Error != "" || !r.SHA256OK {
				t.Errorf("%s: %s seed %d failed: %q (sha256 ok %v)", coupling, r.Scheduler, r.Seed, r.Error, r.SHA256OK)
			}
			if want := []string{"minrtt+" + coupling, "blest+" + coupling}; !slices.Contains(want, r.Scheduler) {
				t.Errorf("%s: run named %q, want one of %q", coupling, r.Scheduler, want)
			}
		}
		for _, f := range []string{report.SummaryFile, report.MarkdownFile, repro.RunLogFile, "claims/tiny-fct.png"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
	}
	// -no-run rebuilds the same report from the results on disk.
	if _, err := reproduce(reproduceOpts{out: out, noRun: true, seeds: 2, quiet: true}, plan, claims); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(doc)
	if !strings.Contains(string(b2), "| BLEST is faster than minRTT | no | blest vs minrtt |") {
		t.Error("-no-run report lacks the claims table")
	}
}

// TestReproduceCouplingFlag checks -coupling: both (the default) runs both
// columns, none and paper one each, anything else is a usage error.
func TestReproduceCouplingFlag(t *testing.T) {
	for _, tc := range []struct {
		v           string
		none, paper bool
		bad         bool
	}{{"both", true, true, false}, {"none", true, false, false}, {"paper", false, true, false}, {"lia", false, false, true}, {"", false, false, true}} {
		cols, err := parseColumns(tc.v)
		if (err != nil) != tc.bad {
			t.Errorf("-coupling %q: error %v, want error %v", tc.v, err, tc.bad)
			continue
		}
		if tc.bad {
			continue
		}
		o := reproduceOpts{columns: cols}
		if o.runsColumn(repro.ColNone) != tc.none || o.runsColumn(repro.ColPaper) != tc.paper {
			t.Errorf("-coupling %q runs none %v, paper %v; want %v, %v", tc.v, o.runsColumn(repro.ColNone), o.runsColumn(repro.ColPaper), tc.none, tc.paper)
		}
	}
	var out, errb strings.Builder
	if err := reproduceCmd([]string{"-coupling", "olia", "-no-run"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "-coupling") {
		t.Errorf("reproduce -coupling olia: error %v, want a usage error naming -coupling", err)
	}
}
