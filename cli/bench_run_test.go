package cli

import (
	"testing"
)

// -opportunistic off (or unset), on and both: the matrix has each scheduler
// without, with, or both without and with opportunistic reinjection.
func TestOpportunisticFlagJobs(t *testing.T) {
	for _, tc := range []struct {
		or       string
		want     int
		withOpps int
	}{{"", 2, 0}, {"off", 2, 0}, {"on", 2, 2}, {"both", 4, 2}} {
		f := &runFlags{schedulers: "minrtt,blest", scenarios: "hetero-2path", seeds: 1, seed: 1, or: tc.or}
		jobs, err := buildJobs(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, j := range jobs {
			if j.Opportunistic {
				n++
			}
		}
		if len(jobs) != tc.want || n != tc.withOpps {
			t.Errorf("-opportunistic %q: %d jobs, %d with it; want %d and %d", tc.or, len(jobs), n, tc.want, tc.withOpps)
		}
	}
}
