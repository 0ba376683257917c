package modelrun

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/bench"
)

// A scheduler without a model needs no set-up: Configure leaves the run as
// it is, and the checks pass a matrix without EdAR or learned runs.
func TestNoModelNoSetup(t *testing.T) {
	r := bench.Run{Scheduler: "minrtt"}
	if err := Configure(&r, Spec{Scheduler: "minrtt"}); err != nil || r.Scheduler != "minrtt" || r.NewServerScheduler != nil {
		t.Errorf("Configure(minrtt): %v, run %q, server scheduler set %v", err, r.Scheduler, r.NewServerScheduler != nil)
	}
	runs := []Spec{{Scheduler: "minrtt", Model: "/no/such.onnx", Policy: "/no/such.onnx"}}
	if err := CheckModel(runs, logf(t)); err != nil {
		t.Errorf("CheckModel without EdAR runs: %v", err)
	}
	if err := CheckPolicy(runs, logf(t)); err != nil {
		t.Errorf("CheckPolicy without learned runs: %v", err)
	}
}

// A missing EdAR model refuses the matrix and names -edar-fallback; with
// the fallback allowed it passes, and the run becomes minRTT under the name
// edar-minrtt-fallback.
func TestMissingModel(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.onnx")
	if err := CheckModel([]Spec{{Scheduler: "edar", Model: missing}}, logf(t)); err == nil || !strings.Contains(err.Error(), "-edar-fallback") {
		t.Errorf("CheckModel: %v, want a refusal naming -edar-fallback", err)
	}
	if err := CheckModel([]Spec{{Scheduler: "edar", Model: missing, Fallback: true}}, logf(t)); err != nil {
		t.Errorf("CheckModel with the fallback: %v", err)
	}
	r := bench.Run{Scheduler: "edar"}
	if err := Configure(&r, Spec{Scheduler: "edar", Model: missing, Fallback: true}); err != nil || r.Scheduler != "edar-minrtt-fallback" {
		t.Errorf("Configure with the fallback: %v, run named %q, want edar-minrtt-fallback", err, r.Scheduler)
	}
}

func logf(t *testing.T) func(string) { return func(s string) { t.Log(s) } }
