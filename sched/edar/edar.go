// Package edar is EdAR, the experience-driven adaptive redundant scheduler
// (Han et al., IEEE TWC 2023, §IV).
//
// EdAR has two modes (§IV.A). In normal mode every segment is sent once, on
// the minRTT path with room (sched/minrtt.Pick). In redundant mode every
// path with room is marked and asked for a SendCopy with Seq =
// sched.OldestUncarried: the transport's redundant buffer gives each path the
// oldest unacknowledged segment it has not carried yet, else new data. The
// connection starts in redundant mode. The mode is chosen once per time
// interval TI = min over paths of MinRTT (DefaultTI until an RTT is
// measured), from the State observed over the last TI (§IV.B), by a Policy
// that maps the State to the two Q-values Q(s, normal), Q(s, redundant).
//
// The package imports no ML code: a Policy is any value with a Q method
// (pkg/model/gonet is pure Go; pkg/model/ort runs onnxruntime). When the
// Policy fails, the scheduler logs it and falls back to normal (minRTT) mode
// for that TI. ε-greedy exploration, a Transition sink for data collection
// (§V.B, Algorithm 1) and atomic policy hot-swap for online learning (§V.C,
// Algorithm 2) are built in.
//
// Decide does not allocate. Once per TI it evaluates the Policy (which may
// allocate, depending on the backend) and calls the sink.
package edar

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name of EdAR-p, the greedy policy of a pre-trained
// (offline) model.
const Name = "edar"

// NameOnline is the registry name of EdAR-o (§V.C): ε-greedy over a model
// that an asynchronous trainer keeps improving from the flows' transitions.
// Registered without a model it behaves like "edar"; mpquic-bench gives it
// its policy, exploration, replay store and model watcher.
const NameOnline = "edar-o"

// DefaultTI is the decision interval, before any path has an RTT sample.
const DefaultTI = 10 * time.Millisecond

// errorLogEvery bounds the policy-error log to one line per this long.
const errorLogEvery = time.Second

// The registered "edar" has no Policy: it starts redundant for its first
// TI, then runs in Config.NoPolicyMode (normal, i.e. minRTT) until a Policy
// is set with SetPolicy. It logs that once with the standard logger.
func init() {
	sched.Register(Name, func() sched.Scheduler { return New(Config{}) })
	sched.Register(NameOnline, func() sched.Scheduler { return New(Config{Name: NameOnline}) })
}

// Mode is an EdAR action a_t.
type Mode uint8

const (
	Normal    Mode = 0 // every segment once, on the minRTT path with room
	Redundant Mode = 1 // every path with room sends its oldest uncarried segment
)

// String is "normal" or "redundant".
func (m Mode) String() string {
	if m == Redundant {
		return "redundant"
	}
	return "normal"
}

// Policy maps a State to Q-values: q[0] = Q(s, Normal), q[1] = Q(s,
// Redundant). The scheduler takes argmax (ties go to Normal). Q is called
// once per TI from the scheduler's goroutine; implementations shared between
// connections must be safe for concurrent use.
type Policy interface {
	Q(s *State, q *[2]float32) error
}

// Transition is one experience (s_t, a_t, r_t, s_{t+1}) of Algorithm 1.
type Transition struct {
	S    State   // s_t
	A    Mode    // a_t, the mode used during TI t
	R    float32 // r_t, from the receiver reports attributed to TI t
	S2   State   // s_{t+1}; meaningful only if !Done
	Done bool    // the flow ended after t: the target is y_t = r_t
}

// Config configures a Scheduler. The zero value is a policy-less EdAR that
// logs with the standard logger.
type Config struct {
	// Name is what Name returns; "" means Name ("edar").
	Name string
	// Policy chooses the mode; nil means NoPolicyMode every TI.
	Policy Policy
	// NoPolicyMode is the mode used while there is no Policy (Algorithm 1
	// collects data with a fixed μ(s) = normal or μ(s) = redundant).
	NoPolicyMode Mode
	// Epsilon is the ε of ε-greedy exploration (§V.C), in [0, 1]; 0 is
	// greedy. Rand must be set when Epsilon > 0.
	Epsilon float64
	// Rand drives exploration; pass a seeded generator for repeatable runs.
	Rand *rand.Rand
	// Sink receives every completed Transition, once per TI, from the
	// scheduler's goroutine. It must not block for long.
	Sink func(Transition)
	// Reward is the reward configuration; zero means DefaultReward.
	Reward RewardConfig
	// Log receives one line per notable event (policy error and fallback,
	// policy swap, missing policy). nil means log.Print.
	Log func(string)
}

