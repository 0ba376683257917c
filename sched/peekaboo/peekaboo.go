// Package peekaboo is the Peekaboo scheduler (Wu, Alay, Brunstrom, Ferlin,
// Caso, IEEE JSAC 2020): a contextual bandit that learns, at ECF's decision
// point, whether to wait for the fast path or send on the slow one.
//
// Decision point. f is the fastest path (lowest smoothed RTT,
// minrtt.Fastest). If f can send, the segment goes on f and the waiting
// latch is cleared. Otherwise s is the fastest path that can send
// (minrtt.Pick), and:
//   - a pending retransmission (ConnInfo.RetransmitQueued > 0) goes on s,
//     without a decision and without touching the latch;
//   - while the latch is set, the answer is WAIT (one decision per blocking
//     episode of f: after a WAIT, every call waits until f can send again);
//   - otherwise the bandit chooses between a₀ = WAIT for f and a₁ = SEND on
//     s, and a WAIT sets the latch.
//
// Context: six features, each bytes divided by the path's latest RTT sample
// (PathInfo.LatestRTT) in seconds, expressed in MB/s (10⁶ bytes per second):
//
//	x = [cwnd_f/r_f, inflight_s/r_s, SW/r_f, SW/r_s, inflight_f/r_f, cwnd_s/r_s]
//
// with cwnd = PathInfo.CongestionWindow, inflight = PathInfo.BytesInFlight +
// PathInfo.BytesQueued, and SW = ConnInfo.PeerWindow (the new data the peer's
// connection flow-control window still admits; the reference used one
// stream's window). If f or s has no RTT sample yet, x would be all zeros
// and carry nothing to learn from: the segment goes on s without a decision.
//
// Why MB/s and not bytes per second: the reference's bytes per nanosecond
// make every feature tiny, and plain bytes per second make them huge (SW/r_f
// reaches 10⁸), so that A = I + Σx·xᵀ gets a condition number beyond 10¹⁶:
// in a simulation of 10⁴ realistic updates in B/s, 9977 inversions were
// rejected as singular, while in MB/s none was and |A·A⁻¹ − I| stayed below
// 10⁻⁹ (TestConditioning keeps this). The reward r = MSS/(t_ack − t₀) uses
// the same unit so that both actions get explored: with rewards in B/s
// (~10⁴) and features in MB/s, the untried WAIT arm's bonus α·|x| (≲ 10²)
// could never beat a tried SEND arm. In MB/s rewards are ~10⁻²–1 and the
// bonus α·√(xᵀA⁻¹x) ≈ α/√n in a context tried n times dominates for the
// first hundreds of decisions. Times are in seconds and sizes in bytes before
// the scaling by 10⁻⁶.
//
// Learner: disjoint LinUCB, one model per action with A = I (6×6) and b = 0
// at the start, θ = A⁻¹·b. A⁻¹ and θ are recomputed (6×6 Gauss-Jordan on
// arrays) when A changes, not at every decision; a decision only does
// matrix-vector products and allocates nothing.
//
// Modes:
//   - Learning (default; the reference's "lowband"): p_a = θ_aᵀx +
//     α·√(xᵀA_a⁻¹x) with α = 0.75; WAIT iff p_send < p_wait (a tie sends).
//     Each decision is logged as (x, action, path, segment, MSS, t₀); the
//     first acknowledgement on the decision's path (the path of s for SEND,
//     of f for WAIT) of a segment numbered at or after ConnInfo.NextSeq at
//     decision time gives the reward r = MSS/(t_ack − t₀) in MB/s (MSS of
//     the decision's path in bytes, t in seconds), and one rank-1 update
//     A_a += x·xᵀ, b_a += r·x.
//   - Peek (the stochastic adjustment): compares θᵀx only. If θ_sendᵀx <
//     θ_waitᵀx it waits with probability 0.7, otherwise it sends with
//     probability 0.9, drawing u = Rand.IntN(100) (u < 70, u < 90). A and b
//     are not updated. The paper estimates these probabilities; the
//     reference code, and this package, fix them. Peek mode is meant to run
//     a model learned in Learning mode and imported with UnmarshalBinary;
//     with an untrained model θ = 0 and it sends 90 % of the time.
//
// The decision log is a fixed ring of LogSize records: when it is full the
// oldest pending decision is dropped unrewarded. Acknowledgements are matched
// against every pending record (not only the oldest), so one slow path does
// not hold back the rewards of the others. A record whose acknowledgement
// comes at or before its decision time is dropped without an update. Losses
// (SegmentLost) are not used: a lost decision segment is rewarded late by a
// later acknowledgement on the same path, which is the penalty.
//
// Across connections: MarshalBinary/UnmarshalBinary export and import A and
// b of both actions (the reference saves them at stream FIN and loads them at
// setup).
//
// Other choices: a backup path can be s only when no regular path can send
// (minrtt); if there is no regular, live path at all, minrtt.Pick's path
// sends. WAIT carries no RetryAt: the next acknowledgement on f re-runs
// Decide.
package peekaboo

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name.
const Name = "peekaboo"

