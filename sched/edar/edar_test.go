package edar

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakePolicy answers fixed Q-values (or an error) and counts its calls.
type fakePolicy struct {
	q     [2]float32
	err   error
	calls int
}

func (p *fakePolicy) Q(_ *State, q *[2]float32) error {
	p.calls++
	if p.err != nil {
		return p.err
	}
	*q = p.q
	return nil
}

// logSink collects log lines.
type logSink struct{ lines []string }

func (l *logSink) log(s string) { l.lines = append(l.lines, s) }

// twoPaths: path 0 has 20 ms RTT, path 1 has 30 ms; both have window room.
func twoPaths() []sched.PathInfo {
	return []sched.PathInfo{
		schedtest.Path(1, 20*time.Millisecond, 20, 5),
		schedtest.Path(2, 30*time.Millisecond, 20, 5),
	}
}

func TestModeSwitchPerTI(t *testing.T) {
	pol := &fakePolicy{q: [2]float32{1, 0}} // prefers normal
	logs := &logSink{}
	s := New(Config{Policy: pol, Log: logs.log})
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)

	// §IV.B: "EdAR uses redundant transmission at the very beginning of a
	// connection".
	d := s.Decide(&conn, paths)
	want := sched.Decision{Action: sched.SendCopy, Paths: sched.Of(0).Add(1), Seq: sched.OldestUncarried}
	if d != want {
		t.Fatalf("first decision = %+v, want %+v", d, want)
	}
	// §IV.B: "TI is the minimum round trip time (RTT) of all subflows".
	if got := s.TI(); got != 20*time.Millisecond {
		t.Fatalf("TI = %v, want 20ms (min MinRTT)", got)
	}
	// Within the TI the mode holds and the policy is not consulted.
	conn.Now = t0.Add(19 * time.Millisecond)
	if d := s.Decide(&conn, paths); d.Action != sched.SendCopy || pol.calls != 0 {
		t.Fatalf("inside first TI: %+v, policy calls %d", d, pol.calls)
	}
	// At the boundary the policy decides once: normal → minRTT.
	conn.Now = t0.Add(20 * time.Millisecond)
	d = s.Decide(&conn, paths)
	if want := (sched.Decision{Action: sched.SendNext, Paths: sched.Of(0)}); d != want || pol.calls != 1 {
		t.Fatalf("after boundary: %+v (policy calls %d), want %+v", d, pol.calls, want)
	}
	conn.Now = t0.Add(30 * time.Millisecond)
	s.Decide(&conn, paths)
	if pol.calls != 1 {
		t.Fatalf("policy called %d times inside one TI, want 1", pol.calls)
	}
	// Next TI: the policy now prefers redundant.
	pol.q = [2]float32{0, 1}
	conn.Now = t0.Add(40 * time.Millisecond)
	if d := s.Decide(&conn, paths); d.Action != sched.SendCopy || d.Seq != sched.OldestUncarried || d.Paths.Len() != 2 {
		t.Fatalf("redundant TI: %+v", d)
	}
	if st := s.Stats(); st.Intervals != 2 || st.Redundant != 2 {
		t.Fatalf("stats %+v, want 2 intervals, 2 redundant TIs", st)
	}
	if len(logs.lines) != 0 {
		t.Fatalf("unexpected log lines %q", logs.lines)
	}
}

func TestRedundantMarksOnlyPathsWithRoom(t *testing.T) {
	s := New(Config{Policy: &fakePolicy{q: [2]float32{0, 1}}, Log: func(string) {}})
	paths := twoPaths()
	paths[0].BytesInFlight = paths[0].CongestionWindow // full
	conn := schedtest.Conn(t0, 100)
	if d := s.Decide(&conn, paths); d.Paths != sched.Of(1) || d.Action != sched.SendCopy {
		t.Fatalf("got %+v, want SendCopy on path index 1 only", d)
	}
	paths[1].BytesInFlight = paths[1].CongestionWindow
	if d := s.Decide(&conn, paths); d.Action != sched.Wait || !d.RetryAt.Equal(t0.Add(20*time.Millisecond)) {
		t.Fatalf("got %+v, want Wait until the TI boundary", d)
	}
}

func TestDefaultTIBeforeRTTSample(t *testing.T) {
	s := New(Config{Log: func(string) {}})
	paths := twoPaths()
	for i := range paths {
		paths[i].MinRTT = 0
	}
	conn := schedtest.Conn(t0, 100)
	s.Decide(&conn, paths)
	if s.TI() != DefaultTI {
		t.Fatalf("TI = %v, want DefaultTI %v", s.TI(), DefaultTI)
	}
}