// policyBox lets a Policy interface value be swapped atomically.
type policyBox struct{ p Policy }

// Stats counts what happened, for tests and logs.
type Stats struct {
	Intervals     uint64 // TI boundaries crossed
	Redundant     uint64 // TIs spent in redundant mode (the first included)
	Explored      uint64 // TIs whose mode ε-greedy drew at random
	PolicyErrors  uint64 // TIs whose Policy failed (normal mode was used)
	Transitions   uint64 // transitions handed to the sink
	NoReport      uint64 // transitions dropped: no receiver report arrived for them
	ReportsMerged uint64 // receiver reports received
}

// Scheduler is the EdAR scheduler for one connection. Decide, ReceiverReport
// and EndOfFlow are called from one goroutine; SetPolicy and SetEpsilon may
// be called from any goroutine.
type Scheduler struct {
	cfg     Config
	policy  atomic.Pointer[policyBox]
	epsilon atomic.Uint64 // math.Float64bits of ε

	started bool
	mode    Mode // mode of the current TI
	ti      time.Duration
	next    time.Time // end of the current TI

	obs observer
	// cur is s_t (observed at the start of the current TI); the pending
	// transition (s_{t-1}, a_{t-1}, s_t) waits for the reports of TI t.
	cur         State
	havePending bool
	pending     Transition
	reports     reportWindow // reports received during the current TI

	q       [2]float32
	lastLog time.Time
	dropped uint64 // error lines suppressed since lastLog
	stats   Stats
}

// New returns an EdAR scheduler.
func New(cfg Config) *Scheduler {
	if cfg.Reward == (RewardConfig{}) {
		cfg.Reward = DefaultReward
	}
	if cfg.Log == nil {
		cfg.Log = func(s string) { log.Print(s) }
	}
	s := &Scheduler{cfg: cfg}
	if cfg.Policy != nil {
		s.policy.Store(&policyBox{cfg.Policy})
	}
	s.epsilon.Store(math.Float64bits(cfg.Epsilon))
	return s
}

// Name implements sched.Scheduler: Config.Name, or Name.
func (s *Scheduler) Name() string {
	if s.cfg.Name != "" {
		return s.cfg.Name
	}
	return Name
}

// NeedsPerAckSignals implements sched.PerAckSignals: EdAR's state holds
// each path's PTOCount (in its RTO feature) and its recent LossRate, which
// only the transport's per-ACK event feed gives as the stack has them.
func (s *Scheduler) NeedsPerAckSignals() bool { return true }

// SetPolicy swaps the policy; the new one decides from the next TI boundary
// on, without interrupting the transfer. nil returns to NoPolicyMode.
func (s *Scheduler) SetPolicy(p Policy) {
	if p == nil {
		s.policy.Store(nil)
		return
	}
	s.policy.Store(&policyBox{p})
}

// SetEpsilon sets the exploration probability ε ∈ [0, 1]; SetEpsilon(0) is
// the greedy policy μ(s) = argmax_a Q(s, a) used after online learning ends.
// ε > 0 needs Config.Rand.
func (s *Scheduler) SetEpsilon(eps float64) { s.epsilon.Store(math.Float64bits(eps)) }

// Mode is the mode of the current TI.
func (s *Scheduler) Mode() Mode { return s.mode }

// TI is the length of the current decision interval.
func (s *Scheduler) TI() time.Duration { return s.ti }

// Stats returns the counters.
func (s *Scheduler) Stats() Stats { return s.stats }

// QuickAt implements sched.QuickUntil: within a TI, Decide only applies the
// chosen mode; at its end it observes and runs the policy, which is not
// quick.
func (s *Scheduler) QuickAt(now time.Time) bool { return s.started && now.Before(s.next) }

// Decide implements sched.Scheduler.
func (s *Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if !s.QuickAt(conn.Now) {
		if !s.started {
			s.start(conn, paths)
		} else {
			s.boundary(conn, paths)
		}
	}
	if s.mode == Redundant {
		if set := sched.WithRoom(paths, sched.AllPaths); set != 0 {
			return sched.Decision{Action: sched.SendCopy, Paths: set, Seq: sched.OldestUncarried}
		}
	} else if i := minrtt.Pick(paths); i >= 0 {
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
	}
	return sched.Decision{Action: sched.Wait, RetryAt: s.next}
}

