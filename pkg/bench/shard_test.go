package bench

import "testing"

func TestShardFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		k, n int
		ok   bool
	}{
		{"0/1", 0, 1, true}, {"2/3", 2, 3, true}, {" 1 / 4 ", 1, 4, true},
		{"3/3", 0, 0, false}, {"-1/3", 0, 0, false}, {"1/0", 0, 0, false},
		{"1", 0, 0, false}, {"a/b", 0, 0, false}, {"0/100001", 0, 0, false},
	} {
		var s Shard
		err := s.Set(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (s.K != tc.k || s.N != tc.n)) {
			t.Errorf("Set(%q) = %v, %+v; want ok=%v %d/%d", tc.in, err, s, tc.ok, tc.k, tc.n)
		}
	}
}

// The shards of a matrix are disjoint, cover it, and keep each job's index
// (and so its seed) as in the unsharded matrix.
func TestShardsPartitionTheMatrix(t *testing.T) {
	all, err := Matrix{Schedulers: "minrtt,blest,ecf", Scenarios: "hetero-2path", Seeds: 5, Seed: 7, Opportunistic: "off"}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 3, 4, len(all), len(all) + 3} {
		seen := map[int]Job{}
		for k := range n {
			for _, j := range (Shard{k, n}).Of(all) {
				if _, dup := seen[j.Index]; dup {
					t.Fatalf("N=%d: job %d in two shards", n, j.Index)
				}
				if j.Index%n != k {
					t.Errorf("N=%d: job %d in shard %d", n, j.Index, k)
				}
				seen[j.Index] = j
			}
		}
		if len(seen) != len(all) {
			t.Errorf("N=%d: shards hold %d of %d jobs", n, len(seen), len(all))
		}
		for _, j := range all {
			if s := seen[j.Index]; s.Seed != j.Seed || s.Scheduler != j.Scheduler {
				t.Errorf("N=%d: job %d changed: %+v vs %+v", n, j.Index, s, j)
			}
		}
	}
}
