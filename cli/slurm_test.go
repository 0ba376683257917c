package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sweepScript runs deploy/slurm/sweep.sbatch as Slurm would run array task
// 0 of an array, with env added, a stand-in sbatch and a stand-in bench
// binary that both record their arguments. It returns the script's combined
// output, what sbatch and the bench binary were given, and its error.
func sweepScript(t *testing.T, env ...string) (out, sbatch, bench string, err error) {
	t.Helper()
	script, aerr := filepath.Abs("../deploy/slurm/sweep.sbatch")
	if aerr != nil {
		t.Fatal(aerr)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	record := func(name, log string) {
		os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > "+log+"\n"), 0o755)
	}
	record("sbatch", filepath.Join(dir, "sbatch.args"))
	record("mpquic-bench", filepath.Join(dir, "bench.args"))
	cmd := exec.Command("bash", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "BENCH=bin/mpquic-bench",
		"SLURM_ARRAY_JOB_ID=7", "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=2", "SLURM_ARRAY_TASK_COUNT=3")
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	sb, _ := os.ReadFile(filepath.Join(dir, "sbatch.args"))
	bb, _ := os.ReadFile(filepath.Join(dir, "bench.args"))
	return string(b), string(sb), string(bb), err
}

// Issue 20, item 5: "when a shard fails, the merge job stays PENDING
// (DependencyNeverSatisfied) until someone cancels it. This happens with a
// quoted scenario in MATRIX (-scenarios 'hetero-*' keeps its quotes), an
// array with a step, or a submission from outside the repository root."
func TestSweepSbatch(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out, sb, bench, err := sweepScript(t, "MATRIX=-schedulers minrtt -scenarios 'hetero-*' -seeds 2")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(sb, "--dependency=afterany:7\n") {
		t.Errorf("the merge job does not wait with afterany (it would stay pending after a failed shard):\n%s", sb)
	}
	if !strings.Contains(bench, "\n-scenarios\nhetero-*\n") || !strings.Contains(bench, "-shard\n0/3\n") {
		t.Errorf("bench arguments (quotes must be removed):\n%s", bench)
	}
	out, _, _, err = sweepScript(t, "SLURM_ARRAY_TASK_STEP=2", "SLURM_ARRAY_TASK_MAX=4")
	if err == nil || !strings.Contains(out, "without a step") {
		t.Errorf("an array with a step: err %v, output %q", err, out)
	}
	out, sb, _, err = sweepScript(t, "BENCH=nowhere/mpquic-bench")
	if err == nil || !strings.Contains(out, "submit from the repository root") || sb != "" {
		t.Errorf("no bench binary: err %v, output %q, sbatch %q", err, out, sb)
	}
}
