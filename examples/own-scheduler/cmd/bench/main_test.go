package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runEnv makes this test binary run main() instead of the tests: it is then
// the bench binary, re-executing itself for virtual time like the real one.
const runEnv = "OWN_SCHEDULER_BENCH_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// bench runs the bench binary (main) with args and returns stdout, stderr
// and the exit status.
func bench(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runEnv+"=1")
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// list shows lowestloss among the schedulers, next to the built-in ones.
func TestListShowsLowestLoss(t *testing.T) {
	out, errs, code := bench(t, "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errs)
	}
	scheds, _, _ := strings.Cut(out, "SCENARIOS")
	var names []string
	sc := bufio.NewScanner(strings.NewReader(scheds))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && l != "SCHEDULERS" {
			names = append(names, l)
		}
	}
	for _, want := range []string{"lowestloss", "minrtt", "blest", "redundant"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("list's schedulers %q lack %s", names, want)
		}
	}
}

// result is the part of mpquic-bench's JSON record the test reads.
type result struct {
	Scheduler   string  `json:"scheduler"`
	Scenario    string  `json:"scenario"`
	Bytes       uint64  `json:"bytes"`
	FCT         float64 `json:"fct_s"`
	GoodputBps  float64 `json:"goodput_bps"`
	CapacityBps float64 `json:"capacity_bps"`
	SHA256OK    bool    `json:"sha256_ok"`
	Error       string  `json:"error"`
}

// lowestloss downloads hetero-2path's 20 MB (20 + 10 Mbit/s, lossless) in
// virtual time, in the bench binary's child process, and the data verifies.
// Both paths are lossless, so every tie goes to the first path with room:
// the session fills the fast path and spills onto the slow one, which must
// give more than the fast path alone and cannot exceed the capacity.
func TestLowestLossOnHetero2Path(t *testing.T) {
	out, errs, code := bench(t, "run", "-schedulers", "lowestloss", "-scenarios", "hetero-2path",
		"-seeds", "1", "-format", "json", "-q", "-out", "res")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	var r result
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if r.Scheduler != "lowestloss" || r.Scenario != "hetero-2path" || r.Error != "" || !r.SHA256OK || r.Bytes != 20<<20 {
		t.Fatalf("run: %+v", r)
	}
	if share := r.GoodputBps / r.CapacityBps; r.CapacityBps != 30e6 || share < 0.70 || share > 1 {
		t.Errorf("goodput %.2f Mbit/s = %.2f of %.0f Mbit/s capacity; want 0.70..1 (the fast path alone is 0.67)",
			r.GoodputBps/1e6, share, r.CapacityBps/1e6)
	}
	t.Logf("lowestloss on hetero-2path: %.2f Mbit/s (%.2f of capacity), FCT %.2f s", r.GoodputBps/1e6, r.GoodputBps/r.CapacityBps, r.FCT)
}
