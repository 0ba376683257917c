package sched_test

import (
	"testing"

	"github.com/mpqsched/mpqsched/sched"
)

// roomy is a path with room for one segment (or none, full).
func roomy(backup, full bool) sched.PathInfo {
	p := sched.PathInfo{MSS: 1200, CongestionWindow: 12000, Backup: backup}
	if full {
		p.BytesInFlight = 12000
	}
	return p
}

// WithRoom: the chosen regular paths with room; the chosen backups with
// room only when no chosen regular path has any.
func TestWithRoom(t *testing.T) {
	for _, c := range []struct {
		name  string
		paths []sched.PathInfo
		among sched.PathSet
		want  sched.PathSet
	}{
		{"regulars with room", []sched.PathInfo{roomy(false, false), roomy(false, false), roomy(true, false)}, sched.AllPaths, sched.Of(0).Add(1)},
		{"a full regular is left out", []sched.PathInfo{roomy(false, true), roomy(false, false)}, sched.AllPaths, sched.Of(1)},
		{"backups when regulars are full", []sched.PathInfo{roomy(false, true), roomy(true, false)}, sched.AllPaths, sched.Of(1)},
		{"only the chosen", []sched.PathInfo{roomy(false, false), roomy(false, false)}, sched.Of(1), sched.Of(1)},
		{"a backup when the chosen regular is unchosen", []sched.PathInfo{roomy(false, false), roomy(true, false)}, sched.Of(1), sched.Of(1)},
		{"nothing", []sched.PathInfo{roomy(false, true), roomy(true, true)}, sched.AllPaths, 0},
	} {
		if got := sched.WithRoom(c.paths, c.among); got != c.want {
			t.Errorf("%s: got %b, want %b", c.name, got, c.want)
		}
	}
}
