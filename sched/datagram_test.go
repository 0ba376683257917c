package sched_test

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

func path(srtt time.Duration, backup, failed bool) sched.PathInfo {
	return sched.PathInfo{SmoothedRTT: srtt, Backup: backup, PotentiallyFailed: failed}
}

// The default datagram path (issue 19, "default the fastest live path"):
// lowest smoothed RTT among live paths; backups only when no regular path is
// live (RFC 10069: a backup path "should only be used for sending when no
// other path with the status 'available' is usable"); a path without an RTT
// sample last; something even when every path is potentially failed.
func TestFastestLive(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		paths []sched.PathInfo
		want  sched.PathSet
	}{
		{"none", nil, 0},
		{"lowest RTT", []sched.PathInfo{path(30*ms, false, false), path(10*ms, false, false), path(20*ms, false, false)}, sched.Of(1)},
		{"tie: lowest index", []sched.PathInfo{path(10*ms, false, false), path(10*ms, false, false)}, sched.Of(0)},
		{"failed skipped", []sched.PathInfo{path(30*ms, false, false), path(10*ms, false, true)}, sched.Of(0)},
		{"faster backup unused", []sched.PathInfo{path(30*ms, false, false), path(10*ms, true, false)}, sched.Of(0)},
		{"no regular path live: fastest backup", []sched.PathInfo{path(10*ms, false, true), path(30*ms, true, false), path(20*ms, true, false)}, sched.Of(2)},
		{"no sample last", []sched.PathInfo{path(0, false, false), path(50*ms, false, false)}, sched.Of(1)},
		{"no sample at all", []sched.PathInfo{path(0, false, false), path(0, false, false)}, sched.Of(0)},
		{"all failed: fastest", []sched.PathInfo{path(30*ms, false, true), path(20*ms, true, true)}, sched.Of(1)},
	} {
		if got := sched.FastestLive(tc.paths); got != tc.want {
			t.Errorf("%s: got %b, want %b", tc.name, got, tc.want)
		}
	}
}

type pinned struct{}

func (pinned) Name() string                                            { return "pinned" }
func (pinned) Decide(*sched.ConnInfo, []sched.PathInfo) sched.Decision { return sched.Decision{} }
func (pinned) DecideDatagram(_ *sched.ConnInfo, p []sched.PathInfo, _ int) sched.PathSet {
	return sched.Of(len(p) - 1)
}

type plain struct{}

func (plain) Name() string                                            { return "plain" }
func (plain) Decide(*sched.ConnInfo, []sched.PathInfo) sched.Decision { return sched.Decision{} }

// DecideDatagram uses the scheduler's choice when it has one, else
// FastestLive.
func TestDecideDatagramDispatch(t *testing.T) {
	paths := []sched.PathInfo{path(10*time.Millisecond, false, false), path(30*time.Millisecond, false, false)}
	var c sched.ConnInfo
	if got := sched.DecideDatagram(pinned{}, &c, paths, 100); got != sched.Of(1) {
		t.Errorf("DatagramScheduler: got %b, want its choice %b", got, sched.Of(1))
	}
	if got := sched.DecideDatagram(plain{}, &c, paths, 100); got != sched.Of(0) {
		t.Errorf("plain scheduler: got %b, want FastestLive %b", got, sched.Of(0))
	}
}
