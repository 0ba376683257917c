package redundant

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// ruleReport counts departures from the redundant rule over many fake runs.
type ruleReport struct {
	runs, segments int
	idle           int // decisions where a live path with room and something to send sent nothing
	skipped        int // segments acknowledged before crossing a path that was live, had room and sent newer data instead (or nothing)
	wrongRole      int // segments sent on a backup path while a regular path was live, or the reverse
	stalled        int // runs that did not deliver every segment
	example        string
}

// checkRule drives seeds random fake transports (2–4 paths of random RTT and
// window, some backups, random failures and recoveries) with a scheduler
// from newSched, and checks at every decision and every acknowledgement the
// rule "every live path with room sends the oldest unacknowledged segment it
// has not carried, else the next new one", so that each segment crosses
// every path that was live and had room before it was acknowledged.
func checkRule(newSched func() sched.Scheduler, seeds int) ruleReport {
	var rep ruleReport
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		ft := randomRun(rng)
		s := newSched()
		skipped := map[int]sched.PathSet{} // segment → paths that passed it over
		done := false
		for step := 0; step < 200000 && !done; step++ {
			for _, q := range ft.advance(step) {
				rep.segments++
				if set := skipped[int(q)]; set != 0 {
					rep.skipped++
					if rep.example == "" {
						rep.example = fmt.Sprintf("seed %d: segment %d acknowledged at step %d without crossing paths %b, which were live with room", seed, q, step, set)
					}
				}
				delete(skipped, int(q))
			}
			if rng.IntN(400) == 0 {
				i := rng.IntN(len(ft.paths))
				ft.setFailed(i, !ft.paths[i].PotentiallyFailed)
			}
			for k := 0; k < 10000 && ft.hasWork(); k++ {
				backup := !regularLiveRef(ft.paths)
				carriedBefore := make([]sched.PathSet, len(ft.segs))
				for q := ft.base; q < len(ft.segs); q++ {
					carriedBefore[q] = ft.segs[q].carried
				}
				eligible := make([]bool, len(ft.paths))
				for i := range ft.paths {
					p := &ft.paths[i]
					eligible[i] = p.Backup == backup && !p.PotentiallyFailed && p.Space() >= p.MSS
				}
				c := ft.conn()
				sent, avail := ft.apply(s.Decide(&c, ft.paths), step)
				any := false
				for i, q := range sent {
					any = any || q >= 0
					if !eligible[i] {
						if q >= 0 && ft.paths[i].Backup != backup {
							rep.wrongRole++
						}
						continue
					}
					if q < 0 && avail[i] {
						rep.idle++
					}
					for s := ft.base; s < len(carriedBefore); s++ {
						if !ft.segs[s].acked && !carriedBefore[s].Has(i) && (q < 0 || s < q) {
							skipped[s] = skipped[s].Add(i)
						}
					}
				}
				if !any {
					break
				}
			}
			done = uint64(len(ft.segs)) == ft.total && ft.base == len(ft.segs)
		}
		rep.runs++
		if !done {
			rep.stalled++
		}
	}
	return rep
}

// regularLiveRef is the test's own statement of "some regular path is live".
func regularLiveRef(paths []sched.PathInfo) bool {
	for i := range paths {
		if !paths[i].Backup && !paths[i].PotentiallyFailed {
			return true
		}
	}
	return false
}

// The rule (issue 14, "What to build" 4), which is the Linux MPTCP
// redundant scheduler's: "Every live path with room sends the oldest
// unacknowledged segment it has not carried, else the next new one." Checked
// as: "each segment crosses every path that was live and had room before the
// segment was acknowledged".
func TestEverySegmentCrossesEveryPathWithRoom(t *testing.T) {
	rep := checkRule(func() sched.Scheduler { return New() }, 150)
	if rep.segments < 150*400 {
		t.Fatalf("only %d segments acknowledged in %d runs", rep.segments, rep.runs)
	}
	if rep.idle != 0 || rep.skipped != 0 || rep.wrongRole != 0 || rep.stalled != 0 {
		t.Errorf("%d runs, %d segments: %d idle decisions, %d segments skipped a path, %d sent on the wrong role, %d runs stalled; %s",
			rep.runs, rep.segments, rep.idle, rep.skipped, rep.wrongRole, rep.stalled, rep.example)
	}
}

// lockstep is the behaviour this package had before: send only when every
// live path has room, and then the next segment on all of them.
type lockstep struct{}

func (lockstep) Name() string { return "lockstep" }

func (lockstep) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	backup := !regularLiveRef(paths)
	var set sched.PathSet
	for i := range paths {
		p := &paths[i]
		if p.Backup != backup || p.PotentiallyFailed {
			continue
		}
		if !p.SendingAllowed() {
			return sched.Decision{Action: sched.Wait}
		}
		set = set.Add(i)
	}
	if set == 0 {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendNext, Paths: set}
}

// everyPathNew sends new data on every path with room: aggregation, not
// redundancy.
type everyPathNew struct{}

