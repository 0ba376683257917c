package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	plan := Plan()
	if len(plan) != len(want) {
		t.Errorf("plan has %d papers, want %d", len(plan), len(want))
	}
	papers := filepath.Join("..", "..", "..", "shared", "papers")
	for _, p := range plan {
		w, ok := want[p.Key]
		if !ok {
			t.Errorf("%s: no expected coupling", p.Key)
			continue
		}
		if p.Coupling != w.coupling || p.CouplingSaid != w.said {
			t.Errorf("%s: coupling %q (said %v), want %q (said %v)", p.Key, p.Coupling, p.CouplingSaid, w.coupling, w.said)
		}
		if got := p.CouplingOf(ColNone); got != "none" {
			t.Errorf("%s: column none runs %q", p.Key, got)
		}
		if got := p.CouplingOf(ColPaper); got != w.coupling {
			t.Errorf("%s: column paper runs %q, want %q", p.Key, got, w.coupling)
		}
		if p.CouplingSaid && !strings.Contains(strings.ToLower(strings.Join(p.CouplingQuotes, " ")), p.Coupling) {
			t.Errorf("%s: said to name %s, but its quotes do not: %q", p.Key, p.Coupling, p.CouplingQuotes)
		}
		if (p.Text == "") != (len(p.CouplingQuotes) == 0) {
			t.Errorf("%s: text %q with %d quotes: a paper with a text is quoted, one without is not", p.Key, p.Text, len(p.CouplingQuotes))
		}
		if p.Text == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(papers, p.Text))
		if err != nil {
			t.Logf("%s: quotes not checked: %v", p.Key, err)
			continue
		}
		body := strings.Join(strings.Fields(string(b)), " ")
		for _, q := range p.CouplingQuotes {
			if !strings.Contains(body, strings.Join(strings.Fields(q), " ")) {
				t.Errorf("%s: quote not in %s: %q", p.Key, p.Text, q)
			}
		}
	}
}

// TestReproJobsPerColumn checks that both columns run the same matrix, the
// uncoupled one under "none" and the other under the paper's coupling.
func TestReproJobsPerColumn(t *testing.T) {
	for _, p := range Plan() {
		none, err := p.Jobs(2, p.CouplingOf(ColNone))
		if err != nil {
			t.Fatalf("%s: %v", p.Key, err)
		}
		coupled, err := p.Jobs(2, p.CouplingOf(ColPaper))
		if err != nil {
			t.Fatalf("%s: %v", p.Key, err)
		}
		if len(none) == 0 || len(none) != len(coupled) {
			t.Errorf("%s: %d uncoupled runs, %d coupled: want the same non-empty matrix", p.Key, len(none), len(coupled))
			continue
		}
		for i := range none {
			u, c := none[i], coupled[i]
			if u.Coupling != "none" || c.Coupling != p.Coupling {
				t.Errorf("%s run %d: couplings %q and %q, want none and %q", p.Key, i, u.Coupling, c.Coupling, p.Coupling)
			}
			if u.Scheduler != c.Scheduler || u.Scenario.Name != c.Scenario.Name || u.Seed != c.Seed {
				t.Errorf("%s run %d: %s/%s/%d uncoupled but %s/%s/%d coupled", p.Key, i, u.Scheduler, u.Scenario.Name, u.Seed, c.Scheduler, c.Scenario.Name, c.Seed)
			}
		}
	}
}
