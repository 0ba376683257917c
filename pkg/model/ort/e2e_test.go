package ort

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// shippedModel is testdata/edar.onnx at the module root, the model `make
// train` produces and mpquic-bench uses for "edar".
func shippedModel() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "edar.onnx")
}

// TestEdARHandoffEndToEnd: EdAR-p, with the shipped model running in
// onnxruntime, moves 20 MB intact (SHA-256 checked by bench.Transfer) over
// the Table III paths with the handoff timeline compressed 5× (path 2 hands
// off at 4-8 s and 12-16 s), in virtual time. It fails instead of skipping
// when MPQ_REQUIRE_ORT=1 and the library is missing.
func TestEdARHandoffEndToEnd(t *testing.T) {
	needLibrary(t)
	net, err := Load(shippedModel())
	if err != nil {
		t.Fatalf("the shipped model: %v", err)
	}
	defer net.Close()
	s, err := scenario.Get("edar-handoff")
	if err != nil {
		t.Fatal(err)
	}
	s = scenario.Short(s, 0, scenario.Duration(20*time.Second))
	s.Timed, s.Bytes = false, 20<<20
	r, err := bench.FromScenario(s, "edar", 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Timeout = 5 * time.Minute
	var (
		mu   sync.Mutex
		srv  *edar.Scheduler
		logs []string
	)
	r.NewScheduler = func() sched.Scheduler { return minrtt.New() } // the client only sends the request
	r.NewServerScheduler = func() sched.Scheduler {
		e := edar.New(edar.Config{Policy: net, Reward: edar.RewardWithBuffer(uint64(r.RecvWindow)),
			Log: func(l string) { mu.Lock(); logs = append(logs, l); mu.Unlock() }})
		mu.Lock()
		srv = e // session.Listen makes one to check its config; the accepted session's is the last
		mu.Unlock()
		return e
	}
	synctest.Test(t, func(t *testing.T) {
		res, _, err := bench.Transfer(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if !res.SHA256OK || res.Bytes != 20<<20 {
			t.Fatalf("data not verified: sha ok %v, %d bytes", res.SHA256OK, res.Bytes)
		}
		if res.FCTSeconds < 8 {
			t.Fatalf("FCT %.1f s: the transfer ended before the first handoff window (4-8 s) was over", res.FCTSeconds)
		}
		mu.Lock()
		st := srv.Stats()
		mu.Unlock()
		t.Logf("20 MiB in %.2f s (%.2f Mbit/s), %d TIs, %d redundant, redundant bytes %d of %d sent",
			res.FCTSeconds, res.GoodputBps/1e6, st.Intervals, st.Redundant, res.RedundantBytes, res.SentBytes)
		if st.Intervals < 50 {
			t.Errorf("only %d decision intervals", st.Intervals)
		}
		if st.PolicyErrors != 0 {
			t.Errorf("%d policy errors: %v", st.PolicyErrors, logs)
		}
	})
}
