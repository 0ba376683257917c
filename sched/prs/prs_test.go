package prs

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

const ms = time.Millisecond

// path is a snapshot with a window of cwnd segments, inflight of them in
// flight, and lost of its 1000 sent packets declared lost.
func path(id sched.PathID, rtt time.Duration, cwnd, inflight, lost uint64) sched.PathInfo {
	p := schedtest.Path(id, rtt, cwnd, inflight)
	p.PacketsLost = lost
	return p
}

func decide(paths ...sched.PathInfo) sched.Decision {
	conn := schedtest.Conn(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 100)
	return New().Decide(&conn, paths)
}

type tcase struct {
	name  string
	paths []sched.PathInfo
	want  int // index of the chosen path, -1 for Wait
}

func run(t *testing.T, tests []tcase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(tt.paths...)
			got := -1
			if d.Action == sched.SendNext {
				got = d.Paths.First()
				if d.Paths.Len() != 1 {
					t.Fatalf("got %d paths marked, want 1", d.Paths.Len())
				}
			} else if d.Action != sched.Wait {
				t.Fatalf("got action %d, want SendNext or Wait", d.Action)
			}
			if got != tt.want {
				t.Errorf("got path %d, want %d (-1 = wait)", got, tt.want)
			}
		})
	}
}

// "The first condition occurs when no free space exists in S_f and S_s. In
// this case, the algorithm does not return any of S_f and S_s as the best
// path" (Fig. 13, lines 10–12: inflight_s ≥ cwnd_s and inflight_f ≥ cwnd_f →
// S_best ← NULL).
func TestCondition1NeitherHasSpace(t *testing.T) {
	run(t, []tcase{
		{"both full", []sched.PathInfo{path(1, 10*ms, 10, 10, 0), path(2, 40*ms, 10, 10, 0)}, -1},
		{"both over full", []sched.PathInfo{path(1, 10*ms, 10, 12, 0), path(2, 40*ms, 10, 11, 0)}, -1},
	})
}

// performance_i = space_i / (rtt_i * max(1, retrans_i))   (Eq. 1)
// "the algorithm selects the subflow with the higher performance as the best
// path" (Fig. 13, lines 14–25).
func TestCondition2BothHaveSpace(t *testing.T) {
	run(t, []tcase{
		// 10 free segments / 10 ms = 1.2e6 > 20 / 40 ms = 6e5.
		{"fast performs better", []sched.PathInfo{path(1, 10*ms, 20, 10, 0), path(2, 40*ms, 20, 0, 0)}, 0},
		// 10 / (10 ms · 10 retransmissions) = 1.2e5 < 6e5.
		{"lossy fast loses", []sched.PathInfo{path(1, 10*ms, 20, 10, 10), path(2, 40*ms, 20, 0, 0)}, 1},
		// max(1, retrans): 1 retransmission weighs as 0 (1.2e6 > 6e5) ...
		{"max(1, retrans) = 1", []sched.PathInfo{path(1, 10*ms, 20, 10, 1), path(2, 40*ms, 20, 0, 0)}, 0},
		// ... and 3 divide by 3: 10 / (10 ms · 3) = 4e5 < 6e5.
		{"max(1, retrans) = 3", []sched.PathInfo{path(1, 10*ms, 20, 10, 3), path(2, 40*ms, 20, 0, 0)}, 1},
		// More room on the slow path: 4 / 10 ms = 4.8e5 < 20 / 40 ms = 6e5.
		{"slow has more room", []sched.PathInfo{path(1, 10*ms, 20, 16, 0), path(2, 40*ms, 20, 0, 0)}, 1},
		// Order of the slice does not matter.
		{"slow listed first", []sched.PathInfo{path(2, 40*ms, 20, 0, 0), path(1, 10*ms, 20, 16, 0)}, 0},
	})
}

// Fig. 13 tests performance_f > performance_s and performance_s >
// performance_f only; a tie returns no subflow there. Chosen: the tie goes to
// the faster path (5 / 10 ms = 10 / 20 ms).
func TestCondition2TieGoesToFastPath(t *testing.T) {
	run(t, []tcase{
		{"tie", []sched.PathInfo{path(2, 20*ms, 20, 10, 0), path(1, 10*ms, 20, 15, 0)}, 1},
		{"identical paths", []sched.PathInfo{path(1, 10*ms, 20, 0, 0), path(2, 10*ms, 20, 0, 0)}, 0},
	})
}