func TestPolicyErrorFallsBackToMinRTTAndLogs(t *testing.T) {
	pol := &fakePolicy{err: errors.New("model exploded")}
	logs := &logSink{}
	s := New(Config{Policy: pol, Log: logs.log})
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)
	s.Decide(&conn, paths)
	conn.Now = t0.Add(20 * time.Millisecond)
	d := s.Decide(&conn, paths)
	if want := (sched.Decision{Action: sched.SendNext, Paths: sched.Of(0)}); d != want {
		t.Fatalf("on policy error: %+v, want minRTT %+v", d, want)
	}
	if len(logs.lines) != 1 || !strings.Contains(logs.lines[0], "model exploded") || !strings.Contains(logs.lines[0], "minRTT") {
		t.Fatalf("log lines %q, want one naming the error and the minRTT fallback", logs.lines)
	}
	// Errors within a second are counted, not logged; the next line says so.
	for i := 2; i <= 60; i++ {
		conn.Now = t0.Add(time.Duration(i) * 20 * time.Millisecond)
		s.Decide(&conn, paths)
	}
	if len(logs.lines) != 2 || !strings.Contains(logs.lines[1], "(49 similar errors suppressed)") {
		t.Fatalf("log lines %q", logs.lines)
	}
	if st := s.Stats(); st.PolicyErrors != 60 {
		t.Fatalf("PolicyErrors = %d, want 60", st.PolicyErrors)
	}
}

func TestNoPolicyLogsAndUsesNoPolicyMode(t *testing.T) {
	logs := &logSink{}
	s := New(Config{NoPolicyMode: Normal, Log: logs.log})
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)
	if d := s.Decide(&conn, paths); d.Action != sched.SendCopy {
		t.Fatalf("first TI must be redundant, got %+v", d)
	}
	conn.Now = t0.Add(time.Second)
	if d := s.Decide(&conn, paths); d.Action != sched.SendNext {
		t.Fatalf("no policy: got %+v, want normal mode", d)
	}
	if len(logs.lines) != 1 || !strings.Contains(logs.lines[0], "no policy") {
		t.Fatalf("log lines %q", logs.lines)
	}
}

func TestSetPolicyTakesEffectAtNextBoundary(t *testing.T) {
	s := New(Config{Policy: &fakePolicy{q: [2]float32{1, 0}}, Log: func(string) {}})
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)
	s.Decide(&conn, paths)
	conn.Now = t0.Add(20 * time.Millisecond)
	s.Decide(&conn, paths)
	if s.Mode() != Normal {
		t.Fatal("want normal")
	}
	s.SetPolicy(&fakePolicy{q: [2]float32{0, 1}})
	conn.Now = t0.Add(25 * time.Millisecond)
	if s.Decide(&conn, paths); s.Mode() != Normal {
		t.Fatal("swap must not change the mode inside a TI")
	}
	conn.Now = t0.Add(40 * time.Millisecond)
	if s.Decide(&conn, paths); s.Mode() != Redundant {
		t.Fatal("new policy not used at the next boundary")
	}
}

func TestEpsilonGreedy(t *testing.T) {
	// §V.C: "It randomly chooses an action from action space with the
	// probability ε, and chooses the action a = argmax_a Q(s, a|θ) with the
	// probability (1 − ε)."
	pol := &fakePolicy{q: [2]float32{1, 0}}
	s := New(Config{Policy: pol, Epsilon: 0.5, Rand: rand.New(rand.NewPCG(1, 2)), Log: func(string) {}})
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)
	s.Decide(&conn, paths)
	const n = 2000
	for i := 1; i <= n; i++ {
		conn.Now = t0.Add(time.Duration(i) * 20 * time.Millisecond)
		s.Decide(&conn, paths)
	}
	st := s.Stats()
	// Explored ≈ ε·n; half of those draw redundant.
	if st.Explored < 900 || st.Explored > 1100 || st.Redundant-1 < 400 || st.Redundant-1 > 600 {
		t.Fatalf("ε = 0.5 over %d TIs: %+v", n, st)
	}
	s.SetEpsilon(0)
	before := s.Stats()
	for i := n + 1; i <= n+100; i++ {
		conn.Now = t0.Add(time.Duration(i) * 20 * time.Millisecond)
		s.Decide(&conn, paths)
	}
	if after := s.Stats(); after.Explored != before.Explored || after.Redundant != before.Redundant {
		t.Fatalf("greedy still explores: %+v → %+v", before, after)
	}
}

