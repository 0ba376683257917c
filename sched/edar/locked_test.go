package edar

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Algorithm 1 ends a flow once: the last transition gets done = 1, and a
// second EndOfFlow (or a late receiver report) records nothing more.
func TestLockedEndsOnce(t *testing.T) {
	var got []Transition
	s := New(Config{Log: func(string) {}, Sink: func(tr Transition) { got = append(got, tr) }})
	l := NewLocked(s)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	paths := schedtest.Paths(2)
	for i := 0; i < 200; i++ {
		conn := schedtest.Conn(now.Add(time.Duration(i)*time.Millisecond), 100)
		if d := l.Decide(&conn, paths); d.Action > sched.SendCopy {
			t.Fatalf("bad action %v", d.Action)
		}
		l.ReceiverReport(conn.Now, sched.ReceiverReport{Interval: time.Millisecond, GoodputBytes: 1000})
	}
	if l.Ended() {
		t.Fatal("ended before EndOfFlow")
	}
	l.EndOfFlow()
	n := len(got)
	if !l.Ended() || n == 0 || !got[n-1].Done {
		t.Fatalf("after EndOfFlow: ended %v, %d transitions, last done %v", l.Ended(), n, n > 0 && got[n-1].Done)
	}
	l.EndOfFlow()
	l.ReceiverReport(now.Add(time.Second), sched.ReceiverReport{Interval: time.Millisecond})
	if len(got) != n {
		t.Errorf("%d transitions after a second end, want %d", len(got), n)
	}
}
