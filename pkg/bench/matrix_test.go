package bench

import (
	"errors"
	"testing"

	_ "github.com/mpqsched/mpqsched/sched/blest"
	_ "github.com/mpqsched/mpqsched/sched/minrtt"
)

// A matrix expands scenario by scenario, then seed, then scheduler, then
// coupling, each job carrying its index; a name that matches nothing is a
// *MatrixError naming the field.
func TestMatrixJobs(t *testing.T) {
	m := Matrix{Schedulers: "minrtt,blest", Scenarios: "hetero-2path", Seeds: 2, Seed: 7, MaxBytes: 64 << 10, Couplings: "none,lia"}
	jobs, err := m.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2*2*2 {
		t.Fatalf("%d jobs, want 2 seeds × 2 schedulers × 2 couplings", len(jobs))
	}
	want := []struct {
		sched    string
		seed     int64
		coupling string
	}{{"minrtt", 7, "none"}, {"minrtt", 7, "lia"}, {"blest", 7, "none"}, {"blest", 7, "lia"}, {"minrtt", 8, "none"}}
	for i, w := range want {
		j := jobs[i]
		if j.Index != i || j.Scheduler != w.sched || j.Seed != w.seed || j.Coupling != w.coupling || j.Scenario.Bytes != 64<<10 {
			t.Errorf("job %d: %d %s seed %d %q, %d bytes; want %s seed %d %q, 65536 bytes", i, j.Index, j.Scheduler, j.Seed, j.Coupling, j.Scenario.Bytes, w.sched, w.seed, w.coupling)
		}
	}
	for _, tc := range []struct {
		m     Matrix
		field string
	}{
		{Matrix{Schedulers: "nosuch", Scenarios: "hetero-2path"}, "Schedulers"},
		{Matrix{Schedulers: "minrtt", Scenarios: "nosuch"}, "Scenarios"},
		{Matrix{Schedulers: "minrtt", File: "/no/such/scenario.json"}, "File"},
	} {
		var me *MatrixError
		if _, err := tc.m.Jobs(); !errors.As(err, &me) || me.Field != tc.field {
			t.Errorf("%+v: error %v, want a MatrixError on %s", tc.m, err, tc.field)
		}
	}
}

// -repeat 2 on 2 schedulers × 3 seeds of two scenarios: each scenario's
// first seed twice more per scheduler, numbered past the matrix.
func TestRepeatJobs(t *testing.T) {
	jobs, err := Matrix{Schedulers: "minrtt,blest", Scenarios: "hetero-2path,rtt10x-256k", Seeds: 3, Seed: 5}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	rj := RepeatJobs(jobs, 2, len(jobs))
	if len(rj) != 2*2*2 {
		t.Fatalf("%d repeat jobs, want 8", len(rj))
	}
	seen := map[int]bool{}
	for _, j := range rj {
		if j.Seed != 5 {
			t.Errorf("repeat of seed %d, want the first seed 5", j.Seed)
		}
		if j.Index < len(jobs) || seen[j.Index] {
			t.Errorf("repeat index %d: want unique and from %d", j.Index, len(jobs))
		}
		seen[j.Index] = true
	}
}
