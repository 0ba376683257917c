package cli

import (
	"testing"

	"github.com/mpqsched/mpqsched/pkg/bench"
)

func TestRepeatFlagChecks(t *testing.T) {
	for _, tc := range []struct {
		f    runFlags
		fail bool
	}{
		{runFlags{repeat: -1, parallel: 1, format: "table", or: "off"}, true},
		{runFlags{repeat: maxRepeat + 1, parallel: 1, format: "table", or: "off"}, true},
		{runFlags{repeat: 2, shard: bench.Shard{K: 0, N: 2}, parallel: 1, format: "table", or: "off"}, true},
		{runFlags{repeat: 2, parallel: 1, format: "table", or: "off"}, false},
	} {
		err := checkRunFlags(&tc.f, map[string]bool{})
		if (err != nil) != tc.fail {
			t.Errorf("-repeat %d (shard %d/%d): error %v, want failure %v", tc.f.repeat, tc.f.shard.K, tc.f.shard.N, err, tc.fail)
		}
	}
}
