package learned

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/minrtt"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fixed is a policy that always answers the same action, recording what it
// saw.
type fixed struct {
	a    Action
	all  bool // mark every slot that holds a path
	seen []Observation
	keep bool
}

func (f *fixed) Act(o *Observation, a *Action) error {
	if f.keep {
		f.seen = append(f.seen, *o)
	}
	*a = f.a
	if f.all {
		a.Paths = allSlots(o.N)
	}
	return nil
}

// randomPaths makes n paths with random RTTs, windows, backup and failure
// flags, as Decide sees them mid-transfer.
func randomPaths(rng *rand.Rand, n int) []sched.PathInfo {
	ps := make([]sched.PathInfo, n)
	for i := range ps {
		p := schedtest.Path(sched.PathID(i+1), time.Duration(5+rng.IntN(100))*time.Millisecond, 20, uint64(rng.IntN(22)))
		p.Backup = rng.IntN(5) == 0
		p.PotentiallyFailed = rng.IntN(8) == 0
		if rng.IntN(10) == 0 {
			p.SmoothedRTT, p.MinRTT = 0, 0
		}
		ps[i] = p
	}
	return ps
}

func quiet(string) {}

// The action {all paths, new data} must be minRTT's decision, snapshot by
// snapshot: the package doc promises it, and the environment's "minRTT"
// baseline relies on it.
func TestAllPathsNewIsMinRTT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := New(Config{Policy: &fixed{all: true}, Log: quiet})
	m := minrtt.New()
	now := t0
	for k := 0; k < 5000; k++ {
		paths := randomPaths(rng, 1+rng.IntN(4))
		conn := schedtest.Conn(now, 100)
		if rng.IntN(4) == 0 { // a stream's path preference
			conn.Preference = sched.PathPreference(1 + rng.IntN(2))
			conn.PreferredPath = sched.PathID(1 + rng.IntN(len(paths)))
		}
		got, want := s.Decide(&conn, paths), m.Decide(&conn, paths)
		got.RetryAt, want.RetryAt = time.Time{}, time.Time{}
		if got != want {
			t.Fatalf("snapshot %d: learned {all, new} decided %+v, minRTT %+v", k, got, want)
		}
		now = now.Add(time.Duration(rng.IntN(20)) * time.Millisecond)
	}
}

// redundantPolicy is an EdAR policy that always prefers redundant mode.
type redundantPolicy struct{}

func (redundantPolicy) Q(_ *edar.State, q *[2]float32) error { q[0], q[1] = 0, 1; return nil }

// The action {all paths, copies} must be EdAR's redundant mode, and its
// decision intervals EdAR's, decision by decision.
func TestAllPathsCopyIsEdarRedundant(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := New(Config{Policy: &fixed{all: true, a: Action{Copy: true}}, Log: quiet})
	e := edar.New(edar.Config{Policy: redundantPolicy{}, Log: quiet})
	now := t0
	for k := 0; k < 5000; k++ {
		paths := randomPaths(rng, 1+rng.IntN(4))
		conn := schedtest.Conn(now, 100)
		got, want := s.Decide(&conn, paths), e.Decide(&conn, paths)
		if got != want {
			t.Fatalf("snapshot %d: learned {all, copy} decided %+v, EdAR redundant %+v", k, got, want)
		}
		now = now.Add(time.Duration(rng.IntN(20)) * time.Millisecond)
	}
}