func init() { sched.Register(Name, func() sched.Scheduler { return New(Options{}) }) }

// Alpha is LinUCB's default exploration weight α.
const Alpha = 0.75

// Peek mode's stochastic adjustment, in percent.
const (
	peekWaitPct = 70 // WAIT with probability 0.7 when θ prefers WAIT
	peekSendPct = 90 // SEND with probability 0.9 otherwise
)

// rateUnit is the unit of the features and the reward: 10⁶ bytes per second.
const rateUnit = 1e6

// LogSize is the capacity of the pending-decision ring.
const LogSize = 128

// The two actions, also the index of their model.
const (
	actWait = 0 // a₀: wait for f
	actSend = 1 // a₁: send on s
	numArms = 2
)

// Mode selects how Peekaboo decides.
type Mode uint8

const (
	// Learning is online disjoint LinUCB (the reference's "lowband").
	Learning Mode = iota
	// Peek is the stochastic adjustment on θᵀx, without learning.
	Peek
)

// String returns "learning" or "peek".
func (m Mode) String() string {
	if m == Peek {
		return "peek"
	}
	return "learning"
}

// Rand is the source of Peek mode's draws; *math/rand/v2.Rand implements it.
type Rand interface {
	// IntN returns a uniform integer in [0, n).
	IntN(n int) int
}

// Options configure a Peekaboo scheduler. The zero value is Learning mode
// with α = 0.75.
type Options struct {
	Mode  Mode    // Learning (default) or Peek
	Alpha float64 // LinUCB exploration weight; 0 means Alpha (0.75)
	// Rand draws Peek mode's u; nil means a PCG seeded with Seed. Each
	// scheduler needs its own (it is called without locking).
	Rand Rand
	Seed uint64 // seed of the default Rand
}

// record is one pending (Learning mode) decision.
type record struct {
	x    vec          // context at decision time, MB/s
	act  uint8        // actWait or actSend
	done bool         // rewarded (or dropped) but not yet removed from the ring
	path sched.PathID // path whose acknowledgement rewards the decision
	seq  uint64       // first segment that can reward it: ConnInfo.NextSeq at decision time
	mss  uint64       // MSS of that path, bytes: the reward's numerator
	t0   time.Time    // decision time
}

// Scheduler is a Peekaboo scheduler for one connection.
type Scheduler struct {
	mode    Mode
	alpha   float64
	rnd     Rand
	waiting bool            // latch: the last decision was WAIT and f has not sent since
	arms    [numArms]arm    // LinUCB model per action
	log     [LogSize]record // pending decisions, a ring
	head    int             // index of the oldest record
	n       int             // records in the ring
	dropped uint64          // records dropped because the ring was full
}

// New returns a Peekaboo scheduler.
func New(o Options) *Scheduler {
	s := &Scheduler{mode: o.Mode, alpha: o.Alpha, rnd: o.Rand}
	if s.alpha == 0 {
		s.alpha = Alpha
	}
	if s.rnd == nil {
		s.rnd = rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	}
	for k := range s.arms {
		s.arms[k].reset()
	}
	return s
}

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Mode returns the decision mode.
func (s *Scheduler) Mode() Mode { return s.mode }

// Waiting reports whether the WAIT latch is set.
func (s *Scheduler) Waiting() bool { return s.waiting }

// Pending returns the number of decisions waiting for their reward.
func (s *Scheduler) Pending() int {
	c := 0
	for i := range s.n {
		if !s.log[(s.head+i)%LogSize].done {
			c++
		}
	}
	return c
}

