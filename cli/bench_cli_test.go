package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	repro "github.com/mpqsched/mpqsched/pkg/reproduce"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// benchCmd runs one mpquic-bench command line and returns its exit status,
// stdout and stderr.
func benchCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runBench(args, &out, &errb)
	return code, out.String(), errb.String()
}

// -h, -help and --help print help on stdout and exit 0, at the top level,
// after every command, and after a command's arguments.
func TestHelpExitsZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // stdout must contain each
	}{
		{[]string{"-h"}, []string{"mpquic-bench run", "mpquic-bench merge -out DIR DIR...", "reproduce", "help [COMMAND]"}},
		{[]string{"--help"}, []string{"mpquic-bench report DIR"}},
		{[]string{"help"}, []string{"mpquic-bench list"}},
		{[]string{"help", "run"}, []string{"usage: mpquic-bench [run] [flags]", "-schedulers", "-shard"}},
		{[]string{"run", "-h"}, []string{"usage: mpquic-bench [run] [flags]", "-scenario-file", "-seeds"}},
		{[]string{"run", "-seeds", "2", "--help"}, []string{"-max-bytes"}},
		{[]string{"report", "-h"}, []string{"usage: mpquic-bench report DIR"}},
		{[]string{"report", "some/dir", "-h"}, []string{"usage: mpquic-bench report DIR"}},
		{[]string{"list", "-h"}, []string{"usage: mpquic-bench list"}},
		{[]string{"reproduce", "-h"}, []string{"usage: mpquic-bench reproduce", "-papers", "results/reproduce"}},
		{[]string{"merge", "-h"}, []string{"usage: mpquic-bench merge -out DIR DIR...", "-out"}},
	} {
		code, out, errs := benchCmd(t, tc.args...)
		if code != exitOK {
			t.Errorf("%q: exit %d, want 0; stderr %q", tc.args, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: stdout lacks %q:\n%s", tc.args, w, out)
			}
		}
		if strings.Contains(errs, "results.jsonl") || strings.Contains(errs, "help requested") {
			t.Errorf("%q: stderr %q: help was taken for an argument", tc.args, errs)
		}
	}
}

