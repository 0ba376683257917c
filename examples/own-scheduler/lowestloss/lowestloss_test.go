package lowestloss

import (
	"testing"

	"github.com/mpqsched/mpqsched/sched"
)

// Decide picks the path with room and the lowest loss rate, and waits when
// no path has room.
func TestDecide(t *testing.T) {
	room := func(loss float64) sched.PathInfo {
		return sched.PathInfo{MSS: 1200, CongestionWindow: 100000, LossRate: loss}
	}
	full := sched.PathInfo{MSS: 1200, CongestionWindow: 10000, BytesInFlight: 10000}
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
	} {
		if got := s.Decide(&sched.ConnInfo{}, tc.paths); got != tc.want {
			t.Errorf("%s: Decide = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if sc, err := sched.New(Name); err != nil || sc.Name() != Name {
		t.Errorf("registry: %v, %v", sc, err)
	}
}
