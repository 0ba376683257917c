package lowestloss

import (
	"testing"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// Decide picks the path with room and the lowest loss rate, and waits when
// no path has room.
func TestDecide(t *testing.T) {
	room := func(loss float64) sched.PathInfo {
		return sched.PathInfo{MSS: 1200, CongestionWindow: 100000, LossRate: loss}
	}
	full := sched.PathInfo{MSS: 1200, CongestionWindow: 10000, BytesInFlight: 10000}
	backup := func(loss float64) sched.PathInfo { p := room(loss); p.Backup = true; return p }
	failed := room(0)
	failed.PotentiallyFailed = true
	var s Scheduler
	for _, tc := range []struct {
		name  string
		paths []sched.PathInfo
		want  sched.Decision
	}{
		{"lowest loss", []sched.PathInfo{room(0.02), room(0.01), room(0.03)}, sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
		{"full path skipped", []sched.PathInfo{room(0.02), full}, sched.Decision{Action: sched.SendNext, Paths: sched.Of(0)}},
		{"tie: first", []sched.PathInfo{room(0), room(0)}, sched.Decision{Action: sched.SendNext, Paths: sched.Of(0)}},
		{"no room", []sched.PathInfo{full, full}, sched.Decision{Action: sched.Wait}},
		// A backup waits while a regular path is live, even a full one
		// (sched.OnlyBackups), and carries the data once none is.
		{"backup idle", []sched.PathInfo{room(0.02), backup(0)}, sched.Decision{Action: sched.SendNext, Paths: sched.Of(0)}},
		{"backup waits for a full path", []sched.PathInfo{full, backup(0)}, sched.Decision{Action: sched.Wait}},
		{"backup when the regular path failed", []sched.PathInfo{failed, backup(0)}, sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
	} {
		if got := s.Decide(&sched.ConnInfo{}, tc.paths); got != tc.want {
			t.Errorf("%s: Decide = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if sc, err := sched.New(Name); err != nil || sc.Name() != Name {
		t.Errorf("registry: %v, %v", sc, err)
	}
}

// What every scheduler owes the transport: registered under its name, and
// no allocation in Decide (sched/schedtest).
func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return &Scheduler{} })
}
