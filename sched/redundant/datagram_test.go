package redundant

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Issue 19: "a redundant scheduler may copy a datagram to several paths".
// A copy goes on every live regular path, room or not; backups only when no
// regular path is live; a failed path never while another is live.
func TestDecideDatagramCopiesToLivePaths(t *testing.T) {
	ms := time.Millisecond
	paths := []sched.PathInfo{schedtest.Path(1, 10*ms, 10, 10), schedtest.Path(2, 30*ms, 10, 0), schedtest.Path(3, 20*ms, 10, 0)}
	paths[2].Backup = true
	conn := schedtest.Conn(time.Time{}, 0)
	s := New()
	check := func(what string, want sched.PathSet) {
		t.Helper()
		if got := s.DecideDatagram(&conn, paths, 500); got != want {
			t.Errorf("%s: got %b, want %b", what, got, want)
		}
	}
	check("both regular paths, one of them full", sched.Of(0).Add(1))
	paths[0].PotentiallyFailed = true
	check("one regular path failed", sched.Of(1))
	paths[1].PotentiallyFailed = true
	check("no regular path live: the backup", sched.Of(2))
	paths[2].PotentiallyFailed = true
	check("nothing live: the fastest path", sched.Of(0))
}

func BenchmarkDecideDatagram(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecideDatagram(b, func() sched.Scheduler { return New() }) })
}
