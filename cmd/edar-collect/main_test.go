package main

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/mpqsched/mpqsched/sched/edar"
)

// One short flow of setting i per policy: the file holds whole transitions
// of the flow's fixed mode (after the first, redundant, TI), every one but
// the last not done, the last done (EndOfFlow), and the reward uses the
// setting's 128 KB receive buffer.
func TestCollectOneFlow(t *testing.T) {
	*minBytes, *maxBytes = 1<<20, 2<<20
	for _, mode := range []edar.Mode{edar.Normal, edar.Redundant} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "i"), 0o755)
		s := flowSpec{Setting: "i", Seed: 3, Mode: mode, File: filepath.Join(dir, "i", "flow.edar")}
		var rec flowRecord
		synctest.Test(t, func(t *testing.T) { rec = collect(s) })
		if rec.Error != "" {
			t.Fatalf("%s: %s", mode, rec.Error)
		}
		if rec.ReceiveBufferB != 128<<10 {
			t.Errorf("receive buffer %d, want the setting's 128 KB", rec.ReceiveBufferB)
		}
		f, err := os.Open(s.File)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := edar.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) < 10 || uint64(len(ts)) != rec.Transitions {
			t.Fatalf("%s: %d transitions in the file, %d recorded", mode, len(ts), rec.Transitions)
		}
		for i, tr := range ts {
			if tr.Done != (i == len(ts)-1) {
				t.Fatalf("%s: transition %d of %d has done=%v", mode, i, len(ts), tr.Done)
			}
			if i > 0 && tr.A != mode {
				t.Fatalf("%s: transition %d has action %s", mode, i, tr.A)
			}
			// The second path joins while the transfer runs (bench.Transfer's
			// join policy), so the first transitions may see one subflow.
			if tr.S.N < 1 || tr.S.N > 2 || i > 0 && tr.S.N < ts[i-1].S.N {
				t.Fatalf("%s: transition %d observes %d subflows after %d", mode, i, tr.S.N, ts[max(i-1, 0)].S.N)
			}
		}
		if last := ts[len(ts)-1].S.N; last != 2 {
			t.Fatalf("%s: the last transition observes %d subflows, want 2", mode, last)
		}
		t.Logf("%s: %.1f MB, FCT %.1f s, %d transitions, %d without a report", mode, float64(rec.Bytes)/1e6, rec.FCTSeconds, len(ts), rec.NoReport)
	}
}