// start begins the first TI in redundant mode (§IV.B: "EdAR uses redundant
// transmission at the very beginning of a connection").
func (s *Scheduler) start(conn *sched.ConnInfo, paths []sched.PathInfo) {
	s.started = true
	s.obs.observe(&s.cur, conn, paths, Redundant)
	s.mode = Redundant
	s.stats.Redundant++
	s.setTI(conn.Now, paths)
	if s.policy.Load() == nil {
		s.logf("edar: no policy set; %s mode after the first TI until SetPolicy", s.cfg.NoPolicyMode)
	}
}

// setTI starts a TI at now: TI = min_i MinRTT_i, DefaultTI if none measured.
func (s *Scheduler) setTI(now time.Time, paths []sched.PathInfo) {
	ti := time.Duration(0)
	for i := range paths {
		if r := paths[i].MinRTT; r > 0 && (ti == 0 || r < ti) {
			ti = r
		}
	}
	if ti == 0 {
		ti = DefaultTI
	}
	s.ti = ti
	s.next = now.Add(ti)
}

// boundary ends TI t and starts TI t+1: observe s_{t+1}, settle the pending
// transition, choose a_{t+1}.
//
// Reward attribution: data sent during TI t reaches the receiver about half
// an RTT later and its report needs another half RTT to come back, so the
// reports received during TI t+1 are credited to a_t. The transition
// (s_t, a_t, s_{t+1}) therefore waits one TI and is completed at the end of
// TI t+1. A transition for whose window no report arrived is dropped and
// counted in Stats.NoReport.
func (s *Scheduler) boundary(conn *sched.ConnInfo, paths []sched.PathInfo) {
	s.stats.Intervals++
	s.flushPending(false)
	prev := s.cur
	s.obs.observe(&s.cur, conn, paths, s.mode)
	if s.cfg.Sink != nil {
		s.pending = Transition{S: prev, A: s.mode, S2: s.cur}
		s.havePending = true
	}
	s.mode = s.choose(conn.Now)
	if s.mode == Redundant {
		s.stats.Redundant++
	}
	s.setTI(conn.Now, paths)
}

// flushPending emits the pending transition with the reports gathered in the
// TI that just ended, then clears the window.
func (s *Scheduler) flushPending(done bool) {
	if s.havePending {
		if s.reports.count == 0 {
			s.stats.NoReport++
		} else {
			s.pending.R = float32(Reward(&s.reports.agg, &s.cfg.Reward).R)
			s.pending.Done = done
			s.stats.Transitions++
			s.cfg.Sink(s.pending)
		}
		s.havePending = false
	}
	s.reports.reset()
}

// choose picks a_t for the TI starting at now: ε-greedy over the Policy's
// Q-values, NoPolicyMode without a Policy, Normal (minRTT) if it fails.
func (s *Scheduler) choose(now time.Time) Mode {
	if eps := math.Float64frombits(s.epsilon.Load()); eps > 0 && s.cfg.Rand != nil && s.cfg.Rand.Float64() < eps {
		s.stats.Explored++
		return Mode(s.cfg.Rand.IntN(2))
	}
	box := s.policy.Load()
	if box == nil {
		return s.cfg.NoPolicyMode
	}
	if err := box.p.Q(&s.cur, &s.q); err != nil {
		s.stats.PolicyErrors++
		s.policyFailed(now, err)
		return Normal
	}
	if s.q[1] > s.q[0] {
		return Redundant
	}
	return Normal
}

// policyFailed logs a policy error, at most one line per errorLogEvery,
// counting the lines it held back.
func (s *Scheduler) policyFailed(now time.Time, err error) {
	if !s.lastLog.IsZero() && now.Sub(s.lastLog) < errorLogEvery {
		s.dropped++
		return
	}
	s.logf("edar: policy error, normal (minRTT) mode for this TI: %v (%d similar errors suppressed)", err, s.dropped)
	s.lastLog = now
	s.dropped = 0
}

func (s *Scheduler) logf(format string, args ...any) { s.cfg.Log(fmt.Sprintf(format, args...)) }

// ReceiverReport implements sched.ReceiverObserver: the receiver's reward
// features, credited to the previous TI's action (see boundary).
func (s *Scheduler) ReceiverReport(now time.Time, r sched.ReceiverReport) {
	s.stats.ReportsMerged++
	s.reports.add(now, &r)
}

// EndOfFlow completes the last transition with Done = true (its target is
// y_t = r_t) using the reports received so far. Call it when the flow ends.
func (s *Scheduler) EndOfFlow() { s.flushPending(true) }

var (
	_ sched.Scheduler        = (*Scheduler)(nil)
	_ sched.ReceiverObserver = (*Scheduler)(nil)
	_ sched.PerAckSignals    = (*Scheduler)(nil)
)
