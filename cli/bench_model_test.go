package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/bench/modelrun"
	"github.com/mpqsched/mpqsched/pkg/report"
)

// Issue 20, item 1: "When the EdAR model file is not found, edar and edar-o
// run minRTT, but the table, results.jsonl and summary.csv still call them
// edar and edar-o." A missing model is an error unless -edar-fallback is
// given; then the runs are named edar-minrtt-fallback in every output and
// nowhere plain "edar".
func TestEdarMissingModelNotMislabelled(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.onnx")
	out := filepath.Join(dir, "out")
	args := []string{"run", "-schedulers", "edar,minrtt", "-edar-model", missing,
		"-max-bytes", "200000", "-seeds", "1", "-q", "-format", "csv", "-out", out}

	code, stdout, stderr := benchCmd(t, args...)
	if code == exitOK {
		t.Errorf("a missing model: exit 0, want an error; stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "-edar-fallback") || strings.Contains(stderr, "make train") {
		t.Errorf("stderr %q does not name -edar-fallback, or advises make train (issue 20: \"The message's advice, make train, is not the fix\")", stderr)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "edar,") {
			t.Errorf("stdout has a run named edar without a model: %q", line)
		}
	}

	code, stdout, stderr = benchCmd(t, append(args, "-edar-fallback")...)
	if code != exitOK {
		t.Fatalf("-edar-fallback: exit %d, want 0; stderr %q", code, stderr)
	}
	jsonl, _ := os.ReadFile(filepath.Join(out, report.ResultsFile))
	summary, _ := os.ReadFile(filepath.Join(out, report.SummaryFile))
	md, _ := os.ReadFile(filepath.Join(out, "results.md"))
	for name, text := range map[string]string{"stdout": stdout, "results.jsonl": string(jsonl), "summary.csv": string(summary), "results.md": string(md)} {
		if !strings.Contains(text, "edar-minrtt-fallback") {
			t.Errorf("%s does not name the fallback edar-minrtt-fallback:\n%s", name, text)
		}
		for _, bad := range []string{"\nedar,", `"scheduler":"edar"`, "| edar |"} {
			if strings.Contains("\n"+text, bad) {
				t.Errorf("%s names minRTT's run %q:\n%s", name, bad, text)
			}
		}
	}
}

// Issue 20, item 1: "-edar-model defaults to the relative testdata/edar.onnx,
// so this happens whenever the bench runs outside the repository". Run from
// a directory outside the module, the default model is still found (beside
// the binary, or the copy built into it) and edar runs EdAR.
func TestEdarDefaultModelOutsideModule(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := benchCmd(t, "run", "-schedulers", "edar", "-max-bytes", "200000",
		"-seeds", "1", "-format", "csv", "-no-report", "-out", "out")
	if code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	if strings.Contains(stdout, "fallback") || !strings.Contains(stdout, "\nedar,") {
		t.Errorf("stdout does not show an edar run:\n%s", stdout)
	}
	if !strings.Contains(stderr, "EdAR model ") {
		t.Errorf("stderr %q does not say which model EdAR-p runs", stderr)
	}
}

// Issue 20, item 7: "EdAR-o keeps its state in ./results/edar-online,
// whatever -out says, and later runs reuse it silently." The state goes to
// DIR/edar-online for -out DIR, and a second run says it continues from it.
func TestEdarOnlineStateUnderOut(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(modelrun.EnvOnlineDir, "")
	args := []string{"run", "-schedulers", "edar-o", "-max-bytes", "200000", "-seeds", "1", "-no-report", "-out", "mine"}
	if code, _, stderr := benchCmd(t, args...); code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	if !fileExists(filepath.Join("mine", "edar-online", "model.onnx")) {
		t.Errorf("no mine/edar-online/model.onnx")
	}
	if fileExists(filepath.Join("results", "edar-online")) {
		t.Errorf("EdAR-o wrote results/edar-online, outside -out")
	}
	code, _, stderr := benchCmd(t, args...)
	if code != exitOK || !strings.Contains(stderr, "EdAR-o continues from the live model an earlier run left in "+filepath.Join("mine", "edar-online")) {
		t.Errorf("second run: exit %d, stderr %q does not say it continues from mine/edar-online", code, stderr)
	}
}
