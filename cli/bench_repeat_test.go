package cli

import "testing"

// -repeat 2 on 2 schedulers × 3 seeds of two scenarios: each scenario's
// first seed twice more per scheduler, numbered past the matrix.
func TestRepeatJobs(t *testing.T) {
	f := &runFlags{schedulers: "minrtt,blest", scenarios: "hetero-2path,rtt10x-256k", seeds: 3, seed: 5}
	jobs, err := buildJobs(f)
	if err != nil {
		t.Fatal(err)
	}
	rj := repeatJobs(jobs, 2, len(jobs))
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

func TestRepeatFlagChecks(t *testing.T) {
	for _, tc := range []struct {
		f    runFlags
		fail bool
	}{
		{runFlags{repeat: -1, parallel: 1, format: "table", or: "off"}, true},
		{runFlags{repeat: maxRepeat + 1, parallel: 1, format: "table", or: "off"}, true},
		{runFlags{repeat: 2, shard: shard{K: 0, N: 2}, parallel: 1, format: "table", or: "off"}, true},
		{runFlags{repeat: 2, parallel: 1, format: "table", or: "off"}, false},
	} {
		err := checkRunFlags(&tc.f, map[string]bool{})
		if (err != nil) != tc.fail {
			t.Errorf("-repeat %d (shard %d/%d): error %v, want failure %v", tc.f.repeat, tc.f.shard.K, tc.f.shard.N, err, tc.fail)
		}
	}
}