func TestTransitionsCarryRewardOfNextTI(t *testing.T) {
	var got []Transition
	pol := &fakePolicy{q: [2]float32{1, 0}}
	s := New(Config{Policy: pol, Sink: func(tr Transition) { got = append(got, tr) }, Log: func(string) {}})
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)
	rep := sched.ReceiverReport{Interval: 20 * time.Millisecond, GoodputBytes: 25000, PathBytes: [8]uint64{25000}}

	s.Decide(&conn, paths) // TI 0 (redundant), s_0
	conn.Now = t0.Add(20 * time.Millisecond)
	s.Decide(&conn, paths) // TI 1: pending (s_0, redundant, s_1)
	s.ReceiverReport(conn.Now, rep)
	conn.Now = t0.Add(40 * time.Millisecond)
	s.Decide(&conn, paths) // emits (s_0, redundant, r, s_1); pending (s_1, normal, s_2)
	if len(got) != 1 {
		t.Fatalf("%d transitions, want 1", len(got))
	}
	// 25000 B in 20 ms = 1.25 MB/s = V_g 1; no waste, no reordering.
	if tr := got[0]; tr.A != Redundant || tr.R != 1 || tr.Done || tr.S.N != 2 || tr.S2.Conn[ConnPrevAction] != 1 {
		t.Fatalf("transition %+v", tr)
	}
	conn.Now = t0.Add(60 * time.Millisecond)
	s.Decide(&conn, paths) // no report in TI 2: dropped
	if st := s.Stats(); st.NoReport != 1 || len(got) != 1 {
		t.Fatalf("stats %+v, transitions %d", st, len(got))
	}
	s.ReceiverReport(conn.Now, rep)
	s.EndOfFlow()
	if len(got) != 2 || !got[1].Done || got[1].A != Normal {
		t.Fatalf("EndOfFlow: %+v", got[len(got)-1])
	}
}

func TestDecideDoesNotAllocate(t *testing.T) {
	sink := 0
	s := New(Config{
		Policy: &fakePolicy{q: [2]float32{0, 1}}, Epsilon: 0.1, Rand: rand.New(rand.NewPCG(1, 1)),
		Sink: func(Transition) { sink++ }, Log: func(string) {},
	})
	paths := schedtest.Paths(4)
	conn := schedtest.Conn(t0, 100)
	i := 0
	rep := sched.ReceiverReport{Interval: time.Millisecond, GoodputBytes: 1000}
	allocs := alloctest.Mallocs(1000, func() {
		i++
		conn.Now = t0.Add(time.Duration(i) * 5 * time.Millisecond) // a boundary every other call
		s.Decide(&conn, paths)
		s.ReceiverReport(conn.Now, rep)
	})
	if allocs != 0 {
		t.Fatalf("Decide and ReceiverReport: %d allocations in 1000 calls, want 0", allocs)
	}
	if sink == 0 {
		t.Fatal("sink never called")
	}
	if a := schedtest.AllocsPerDecide(New(Config{Log: func(string) {}}), 8); a != 0 {
		t.Fatalf("AllocsPerDecide = %v", a)
	}
}

func TestRegistered(t *testing.T) {
	s, err := sched.New(Name)
	if err != nil || s.Name() != Name {
		t.Fatalf("sched.New(%q) = %v, %v", Name, s, err)
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run("edar", func(b *testing.B) {
		schedtest.BenchmarkDecide(b, func() sched.Scheduler {
			return New(Config{Policy: &fakePolicy{q: [2]float32{1, 0}}, Log: func(string) {}})
		})
	})
}

// BenchmarkBoundary measures one TI boundary (observe the state, settle the
// transition, ask the policy) with a free policy.
func BenchmarkBoundary(b *testing.B) {
	s := New(Config{Policy: &fakePolicy{q: [2]float32{1, 0}}, Sink: func(Transition) {}, Log: func(string) {}})
	paths := schedtest.Paths(2)
	conn := schedtest.Conn(t0, 100)
	rep := sched.ReceiverReport{Interval: time.Millisecond, GoodputBytes: 1000}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		conn.Now = t0.Add(time.Duration(i) * time.Second)
		s.ReceiverReport(conn.Now, rep)
		s.Decide(&conn, paths)
	}
}

// sched.QuickUntil: QuickAt says whether a Decide at now would only apply
// the TI's mode (quick) or end the TI and ask the policy (not quick), and
// is true exactly when the policy is not asked.
func TestQuickAtMatchesPolicyCalls(t *testing.T) {
	pol := &fakePolicy{q: [2]float32{1, 0}}
	s := New(Config{Policy: pol, Log: func(string) {}})
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)
	if s.QuickAt(t0) {
		t.Fatal("QuickAt before the first Decide: true, want false (the first Decide observes)")
	}
	s.Decide(&conn, paths) // starts the first TI (20 ms)
	for _, ms := range []int{0, 5, 19, 20, 21, 39, 40, 75} {
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		quick := s.QuickAt(now)
		before := pol.calls
		conn.Now = now
		s.Decide(&conn, paths)
		if asked := pol.calls > before; asked == quick {
			t.Errorf("at %d ms: QuickAt %v, policy asked %v", ms, quick, asked)
		}
	}
}