// The observation's EdAR state is the state sched/edar computes from the
// same snapshots (its Sink gets (s_t, a_t, s_{t+1}) once a TI has a report).
func TestEdarStateIsEdarsState(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pol := &fixed{all: true, a: Action{Copy: true}, keep: true}
	s := New(Config{Policy: pol, EdarState: true, Log: quiet})
	var states []edar.State // s_0, s_1, ...
	e := edar.New(edar.Config{Policy: redundantPolicy{}, Log: quiet, Sink: func(tr edar.Transition) {
		if len(states) == 0 {
			states = append(states, tr.S)
		}
		states = append(states, tr.S2)
	}})
	now := t0
	paths := randomPaths(rng, 2)
	for k := 0; k < 3000; k++ {
		for i := range paths { // counters advance as in a transfer
			paths[i].PacketsSent += uint64(rng.IntN(10))
			paths[i].PacketsLost += uint64(rng.IntN(2))
			paths[i].BytesAcked += uint64(rng.IntN(20000))
			paths[i].BytesInFlight = uint64(rng.IntN(40000))
		}
		conn := schedtest.Conn(now, 100)
		rep := sched.ReceiverReport{Interval: 5 * time.Millisecond, GoodputBytes: uint64(rng.IntN(5000))}
		s.ReceiverReport(now, rep)
		e.ReceiverReport(now, rep)
		s.Decide(&conn, paths)
		e.Decide(&conn, paths)
		now = now.Add(time.Duration(1+rng.IntN(15)) * time.Millisecond)
	}
	if len(states) < 100 {
		t.Fatalf("only %d EdAR transitions", len(states))
	}
	for i, st := range states {
		if pol.seen[i].Edar != st {
			t.Fatalf("TI %d: learned's EdAR state differs from sched/edar's:\n%+v\n%+v", i, pol.seen[i].Edar, st)
		}
	}
}

// Paths are chosen by slot but remembered by ID: a path that leaves or a
// reordered snapshot keeps the choice on the chosen path.
func TestChoiceFollowsPathIDs(t *testing.T) {
	s := New(Config{Policy: &fixed{a: Action{Paths: sched.Of(1)}}, Log: quiet})
	a := schedtest.Path(1, 10*time.Millisecond, 20, 0)
	b := schedtest.Path(2, 30*time.Millisecond, 20, 0)
	conn := schedtest.Conn(t0, 100)
	if d := s.Decide(&conn, []sched.PathInfo{a, b}); d.Action != sched.SendNext || d.Paths != sched.Of(1) {
		t.Fatalf("slot 1 chosen: got %+v, want SendNext on index 1", d)
	}
	conn.Now = t0.Add(time.Millisecond) // same TI, snapshot reordered
	if d := s.Decide(&conn, []sched.PathInfo{b, a}); d.Paths != sched.Of(0) {
		t.Fatalf("reordered: got %+v, want index 0 (path 2)", d)
	}
	if d := s.Decide(&conn, []sched.PathInfo{a}); d.Action != sched.Wait || !d.RetryAt.Equal(t0.Add(10*time.Millisecond)) {
		t.Fatalf("chosen path gone: got %+v, want Wait until the TI's end", d)
	}
}

type failing struct{}

func (failing) Act(*Observation, *Action) error { return errors.New("broken model") }

// A failing policy gives minRTT for the TI, counted and logged at most once
// a second.
func TestPolicyErrorFallsBackToMinRTT(t *testing.T) {
	var lines []string
	s := New(Config{Policy: failing{}, Log: func(l string) { lines = append(lines, l) }})
	paths := schedtest.Paths(3)
	for k := 0; k < 300; k++ { // 300 TIs of 10 ms: 3 s
		conn := schedtest.Conn(t0.Add(time.Duration(k)*10*time.Millisecond), 100)
		got, want := s.Decide(&conn, paths), minrtt.New().Decide(&conn, paths)
		if got.Action != want.Action || got.Paths != want.Paths {
			t.Fatalf("TI %d: got %+v, want minRTT's %+v", k, got, want)
		}
	}
	if st := s.Stats(); st.PolicyErrors != 300 {
		t.Errorf("PolicyErrors = %d, want 300", st.PolicyErrors)
	}
	if len(lines) < 2 || len(lines) > 4 || !strings.Contains(lines[0], "broken model") {
		t.Errorf("log lines over 3 s: %q, want 3 or so naming the error", lines)
	}
}

