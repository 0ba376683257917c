package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// TestReproduceTiny runs the reproduce pipeline on one scenario, two
// schedulers and a 64 KB download, and checks the report it writes.
func TestReproduceTiny(t *testing.T) {
	out := t.TempDir()
	plan := []paperPlan{{
		key:      "tiny",
		title:    "Tiny",
		source:   "a test",
		setup:    []string{"One download."},
		ours:     "hetero-2path shortened to 64 KB.",
		matrices: []matrix{{scenarios: scenario.Default, schedulers: []string{"minrtt", "blest"}, maxBytes: 64 * scenario.KB}},
		figures:  []string{reportFigure("fct", scenario.Default+".short")},
		reasons:  "Tiny transfers.",
		coupling: "lia",
	}}
	claims := []claim{{paper: "tiny", id: "tiny-fct", source: "Nobody.", text: "BLEST is faster than minRTT",
		sched: "blest", baselines: []string{"minrtt"}, claimed: []float64{-0.1}, metric: mFCT,
		match: matchAny(scenario.Default + ".short"), scope: "hetero-2path.short"}}
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
		dir := filepath.Join(out, reproDir, "tiny", coupling)
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
		for _, f := range []string{report.SummaryFile, report.MarkdownFile, reproRunLog, "claims/tiny-fct.png"} {
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

// TestReproPlanCoupling checks the coupled column of each paper: a coupled
// rule; LIA from LLHD's own words ("the CCA was LIA"); LIA where the paper
// does not say; and the quoted sentences verbatim from the paper's text.
func TestReproPlanCoupling(t *testing.T) {
	want := map[string]struct {
		coupling string
		said     bool
	}{
		"prs":     {"lia", false}, // §5 names only the kernel, v0.96
		"llhd":    {"lia", true},  // §4: "the CCA was LIA"
		"fprs":    {"lia", false}, // names only the kernel, 4.19.105 and mptcpv9
		"classic": {"lia", false}, // the papers' texts are not here
	}
	plan := reproPlan()
	if len(plan) != len(want) {
		t.Errorf("plan has %d papers, want %d", len(plan), len(want))
	}
	papers := filepath.Join("..", "..", "shared", "papers")
	for _, p := range plan {
		w, ok := want[p.key]
		if !ok {
			t.Errorf("%s: no expected coupling", p.key)
			continue
		}
		if p.coupling != w.coupling || p.couplingSaid != w.said {
			t.Errorf("%s: coupling %q (said %v), want %q (said %v)", p.key, p.coupling, p.couplingSaid, w.coupling, w.said)
		}
		if got := p.couplingOf(colNone); got != "none" {
			t.Errorf("%s: column none runs %q", p.key, got)
		}
		if got := p.couplingOf(colPaper); got != w.coupling {
			t.Errorf("%s: column paper runs %q, want %q", p.key, got, w.coupling)
		}
		if p.couplingSaid && !strings.Contains(strings.ToLower(strings.Join(p.couplingQuotes, " ")), p.coupling) {
			t.Errorf("%s: said to name %s, but its quotes do not: %q", p.key, p.coupling, p.couplingQuotes)
		}
		if (p.text == "") != (len(p.couplingQuotes) == 0) {
			t.Errorf("%s: text %q with %d quotes: a paper with a text is quoted, one without is not", p.key, p.text, len(p.couplingQuotes))
		}
		if p.text == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(papers, p.text))
		if err != nil {
			t.Logf("%s: quotes not checked: %v", p.key, err)
			continue
		}
		body := strings.Join(strings.Fields(string(b)), " ")
		for _, q := range p.couplingQuotes {
			if !strings.Contains(body, strings.Join(strings.Fields(q), " ")) {
				t.Errorf("%s: quote not in %s: %q", p.key, p.text, q)
			}
		}
	}
}

// TestReproJobsPerColumn checks that both columns run the same matrix, the
// uncoupled one under "none" and the other under the paper's coupling.
func TestReproJobsPerColumn(t *testing.T) {
	for _, p := range reproPlan() {
		none, err := paperJobs(p, 2, p.couplingOf(colNone))
		if err != nil {
			t.Fatalf("%s: %v", p.key, err)
		}
		coupled, err := paperJobs(p, 2, p.couplingOf(colPaper))
		if err != nil {
			t.Fatalf("%s: %v", p.key, err)
		}
		if len(none) == 0 || len(none) != len(coupled) {
			t.Errorf("%s: %d uncoupled runs, %d coupled: want the same non-empty matrix", p.key, len(none), len(coupled))
			continue
		}
		for i := range none {
			u, c := none[i], coupled[i]
			if u.Coupling != "none" || c.Coupling != p.coupling {
				t.Errorf("%s run %d: couplings %q and %q, want none and %q", p.key, i, u.Coupling, c.Coupling, p.coupling)
			}
			if u.Scheduler != c.Scheduler || u.Scenario.Name != c.Scenario.Name || u.Seed != c.Seed {
				t.Errorf("%s run %d: %s/%s/%d uncoupled but %s/%s/%d coupled", p.key, i, u.Scheduler, u.Scenario.Name, u.Seed, c.Scheduler, c.Scenario.Name, c.Seed)
			}
		}
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
		if o.runsColumn(colNone) != tc.none || o.runsColumn(colPaper) != tc.paper {
			t.Errorf("-coupling %q runs none %v, paper %v; want %v, %v", tc.v, o.runsColumn(colNone), o.runsColumn(colPaper), tc.none, tc.paper)
		}
	}
	var out, errb strings.Builder
	if err := reproduceCmd([]string{"-coupling", "olia", "-no-run"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "-coupling") {
		t.Errorf("reproduce -coupling olia: error %v, want a usage error naming -coupling", err)
	}
}

// TestReproduceVerdictChanges writes results by hand for both columns, so
// that one claim's verdict changes with coupling and another's does not,
// and checks both verdict columns and the list of changes.
func TestReproduceVerdictChanges(t *testing.T) {
	out := t.TempDir()
	plan := []paperPlan{{key: "syn", title: "Synthetic", source: "a test", ours: "hand-written results.", coupling: "olia"}}
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
		dir := filepath.Join(out, reproDir, "syn", coupling)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeResults(filepath.Join(dir, report.ResultsFile), rs); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := writeReproduction(out, plan, claims, map[string]map[string][]job{"syn": {}})
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
	if err := os.RemoveAll(filepath.Join(out, reproDir, "syn", "olia")); err != nil {
		t.Fatal(err)
	}
	if _, err := writeReproduction(out, plan, claims, map[string]map[string][]job{"syn": {}}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(doc)
	if md := string(b); !strings.Contains(md, "Papers with results in only one column, whose claims read n/a (no data) in the other: syn.") || !strings.Contains(md, "### Our results: syn, olia\n\nNot run yet in this column.") {
		t.Errorf("a report with one column lacks the note on the missing column:\n%s", md)
	}
}
