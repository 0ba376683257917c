package minrtt

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// "the lowest-RTT path with window space; backups last", and Linux MPTCP's
// "pick the best backup if no other subflow is active": a backup is used
// only when every regular path has failed, not when they are full.
func TestPick(t *testing.T) {
	ms := time.Millisecond
	full := func(p sched.PathInfo) sched.PathInfo { p.BytesInFlight = p.CongestionWindow; return p }
	backup := func(p sched.PathInfo) sched.PathInfo { p.Backup = true; return p }
	failed := func(p sched.PathInfo) sched.PathInfo { p.PotentiallyFailed = true; return p }
	fast := schedtest.Path(1, 10*ms, 10, 0)
	slow := schedtest.Path(2, 30*ms, 10, 0)
	unmeasured := schedtest.Path(3, 0, 10, 0)
	tests := []struct {
		name  string
		paths []sched.PathInfo
		want  int
	}{
		{"fastest with room", []sched.PathInfo{slow, fast}, 1},
		{"fast full, slow has room", []sched.PathInfo{full(fast), slow}, 1},
		{"all full", []sched.PathInfo{full(fast), full(slow)}, -1},
		{"backup only when nothing else can send", []sched.PathInfo{backup(fast), slow}, 1},
		{"no backup while a regular path is live, even full", []sched.PathInfo{backup(fast), full(slow)}, -1},
		{"backup when the regular paths failed", []sched.PathInfo{backup(slow), failed(fast)}, 0},
		{"failed paths are skipped", []sched.PathInfo{failed(fast), slow}, 1},
		{"an unmeasured path ranks last", []sched.PathInfo{unmeasured, slow}, 1},
		{"an unmeasured path is used when measured ones are full", []sched.PathInfo{unmeasured, full(slow)}, 0},
	}
	for _, tc := range tests {
		if got := Pick(tc.paths); got != tc.want {
			t.Errorf("%s: Pick = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