// Dropped returns the number of decisions dropped unrewarded because the
// ring was full.
func (s *Scheduler) Dropped() uint64 { return s.dropped }

// Decide implements sched.Scheduler.
func (s *Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	i, f := minrtt.PickAndFaster(paths)
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	if f < 0 {
		s.waiting = false
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
	}
	send := sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
	if conn.RetransmitQueued > 0 {
		return send
	}
	if s.waiting {
		return sched.Decision{Action: sched.Wait}
	}
	pf, ps := &paths[f], &paths[i]
	if pf.LatestRTT <= 0 || ps.LatestRTT <= 0 {
		return send
	}
	var x vec
	context(&x, conn, pf, ps)
	act := s.choose(&x)
	if s.mode == Learning {
		if act == actWait {
			s.push(&x, act, pf, conn)
		} else {
			s.push(&x, act, ps, conn)
		}
	}
	if act == actWait {
		s.waiting = true
		return sched.Decision{Action: sched.Wait}
	}
	return send
}

// context fills x with the six features, in MB/s.
func context(x *vec, conn *sched.ConnInfo, f, sp *sched.PathInfo) {
	// Two divisions, then products (six divisions, and two more inside
	// Duration.Seconds, were a quarter of Decide): rf, rs are 1/(RTT in s ×
	// rateUnit).
	rf, rs := 1e9/(float64(f.LatestRTT)*rateUnit), 1e9/(float64(sp.LatestRTT)*rateUnit)
	sw := float64(conn.PeerWindow)
	*x = vec{
		float64(f.CongestionWindow) * rf,
		float64(sp.BytesInFlight+sp.BytesQueued) * rs,
		sw * rf,
		sw * rs,
		float64(f.BytesInFlight+f.BytesQueued) * rf,
		float64(sp.CongestionWindow) * rs,
	}
}

// choose returns actWait or actSend for context x.
func (s *Scheduler) choose(x *vec) uint8 {
	w, sd := &s.arms[actWait], &s.arms[actSend]
	if s.mode == Peek {
		u := s.rnd.IntN(100)
		if sd.mean(x) < w.mean(x) {
			if u < peekWaitPct {
				return actWait
			}
			return actSend
		}
		if u < peekSendPct {
			return actSend
		}
		return actWait
	}
	// sd.ucb(x) < w.ucb(x), both arms' terms computed side by side.
	qs, qw := quad(&sd.inv, x), quad(&w.inv, x)
	us := sd.mean(x) + s.alpha*math.Sqrt(max(qs, 0))
	uw := w.mean(x) + s.alpha*math.Sqrt(max(qw, 0))
	if us < uw {
		return actWait
	}
	return actSend
}

// push logs a decision rewarded by the next acknowledgement on path p,
// dropping the oldest pending one if the ring is full.
func (s *Scheduler) push(x *vec, act uint8, p *sched.PathInfo, conn *sched.ConnInfo) {
	if s.n == LogSize {
		if !s.log[s.head].done {
			s.dropped++
		}
		s.head = (s.head + 1) % LogSize
		s.n--
	}
	s.log[(s.head+s.n)%LogSize] = record{x: *x, act: act, path: p.ID, seq: conn.NextSeq, mss: p.MSS, t0: conn.Now}
	s.n++
}

// SegmentAcked implements sched.Observer: every pending decision on path
// whose first segment is at or before seq gets its reward and its update.
func (s *Scheduler) SegmentAcked(now time.Time, path sched.PathID, seq uint64, _ uint64, _ time.Time) {
	for i := range s.n {
		r := &s.log[(s.head+i)%LogSize]
		if r.done || r.path != path || seq < r.seq {
			continue
		}
		r.done = true
		if dt := now.Sub(r.t0).Seconds(); dt > 0 {
			s.arms[r.act].update(&r.x, float64(r.mss)/dt/rateUnit)
		}
	}
	for s.n > 0 && s.log[s.head].done {
		s.head = (s.head + 1) % LogSize
		s.n--
	}
}

// SegmentLost implements sched.Observer; Peekaboo does not use losses.
func (*Scheduler) SegmentLost(time.Time, sched.PathID, uint64) {}

var _ sched.Observer = (*Scheduler)(nil)

var _ sched.Scheduler = (*Scheduler)(nil)
