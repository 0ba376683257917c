// Package learned is a scheduler driven by a policy that is asked once per
// decision interval: the training environment's (pkg/gym, python/mpqgym)
// agent while it learns, and the ONNX network it exports afterwards
// (pkg/model/gympolicy), through the same code, so a trained policy sees in
// mpquic-bench exactly what it saw in training.
//
// Decision interval (TI): as EdAR's (sched/edar), min over paths of MinRTT,
// edar.DefaultTI before any RTT sample. At the first Decide and at the first
// Decide at or after the end of each TI, the scheduler builds an
// Observation (the sched.ConnInfo and sched.PathInfo snapshots, the
// receiver's reports of the TI that ended and their EdAR reward, and
// optionally EdAR's state) and asks the Policy for an Action: a set of
// paths and whether to send new data or copies. For the whole TI every
// Decide then applies that Action:
//
//   - new data (Copy false): the path with the lowest smoothed RTT among the
//     chosen paths that can send takes the next segment (sched/minrtt's rule
//     within the set: backups only if no chosen regular path is live, a
//     stream's path preference honoured when its path is chosen);
//   - copies (Copy true): every chosen path with room sends its oldest
//     unacknowledged segment it has not carried (sched.SendCopy with
//     sched.OldestUncarried), backups only if no chosen regular path has
//     room (EdAR's redundant mode);
//   - nothing chosen can send: Wait until the TI ends.
//
// So the Action {all paths, new} is minRTT and {all paths, copy} is EdAR's
// redundant mode. Paths are chosen by their slot in the Observation (slot i
// is the i-th path of the snapshot); the scheduler remembers their IDs, so
// a path that leaves or joins during the TI does not shift the choice. A
// path that joins during the TI is chosen if every observed path was (all
// paths stay all paths), else not until the next TI.
//
// When the Policy fails, the scheduler logs it (at most once a second) and
// sends new data on every path (minRTT) for that TI. Decide does not
// allocate; the Policy runs once per TI.
package learned