func (everyPathNew) Name() string { return "every-path-new" }

func (everyPathNew) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	var set sched.PathSet
	for i := range paths {
		if paths[i].SendingAllowed() {
			set = set.Add(i)
		}
	}
	if set == 0 {
		return sched.Decision{Action: sched.Wait}
	}
	// One decision per path, so that each path gets its own new segment.
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(set.First())}
}

// The rule check must be able to fail: the old lockstep scheduler leaves a
// path with room idle, and a scheduler that sends new data everywhere skips
// segments on the paths that did not carry them.
func TestRuleCheckCatchesOtherSchedules(t *testing.T) {
	if rep := checkRule(func() sched.Scheduler { return lockstep{} }, 20); rep.idle == 0 {
		t.Errorf("lockstep: %+v, want idle decisions", rep)
	}
	if rep := checkRule(func() sched.Scheduler { return everyPathNew{} }, 20); rep.skipped == 0 {
		t.Errorf("every path new: %+v, want skipped segments", rep)
	}
}

// A worked example on two paths: the fast path (10 ms, window 4) keeps
// sending new segments while the slow one (30 ms, window 2) is full, and the
// slow path, once it has room, copies the oldest segments it has not
// carried.
func TestFastPathKeepsItsPace(t *testing.T) {
	ft := newFakeTransport(100, []int{10, 30}, []uint64{4, 2})
	s := New()
	decide := func(step int) (sent []int) {
		sent = []int{-1, -1}
		for ft.hasWork() {
			c := ft.conn()
			got, _ := ft.apply(s.Decide(&c, ft.paths), step)
			if got[0] < 0 && got[1] < 0 {
				return sent
			}
			for i, q := range got {
				if q >= 0 {
					sent[i] = q
				}
			}
		}
		return sent
	}
	decide(0)
	// Step 0: fast sends 0,1,2,3 (new); slow copies 0 and 1.
	if got, want := carriers(ft), "0:fs 1:fs 2:f 3:f"; got != want {
		t.Fatalf("after step 0: got %s, want %s", got, want)
	}
	for step := 1; step <= 10; step++ {
		ft.advance(step)
		decide(step)
	}
	// Step 10: the fast path's four segments are acknowledged; it sends
	// 4–7, while the slow path is still full with 0 and 1.
	if got, want := carriers(ft), "0:fs 1:fs 2:f 3:f 4:f 5:f 6:f 7:f"; got != want {
		t.Fatalf("after step 10: got %s, want %s", got, want)
	}
	for step := 11; step <= 30; step++ {
		ft.advance(step)
		decide(step)
	}
	// Step 30: the fast path acknowledged 4–11 and sent up to 15; the slow
	// path's room goes to the oldest unacknowledged segments it has not
	// carried, 12 and 13, not to new data.
	if got, want := carriers(ft), "0:fs 1:fs 2:f 3:f 4:f 5:f 6:f 7:f 8:f 9:f 10:f 11:f 12:fs 13:fs 14:f 15:f"; got != want {
		t.Fatalf("after step 30: got %s, want %s", got, want)
	}
}

// carriers lists each segment with the paths that carried it (f: index 0,
// s: index 1).
func carriers(ft *fakeTransport) string {
	out := ""
	for q, g := range ft.segs {
		if q > 0 {
			out += " "
		}
		out += fmt.Sprintf("%d:", q)
		if g.carried.Has(0) {
			out += "f"
		}
		if g.carried.Has(1) {
			out += "s"
		}
	}
	return out
}

// "Backup paths join only when no regular path is live": a regular path
// that is out of window room does not open the backup; a potentially failed
// one does not count as live, so a dead path cannot stall the connection.
func TestBackupAndFailedPaths(t *testing.T) {
	ms := time.Millisecond
	paths := []sched.PathInfo{schedtest.Path(1, 10*ms, 10, 0), schedtest.Path(2, 30*ms, 10, 0), schedtest.Path(3, 20*ms, 10, 0)}
	paths[2].Backup = true
	conn := schedtest.Conn(time.Time{}, 10)
	s := New()
	want := sched.Decision{Action: sched.SendCopy, Seq: sched.OldestUncarried}
	check := func(what string, set sched.PathSet) {
		t.Helper()
		w := want
		w.Paths = set
		if set == 0 {
			w = sched.Decision{Action: sched.Wait}
		}
		if d := s.Decide(&conn, paths); d != w {
			t.Errorf("%s: got %+v, want %+v", what, d, w)
		}
	}
	check("both regular paths have room", sched.Of(0).Add(1))
	paths[1].BytesInFlight = paths[1].CongestionWindow
	check("one regular path full: the other sends alone", sched.Of(0))
	paths[0].BytesInFlight = paths[0].CongestionWindow
	check("both regular paths full: the backup stays out", 0)
	paths[1].PotentiallyFailed = true
	check("a failed path must not stall the others", 0)
	paths[0].PotentiallyFailed = true
	check("no regular path live: the backup sends", sched.Of(2))
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) { schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() }) })
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