// The reports received during a TI reach the next observation with EdAR's
// reward, and the observation's clock and TI are the boundaries'.
func TestObservationCarriesReportsAndReward(t *testing.T) {
	pol := &fixed{all: true, keep: true}
	cfg := edar.RewardWithBuffer(128 << 10)
	s := New(Config{Policy: pol, Reward: cfg, Log: quiet})
	paths := schedtest.Paths(2) // MinRTT 10 ms: TI 10 ms
	conn := schedtest.Conn(t0, 100)
	s.Decide(&conn, paths)
	r1 := sched.ReceiverReport{Interval: 5 * time.Millisecond, GoodputBytes: 10000, PathBytes: [8]uint64{0, 9000, 3000}, ReorderBytes: 100}
	r2 := sched.ReceiverReport{Interval: 5 * time.Millisecond, GoodputBytes: 2000, HoLBlocked: time.Millisecond, ReorderBytes: 700}
	s.ReceiverReport(t0.Add(2*time.Millisecond), r1)
	s.ReceiverReport(t0.Add(6*time.Millisecond), r2)
	conn.Now = t0.Add(12 * time.Millisecond)
	s.Decide(&conn, paths)
	o := pol.seen[1]
	var want sched.ReceiverReport
	edar.MergeReport(&want, &r1)
	edar.MergeReport(&want, &r2)
	if o.Reports != 2 || o.Report != want {
		t.Fatalf("observation report %+v (%d), want %+v (2)", o.Report, o.Reports, want)
	}
	if w := edar.Reward(&want, &cfg); o.Reward != w {
		t.Errorf("reward %+v, want %+v", o.Reward, w)
	}
	var c [NumConnFeatures]float64
	o.ConnFeatures(c[:])
	if c[ConnTime] != 0.012 || c[ConnTI] != 0.012 {
		t.Errorf("time %v s, TI %v s: want 0.012, 0.012", c[ConnTime], c[ConnTI])
	}
	var r [NumReportFeatures + 2]float64
	o.ReportFeatures(r[:], 2)
	if r[NumReportFeatures] != 9000 || r[NumReportFeatures+1] != 3000 { // slot 0 is path ID 1
		t.Errorf("bytes per slot %v, want 9000, 3000 (by path ID)", r[NumReportFeatures:])
	}
	if pol.seen[0].Reports != 0 || pol.seen[0].Step != 0 || o.Step != 1 {
		t.Errorf("steps %d, %d and first reports %d", pol.seen[0].Step, o.Step, pol.seen[0].Reports)
	}
}

// "Decide is on the hot path: it must not allocate" (sched.Scheduler).
func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler {
		return New(Config{Policy: &fixed{all: true, a: Action{Copy: true}}, EdarState: true, Log: quiet})
	})
}

func BenchmarkDecide(b *testing.B) {
	b.Run("learned", func(b *testing.B) {
		schedtest.BenchmarkDecide(b, func() sched.Scheduler {
			return New(Config{Policy: &fixed{all: true}, EdarState: true, Log: quiet})
		})
	})
}

// A policy that reads EdAR's state needs PTOCount, which only the per-ACK
// feed gives (sched/signals.go); one that does not runs on the cheap
// signals, the same in training (pkg/gym) and in deployment.
func TestPerAckSignalsFollowEdarState(t *testing.T) {
	for _, edarState := range []bool{false, true} {
		s := New(Config{EdarState: edarState})
		if got := sched.NeedsPerAckSignals(s); got != edarState {
			t.Errorf("EdarState %v: NeedsPerAckSignals = %v, want %v", edarState, got, edarState)
		}
	}
}

// sched.QuickUntil: QuickAt is true exactly when a Decide at now would not
// ask the Policy (which may block on the environment's pipe).
func TestQuickAtMatchesPolicyCalls(t *testing.T) {
	pol := &fixed{all: true, keep: true}
	s := New(Config{Policy: pol, Log: quiet})
	paths := schedtest.Paths(2) // MinRTT 10 ms: TI 10 ms
	if s.QuickAt(t0) {
		t.Fatal("QuickAt before the first Decide: true, want false")
	}
	for _, ms := range []int{0, 3, 9, 10, 11, 19, 20, 45} {
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		quick := s.QuickAt(now)
		before := len(pol.seen)
		conn := schedtest.Conn(now, 100)
		s.Decide(&conn, paths)
		if asked := len(pol.seen) > before; asked == quick {
			t.Errorf("at %d ms: QuickAt %v, policy asked %v", ms, quick, asked)
		}
	}
}