import (
	"fmt"
	"log"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name. Registered without a Policy, "learned" runs
// minRTT (the fallback action) and logs that once; mpquic-bench and
// mpquic-server give it the policy of -policy FILE.
const Name = "learned"

func init() {
	sched.Register(Name, func() sched.Scheduler { return New(Config{}) })
}

// MaxSlots is the largest number of paths an Observation describes; paths
// beyond the first MaxSlots of a snapshot still carry traffic under the
// fallback rule of the set they are not in (they are never chosen).
const MaxSlots = edar.MaxSubflows

// Action is a policy's choice for one TI: a subset of sched.Decision.
type Action struct {
	Paths sched.PathSet // slots of the Observation (bit i: its i-th path); empty: send nothing this TI
	Copy  bool          // true: copies of unacknowledged data (EdAR's redundant mode); false: new data
}

// Policy chooses the Action of the TI that starts at o.Conn.Now. Act is
// called once per TI from the scheduler's goroutine; implementations shared
// between connections must be safe for concurrent use. An error makes the
// scheduler send new data on every path for that TI (logged).
type Policy interface {
	Act(o *Observation, a *Action) error
}

// Config configures a Scheduler. The zero value is a policy-less scheduler
// that runs minRTT and logs with the standard logger.
type Config struct {
	// Name is what Name returns; "" means Name.
	Name string
	// Policy chooses the actions; nil means the fallback every TI.
	Policy Policy
	// EdarState makes Observation.Edar EdAR's state (sched/edar's
	// features and history); off, it stays zero and costs nothing.
	EdarState bool
	// Reward is the reward configuration of Observation.Reward; zero means
	// edar.DefaultReward.
	Reward edar.RewardConfig
	// Log receives one line per notable event; nil means log.Print.
	Log func(string)
}

// Stats counts what happened, for tests and logs.
type Stats struct {
	Intervals    uint64 // TIs begun (the first included)
	PolicyErrors uint64 // TIs whose Policy failed (the fallback was used)
	Reports      uint64 // receiver reports received
}

// errorLogEvery bounds the policy-error log to one line per this long.
const errorLogEvery = time.Second

// Scheduler is the learned scheduler of one connection. Decide and
// ReceiverReport are called from one goroutine at a time (the transport
// serialises them); Final too, once the transport no longer calls them.
type Scheduler struct {
	cfg     Config
	started bool
	next    time.Time // end of the current TI
	tiStart time.Time // start of the current TI

	obs      Observation
	act      Action
	ids      [MaxSlots]sched.PathID // IDs of the chosen paths
	nids     int
	all      bool // every observed path is chosen: so is a path that joins during the TI
	edarObs  edar.Observer
	reports  sched.ReceiverReport // merged reports of the current TI
	nreports int

	lastLog time.Time
	dropped uint64
	stats   Stats
}

// New returns a learned scheduler.
func New(cfg Config) *Scheduler {
	if cfg.Reward == (edar.RewardConfig{}) {
		cfg.Reward = edar.DefaultReward
	}
	if cfg.Log == nil {
		cfg.Log = func(s string) { log.Print(s) }
	}
	return &Scheduler{cfg: cfg}
}

// Name implements sched.Scheduler: Config.Name, or Name.
func (s *Scheduler) Name() string {
	if s.cfg.Name != "" {
		return s.cfg.Name
	}
	return Name
}

// NeedsPerAckSignals implements sched.PerAckSignals: a policy that reads
// EdAR's state (Config.EdarState) needs PTOCount, which only the per-ACK
// feed gives. Without EdAR's state the Observation's PTOCount is 0 and
// LossRate and BytesInFlight are the transport's cheap estimates
// (sched/signals.go), in training (pkg/gym) and in deployment alike, so
// what a policy learns carries over.
func (s *Scheduler) NeedsPerAckSignals() bool { return s.cfg.EdarState }

// Stats returns the counters.
func (s *Scheduler) Stats() Stats { return s.stats }

// Action is the action of the current TI.
func (s *Scheduler) Action() Action { return s.act }

// QuickAt implements sched.QuickUntil: within a TI, Decide only applies the
// Action the Policy chose; at its end it asks the Policy again, which may
// block (the environment's agent answers over a pipe).
func (s *Scheduler) QuickAt(now time.Time) bool { return s.started && now.Before(s.next) }

// Decide implements sched.Scheduler.
func (s *Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if !s.QuickAt(conn.Now) {
		s.boundary(conn, paths)
	}
	set := s.chosen(paths)
	if s.act.Copy {
		if cs := sched.WithRoom(paths, set); cs != 0 {
			return sched.Decision{Action: sched.SendCopy, Paths: cs, Seq: sched.OldestUncarried}
		}
	} else if i := pickIn(conn, paths, set); i >= 0 {
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
	}
	return sched.Decision{Action: sched.Wait, RetryAt: s.next}
}

// ReceiverReport implements sched.ReceiverObserver: the report joins the
// current TI's, which the next Observation carries.
func (s *Scheduler) ReceiverReport(now time.Time, r sched.ReceiverReport) {
	s.stats.Reports++
	edar.MergeReport(&s.reports, &r)
	s.nreports++
}

// boundary ends the current TI (if any), builds the Observation and asks
// the Policy for the next TI's Action.
func (s *Scheduler) boundary(conn *sched.ConnInfo, paths []sched.PathInfo) {
	first := !s.started
	if first {
		s.started = true
		s.obs.Start = conn.Now
		s.tiStart = conn.Now
	}
	s.fill(conn, paths, first)
	s.stats.Intervals++
	s.choose(conn.Now)
	s.tiStart = conn.Now
	s.next = conn.Now.Add(ti(paths))
}

// fill builds s.obs from the snapshots and the report window, and clears
// the window.
func (s *Scheduler) fill(conn *sched.ConnInfo, paths []sched.PathInfo, first bool) {
	o := &s.obs
	o.Conn = *conn
	o.N = min(len(paths), MaxSlots)
	copy(o.Paths[:o.N], paths)
	s.stamp(o, conn.Now)
	if s.cfg.EdarState {
		prev := edar.Normal
		if first || s.act.Copy {
			prev = edar.Redundant // sched/edar's a_{-1}: it starts redundant
		}
		s.edarObs.Observe(&o.Edar, conn, paths, prev)
	}
	s.reports, s.nreports = sched.ReceiverReport{}, 0
}

// choose asks the Policy for the Action of the TI starting at now and
// records the chosen paths' IDs.
func (s *Scheduler) choose(now time.Time) {
	a := Action{Paths: allSlots(s.obs.N)}
	switch p := s.cfg.Policy; {
	case p == nil:
		if s.stats.Intervals == 1 {
			s.logf("learned: no policy set; minRTT (new data on every path) until one is")
		}
	default:
		if err := p.Act(&s.obs, &a); err != nil {
			s.stats.PolicyErrors++
			s.policyFailed(now, err)
			a = Action{Paths: allSlots(s.obs.N)}
		}
	}
	s.act = a
	s.nids = 0
	for i := 0; i < s.obs.N; i++ {
		if a.Paths.Has(i) {
			s.ids[s.nids] = s.obs.Paths[i].ID
			s.nids++
		}
	}
	s.all = s.obs.N > 0 && s.nids == s.obs.N
}

// Final returns the Observation at now of the TI in progress, with the
// reports received since its start, for the end of an episode (the flow
// ended between two boundaries). Call it only once the transport no longer
// calls Decide or ReceiverReport; nil before the first Decide.
func (s *Scheduler) Final(now time.Time) *Observation {
	if !s.started {
		return nil
	}
	o := s.obs
	o.Conn.Now = now
	s.stamp(&o, now)
	return &o
}

// stamp sets what o says of the interval ending at now: its length, the
// action in force, the receiver's reports and their reward, the step.
func (s *Scheduler) stamp(o *Observation, now time.Time) {
	o.TI = now.Sub(s.tiStart)
	o.Prev = s.act
	o.Report, o.Reports = s.reports, s.nreports
	o.Reward = edar.RewardTerms{}
	if s.nreports > 0 {
		o.Reward = edar.Reward(&o.Report, &s.cfg.Reward)
	}
	o.Step = s.stats.Intervals
}

// policyFailed logs a policy error, at most one line per errorLogEvery.
func (s *Scheduler) policyFailed(now time.Time, err error) {
	if !s.lastLog.IsZero() && now.Sub(s.lastLog) < errorLogEvery {
		s.dropped++
		return
	}
	s.logf("learned: policy error, minRTT for this TI: %v (%d similar errors suppressed)", err, s.dropped)
	s.lastLog, s.dropped = now, 0
}

func (s *Scheduler) logf(format string, args ...any) { s.cfg.Log(fmt.Sprintf(format, args...)) }

// ti is the decision interval: min over paths of MinRTT, edar.DefaultTI if
// none is measured.
func ti(paths []sched.PathInfo) time.Duration {
	t := time.Duration(0)
	for i := range paths {
		if r := paths[i].MinRTT; r > 0 && (t == 0 || r < t) {
			t = r
		}
	}
	if t == 0 {
		return edar.DefaultTI
	}
	return t
}

// allSlots is the set of slots 0..n-1.
func allSlots(n int) sched.PathSet { return sched.PathSet(1)<<uint(n) - 1 }

// chosen maps the chosen IDs to indexes of paths. When every observed path
// was chosen, a path the observation did not describe (it joined during the
// TI, or lies beyond MaxSlots) is chosen too: "all paths" stays all paths.
func (s *Scheduler) chosen(paths []sched.PathInfo) sched.PathSet {
	var set sched.PathSet
	for i := range paths {
		if s.all && !s.observed(paths[i].ID) {
			set = set.Add(i)
			continue
		}
		for k := 0; k < s.nids; k++ {
			if paths[i].ID == s.ids[k] {
				set = set.Add(i)
				break
			}
		}
	}
	return set
}

// observed reports whether the current Observation describes path id.
func (s *Scheduler) observed(id sched.PathID) bool {
	for i := 0; i < s.obs.N; i++ {
		if s.obs.Paths[i].ID == id {
			return true
		}
	}
	return false
}

// pickIn is minRTT within set: the index to send the next segment on, or
// -1 (nothing chosen can send, or the data is pinned to a full path).
func pickIn(conn *sched.ConnInfo, paths []sched.PathInfo, set sched.PathSet) int {
	if k, _ := conn.PreferredIndex(paths); k >= 0 && set.Has(k) {
		if !paths[k].SendingAllowed() {
			return -1
		}
		return k
	}
	backups := true // sched.OnlyBackups over the set
	for i := range paths {
		if set.Has(i) && !paths[i].Backup && !paths[i].PotentiallyFailed {
			backups = false
			break
		}
	}
	best := -1
	for i := range paths {
		p := &paths[i]
		if !set.Has(i) || !p.SendingAllowed() || p.Backup && !backups {
			continue
		}
		if best < 0 || minrtt.Faster(p, &paths[best]) {
			best = i
		}
	}
	return best
}

var (
	_ sched.Scheduler        = (*Scheduler)(nil)
	_ sched.ReceiverObserver = (*Scheduler)(nil)
)
