package minrtt

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
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

// PickAndFaster: the path minRTT sends on, and the faster live path it
// could wait for instead (none when the picked path is the fastest).
func TestPickAndFaster(t *testing.T) {
	ms := time.Millisecond
	full := func(p sched.PathInfo) sched.PathInfo { p.BytesInFlight = p.CongestionWindow; return p }
	fast := schedtest.Path(1, 10*ms, 10, 0)
	slow := schedtest.Path(2, 30*ms, 10, 0)
	for _, tc := range []struct {
		name  string
		paths []sched.PathInfo
		i, f  int
	}{
		{"the fastest has room", []sched.PathInfo{slow, fast}, 1, -1},
		{"the fastest is full", []sched.PathInfo{slow, full(fast)}, 0, 1},
		{"all full", []sched.PathInfo{full(slow), full(fast)}, -1, -1},
	} {
		if i, f := PickAndFaster(tc.paths); i != tc.i || f != tc.f {
			t.Errorf("%s: PickAndFaster = %d, %d, want %d, %d", tc.name, i, f, tc.i, tc.f)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}

// Issue 22, item 3: "An application may pin a stream to a path, or prefer
// one." minRTT sends a pinned stream's data only on its path while that path
// is live (waiting for its window rather than using another path), and a
// preferred path's data there when it has room, else on the minRTT choice.
// A preference for an absent or failed path, or a retransmission (which
// SendNext sends first and which is not the stream's new data), falls back
// to minRTT.
func TestDecidePathPreference(t *testing.T) {
	ms := time.Millisecond
	full := func(p sched.PathInfo) sched.PathInfo { p.BytesInFlight = p.CongestionWindow; return p }
	failed := func(p sched.PathInfo) sched.PathInfo { p.PotentiallyFailed = true; return p }
	fast := schedtest.Path(1, 10*ms, 10, 0)
	slow := schedtest.Path(2, 30*ms, 10, 0)
	wait := sched.Decision{Action: sched.Wait}
	on := func(i int) sched.Decision { return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)} }
	tests := []struct {
		name  string
		pref  sched.PathPreference
		path  sched.PathID
		retx  uint64
		paths []sched.PathInfo
		want  sched.Decision
	}{
		{"no preference", sched.NoPreference, 2, 0, []sched.PathInfo{fast, slow}, on(0)},
		{"pinned to the slow path", sched.PinPath, 2, 0, []sched.PathInfo{fast, slow}, on(1)},
		{"pinned to a full path waits", sched.PinPath, 2, 0, []sched.PathInfo{fast, full(slow)}, wait},
		{"pinned to a failed path: any", sched.PinPath, 2, 0, []sched.PathInfo{fast, failed(slow)}, on(0)},
		{"pinned to an absent path: any", sched.PinPath, 9, 0, []sched.PathInfo{fast, slow}, on(0)},
		{"pinned, but a retransmission goes first", sched.PinPath, 2, 1, []sched.PathInfo{fast, slow}, on(0)},
		{"preferred slow path with room", sched.PreferPath, 2, 0, []sched.PathInfo{fast, slow}, on(1)},
		{"preferred slow path full: the others", sched.PreferPath, 2, 0, []sched.PathInfo{fast, full(slow)}, on(0)},
	}
	s := New()
	for _, tc := range tests {
		conn := schedtest.Conn(time.Time{}, 10)
		conn.HasStream, conn.StreamID = true, 4
		conn.PreferredPath, conn.Preference, conn.RetransmitQueued = tc.path, tc.pref, tc.retx
		if got := s.Decide(&conn, tc.paths); got != tc.want {
			t.Errorf("%s: Decide = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// Decide with a path preference does not allocate (issue 22: "BenchmarkDecide
// stays allocation-free").
func TestDecidePreferenceAllocs(t *testing.T) {
	s := New()
	paths := schedtest.Paths(4)
	conn := schedtest.Conn(time.Time{}, 10)
	conn.PreferredPath, conn.Preference = 4, sched.PinPath
	if a := alloctest.Mallocs(1000, func() { s.Decide(&conn, paths) }); a != 0 {
		t.Errorf("Decide with a pinned stream: %d allocations in 1000, want 0", a)
	}
}