// retrans_rate_i = retrans_i / total_transmitted_i   (Eq. 2)
// "if the retransmission rate of S_f is less than the retransmission rate of
// S_s (retrans_rate_f < retrans_rate_s), the scheduler sets S_f as the best
// subflow in the system. Otherwise, even if there is free space in cwnd_f, it
// does not send the data packet over S_f."
func TestCondition3OnlyFastHasSpace(t *testing.T) {
	run(t, []tcase{
		{"fast more reliable", []sched.PathInfo{path(1, 10*ms, 20, 0, 10), path(2, 40*ms, 20, 20, 20)}, 0},
		{"fast lossier: wait", []sched.PathInfo{path(1, 10*ms, 20, 0, 30), path(2, 40*ms, 20, 20, 10)}, -1},
		// Chosen: rate_f ≤ rate_s; the literal "<" would wait here forever.
		{"equal rates, no losses", []sched.PathInfo{path(1, 10*ms, 20, 0, 0), path(2, 40*ms, 20, 20, 0)}, 0},
		{"equal rates", []sched.PathInfo{path(1, 10*ms, 20, 0, 10), path(2, 40*ms, 20, 20, 10)}, 0},
	})
}

// "if (rtt_s)/2 ≤ 2 * rtt_f is satisfied, S_s can be selected as the best
// subflow in the system" (Fig. 13, lines 40–46: else S_best ← NULL).
func TestCondition4OnlySlowHasSpace(t *testing.T) {
	run(t, []tcase{
		{"rtt_s/2 = 2·rtt_f", []sched.PathInfo{path(1, 10*ms, 20, 20, 0), path(2, 40*ms, 20, 0, 0)}, 1},
		{"rtt_s/2 < 2·rtt_f", []sched.PathInfo{path(1, 10*ms, 20, 20, 0), path(2, 15*ms, 20, 0, 0)}, 1},
		{"rtt_s/2 > 2·rtt_f: wait", []sched.PathInfo{path(1, 10*ms, 20, 20, 0), path(2, 41*ms, 20, 0, 0)}, -1},
	})
}

// N paths: S_f is the lowest-RTT usable path, each other path is S_s against
// it (see the package doc).
func TestNPaths(t *testing.T) {
	run(t, []tcase{
		{"cond 2 ranks all paths with space", []sched.PathInfo{
			path(1, 10*ms, 20, 18, 0), path(2, 20*ms, 20, 0, 0), path(3, 40*ms, 20, 0, 0),
		}, 1},
		{"cond 2 ignores full paths", []sched.PathInfo{
			path(1, 10*ms, 20, 10, 0), path(2, 20*ms, 20, 20, 0), path(3, 40*ms, 20, 0, 0),
		}, 0},
		{"cond 3 fast beats every full path", []sched.PathInfo{
			path(1, 10*ms, 20, 0, 5), path(2, 20*ms, 20, 20, 10), path(3, 40*ms, 20, 20, 20),
		}, 0},
		{"cond 3 one full path more reliable: wait", []sched.PathInfo{
			path(1, 10*ms, 20, 0, 5), path(2, 20*ms, 20, 20, 10), path(3, 40*ms, 20, 20, 1),
		}, -1},
		{"cond 4 only paths within 4·rtt_f", []sched.PathInfo{
			path(1, 10*ms, 20, 20, 0), path(2, 30*ms, 20, 10, 0), path(3, 50*ms, 20, 0, 0),
		}, 1},
		{"cond 4 best performance among passing paths", []sched.PathInfo{
			path(1, 10*ms, 20, 20, 0), path(2, 30*ms, 20, 18, 0), path(3, 40*ms, 20, 0, 0),
		}, 2},
		{"cond 4 none passes: wait", []sched.PathInfo{
			path(1, 10*ms, 20, 20, 0), path(2, 50*ms, 20, 0, 0), path(3, 60*ms, 20, 0, 0),
		}, -1},
	})
}

func TestUsablePaths(t *testing.T) {
	failed := path(1, 10*ms, 20, 0, 0)
	failed.PotentiallyFailed = true
	backup := path(3, 5*ms, 20, 0, 0)
	backup.Backup = true
	fresh := path(4, 0, 20, 0, 0)
	fresh.SmoothedRTT = 0
	run(t, []tcase{
		{"failed path is not S_f", []sched.PathInfo{failed, path(2, 50*ms, 20, 0, 0)}, 1},
		{"single path with space", []sched.PathInfo{path(2, 50*ms, 20, 0, 0)}, 0},
		{"single full path", []sched.PathInfo{path(2, 50*ms, 20, 20, 0)}, -1},
		{"backup idle while a regular path has space", []sched.PathInfo{backup, path(2, 50*ms, 20, 0, 0)}, 1},
		// Linux MPTCP: "pick the best backup if no other subflow is active".
		{"no backup while a regular path is live, even full", []sched.PathInfo{backup, path(2, 50*ms, 20, 20, 0)}, -1},
		{"unmeasured path probed when measured are full", []sched.PathInfo{path(2, 10*ms, 20, 20, 0), fresh}, 1},
		{"unmeasured path not used while a measured one has space", []sched.PathInfo{path(2, 10*ms, 20, 0, 0), fresh}, 0},
	})
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) {
		schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() })
	})
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
