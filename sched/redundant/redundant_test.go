package redundant

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// "redundant: each segment on every path that has space": every live path is
// marked, and nothing is sent while one of them is full, so that every
// segment crosses every live path.
func TestMarksEveryLivePath(t *testing.T) {
	ms := time.Millisecond
	paths := []sched.PathInfo{schedtest.Path(1, 10*ms, 10, 0), schedtest.Path(2, 30*ms, 10, 0)}
	conn := schedtest.Conn(time.Time{}, 10)
	s := New()
	if d := s.Decide(&conn, paths); d.Action != sched.SendNext || d.Paths != sched.Of(0).Add(1) {
		t.Errorf("both paths have room: got %+v, want SendNext on both", d)
	}
	paths[1].BytesInFlight = paths[1].CongestionWindow
	if d := s.Decide(&conn, paths); d.Action != sched.Wait {
		t.Errorf("one live path full: got %+v, want Wait", d)
	}
	paths[1].PotentiallyFailed = true
	if d := s.Decide(&conn, paths); d.Action != sched.SendNext || d.Paths != sched.Of(0) {
		t.Errorf("a failed path must not stall the others: got %+v", d)
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
