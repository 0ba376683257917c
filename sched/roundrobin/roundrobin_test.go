package roundrobin

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Round-robin takes the paths in turn, skipping those without room, and uses
// a backup only when no other path can send.
func TestTurns(t *testing.T) {
	ms := time.Millisecond
	paths := []sched.PathInfo{schedtest.Path(1, 10*ms, 10, 0), schedtest.Path(2, 30*ms, 10, 0), schedtest.Path(3, 50*ms, 10, 10)}
	s := New()
	conn := schedtest.Conn(time.Time{}, 100)
	var got []sched.PathID
	for range 5 {
		d := s.Decide(&conn, paths)
		if d.Action != sched.SendNext || d.Paths.Len() != 1 {
			t.Fatalf("decision %+v, want SendNext on one path", d)
		}
		got = append(got, paths[d.Paths.First()].ID)
	}
	want := []sched.PathID{1, 2, 1, 2, 1} // path 3 is full
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("turns %v, want %v", got, want)
		}
	}
	paths[0].Backup = true
	paths[1].BytesInFlight = paths[1].CongestionWindow
	if d := s.Decide(&conn, paths); d.Action != sched.SendNext || paths[d.Paths.First()].ID != 1 {
		t.Errorf("with every regular path full the backup should send, got %+v", d)
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