// Bad command lines exit 2 with a message that says what is wrong; a run
// that starts and fails exits 1.
func TestBadCommandLines(t *testing.T) {
	dir := t.TempDir()
	nine := filepath.Join(dir, "nine.json")
	s, err := scenario.Get(scenario.Default)
	if err != nil {
		t.Fatal(err)
	}
	for len(s.Paths) <= scenario.MaxPaths {
		s.Paths = append(s.Paths, s.Paths[1])
	}
	b, _ := json.Marshal(s)
	if err := os.WriteFile(nine, b, 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte("{\n  \"name\": \"x\"\n  \"bytes\": 5\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string // stderr must contain it
	}{
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate" (commands: run, report, list, reproduce, merge, help)`},
		{[]string{"help", "frobnicate"}, exitUsage, "commands: run, report, list, reproduce, merge, help"},
		{[]string{"run", "-nosuch"}, exitUsage, "flag provided but not defined: -nosuch"},
		{[]string{"-nosuch"}, exitUsage, "flag provided but not defined: -nosuch"},
		{[]string{"list", "-v"}, exitUsage, "flag provided but not defined: -v"},
		{[]string{"list", "extra"}, exitUsage, "list takes no arguments"},
		{[]string{"report"}, exitUsage, "report takes one results directory"},
		{[]string{"report", "a", "b"}, exitUsage, "report takes one results directory"},
		{[]string{"run", "-seeds", "-1"}, exitUsage, "-seeds -1: want 1..10000"},
		{[]string{"run", "-seeds", "0"}, exitUsage, "-seeds 0: want 1..10000"},
		{[]string{"run", "-seeds", "1000000"}, exitUsage, "-seeds 1000000: want 1..10000"},
		{[]string{"run", "-seeds", "three"}, exitUsage, `invalid value "three" for flag -seeds`},
		{[]string{"run", "-parallel", "0"}, exitUsage, "-parallel 0: want 1..4096"},
		{[]string{"run", "-max-bytes", "-5"}, exitUsage, "-max-bytes -5: want >= 0"},
		{[]string{"run", "-scenario-file", nine, "-scenarios", "hetero-2path"}, exitUsage, "-scenario-file and -scenarios contradict each other"},
		{[]string{"run", "-format", "xml"}, exitUsage, `-format "xml": want table, json or csv`},
		{[]string{"run", "-opportunistic", "maybe"}, exitUsage, `-opportunistic "maybe": want off, on or both`},
		{[]string{"run", "-coupling", "lia,cubic"}, exitUsage, `-coupling "lia,cubic": cc: unknown coupling "cubic"`},
		{[]string{"run", "-shard", "3/3"}, exitUsage, "K = 3 outside [0, 2]; K counts from 0"},
		{[]string{"run", "-shard", "0/0"}, exitUsage, "N = 0 shards outside [1, 100000]"},
		{[]string{"run", "-shard", "half"}, exitUsage, "want K/N, such as 0/4"},
		{[]string{"run", "stray"}, exitUsage, `run: unexpected arguments ["stray"]`},
		{[]string{"reproduce", "-seeds", "0"}, exitUsage, "-seeds 0: want 1..10000"},
		{[]string{"reproduce", "-papers", "nosuch"}, exitUsage, `-papers: unknown paper "nosuch"`},
		{[]string{"merge", "a"}, exitUsage, "merge: -out DIR is required"},
		{[]string{"merge", "-out", dir}, exitUsage, "merge: give the shards' result directories"},
		{[]string{"merge", "-out", dir, dir}, exitUsage, "is also an input"},
		// Issue 20, item 5: "An unknown -schedulers wrr or a missing
		// -scenario-file exits 1, not the documented 2."
		{[]string{"run", "-schedulers", "nosuch"}, exitUsage, `unknown scheduler "nosuch"`},
		{[]string{"run", "-schedulers", "minrtt,wrr"}, exitUsage, `-schedulers: sched: unknown scheduler "wrr"`},
		{[]string{"run", "-scenarios", "nosuch"}, exitUsage, `-scenarios: scenario: no library scenario "nosuch"`},
		{[]string{"run", "-scenario-file", filepath.Join(dir, "missing.json")}, exitUsage, "-scenario-file: "},
		{[]string{"run", "-scenario-file", nine}, exitFail, "paths: 9 paths; a session takes at most 8"},
		{[]string{"run", "-scenario-file", broken}, exitFail, "broken.json: scenario: line 3, column 3: invalid character"},
		{[]string{"merge", "-out", filepath.Join(dir, "m"), dir}, exitFail, "has no matrix.json"},
	} {
		code, out, errs := benchCmd(t, tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tc.args, code, tc.code, errs)
		}
		if !strings.Contains(errs, tc.want) {
			t.Errorf("%q: stderr %q lacks %q", tc.args, errs, tc.want)
		}
		if tc.code == exitUsage && !strings.Contains(errs, "mpquic-bench help") {
			t.Errorf("%q: stderr %q does not point to the help", tc.args, errs)
		}
		if out != "" {
			t.Errorf("%q: stdout %q, want nothing", tc.args, out)
		}
	}
}

// list prints every scenario's description in full (wrapped, never cut) and
// keeps its lines within listWidth unless one word is longer.
func TestListFullDescriptions(t *testing.T) {
	code, out, errs := benchCmd(t, "list")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	flat := strings.Join(strings.Fields(out), " ")
	long := 0
	for _, s := range scenario.Library() {
		d := strings.Join(strings.Fields(s.Description), " ")
		if !strings.Contains(flat, s.Name+" "+d) {
			t.Errorf("list lacks %s's full description %q", s.Name, d)
		}
		long = max(long, len([]rune(d)))
	}
	if long <= 100 {
		t.Errorf("longest description has %d characters; the test needs one that must wrap", long)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > listWidth && len(strings.Fields(l)) > 2 {
			t.Errorf("line of %d characters > %d: %q", n, listWidth, l)
		}
	}
	if !strings.Contains(out, "\n  minrtt\n") {
		t.Errorf("list lacks the built-in minrtt:\n%s", out)
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"a bb ccc", 4, []string{"a bb", "ccc"}},
		{"a bb ccc", 8, []string{"a bb ccc"}},
		{"× × ×", 3, []string{"× ×", "×"}},
		{"longword x", 4, []string{"longword", "x"}},
	} {
		got := wrap(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// reproduce without -out works under results/reproduce, never in docs/:
// -no-run in an empty directory looks for its results there (and, finding
// none, fails without creating docs/).
func TestReproduceDefaultOut(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errs := benchCmd(t, "reproduce", "-no-run", "-q")
	if want := filepath.Join("results", "reproduce", repro.ResultsDir); code != exitFail || !strings.Contains(errs, "no results under "+want) {
		t.Errorf("exit %d, stderr %q; want 1 and a look under %s", code, errs, want)
	}
	if _, err := os.Stat("docs"); !os.IsNotExist(err) {
		t.Errorf("reproduce created docs/ (stat: %v)", err)
	}
}
