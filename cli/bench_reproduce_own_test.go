package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	repro "github.com/mpqsched/mpqsched/pkg/reproduce"
)

// Two opposite claims on one scenario: the same runs must agree with one
// and disagree with the other, and claims.md says so.
func TestReproduceOwnClaims(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.json")
	const claims = `{"claims": [
	 {"paper": "mine", "id": "rr-over-redundant", "source": "A test.", "text": "Round-robin has more goodput than redundant",
	  "scheduler": "roundrobin", "baselines": ["redundant"], "metric": "goodput", "scenarios": ["hetero-2path"]},
	 {"paper": "mine", "id": "redundant-over-rr", "source": "A test.", "text": "Redundant has more goodput than round-robin",
	  "scheduler": "redundant", "baselines": ["roundrobin"], "metric": "goodput", "scenarios": ["hetero-2path"]}]}`
	if err := os.WriteFile(file, []byte(claims), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := reproduceCmd([]string{"-claims", file, "-seeds", "2", "-out", dir, "-q"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[1], "agree") || strings.HasSuffix(lines[1], "disagree") || !strings.HasSuffix(lines[2], "disagree") {
		t.Errorf("verdicts:\n%s\nwant rr-over-redundant agree, redundant-over-rr disagree", stdout.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, "claims", "mine", repro.OwnClaimsDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Claims of mine.json", "| rr-over-redundant | roundrobin vs redundant | goodput | higher |", "## redundant-over-rr"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("claims.md lacks %q", want)
		}
	}
}

func TestReproduceOwnClaimsRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.json")
	os.WriteFile(file, []byte(`{"claims": [{"paper": "p", "id": "a", "source": "s", "text": "t", "scheduler": "minrtt", "baselines": ["blest"], "metric": "fct", "scenarios": ["no-such-scenario"]}]}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-claims", file, "-papers", "prs"}, "-claims with -papers or -coupling"},
		{[]string{"-claims", file, "-out", dir}, "claims[0] (a).scenarios"},
		{[]string{"-claims", filepath.Join(dir, "none.json")}, "no such file"},
	} {
		var o, e bytes.Buffer
		err := reproduceCmd(append(tc.args, "-q"), &o, &e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reproduce %q: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
