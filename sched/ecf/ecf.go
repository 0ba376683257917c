// Package ecf is the ECF scheduler (Earliest Completion First; Lim, Nahum,
// Towsley, Gibbens, CoNEXT 2017), in the paper's form with its hysteresis.
//
// Rule. f is the fastest path (lowest smoothed RTT, minrtt.Fastest). If f
// can send, the segment goes on f. Otherwise s is the fastest path that can
// send (minrtt.Pick), and with k the unsent data and the per-connection
// waiting bit (initially 0):
//
//	δ = max(σ_f, σ_s);   n = 1 + k/cwnd_f
//	if n·RTT_f < (1 + waiting·β)·(RTT_s + δ):
//	    if (k/cwnd_s)·RTT_s ≥ 2·RTT_f + δ:  waiting = 1; WAIT
//	    else:                               SEND on s   (waiting unchanged)
//	else:                                   waiting = 0; SEND on s
//
// with β = 0.25. The waiting bit changes only there; sending on f leaves it
// as it is, as in every reference implementation.
//
// Units and quantities in this transport:
//   - RTT_f, RTT_s are PathInfo.SmoothedRTT.
//   - σ is PathInfo.RTTVar, the RFC 9002 rttvar (quic-go's mean deviation,
//     an EWMA with gain 1/4), used as is: δ = max(RTTVar_f, RTTVar_s). This
//     is what xquic and the Go port use; the kernel's δ (half of Linux
//     rttvar_us, which is about four mean deviations floored at 200 ms) is
//     much larger.
//   - k = (ConnInfo.SendBufferBytes + ConnInfo.RetransmitQueued ·
//     ConnInfo.SegmentSize) / ConnInfo.SegmentSize, in packets: new data
//     waiting at connection level plus segments queued for re-sending.
//     (If SegmentSize is 0, the fastest path's MSS is the packet size.)
//   - cwnd_f, cwnd_s = CongestionWindow / MSS of the path, in packets.
//   - All arithmetic is float64 on nanoseconds and packets (no rounding of
//     k/cwnd, no overflow).
//
// The floor of k at cwnd. By default k is raised to cwnd_f in the first test
// and to cwnd_s in the second, as the Linux kernel, xquic and the Go port
// all do (notes, test 5). The reason: (k/cwnd_s)·RTT_s is the time s needs to
// deliver k packets, and no transfer on s takes less than one RTT_s, so the
// unfloored form underestimates s when k < cwnd_s and sends the tail of a
// short transfer on the slow path. Options.PaperK drops the floor and gives
// the paper's formula exactly.
//
// Other choices where the paper is silent:
//   - If there is no non-backup, non-failed path, or f or s has no RTT sample
//     yet, the segment goes on minrtt.Pick's path (or WAIT if none can send).
//   - Retransmissions are part of k and follow the same rule.
//   - A backup path can be s only when no regular path can send (minrtt).
//   - WAIT carries no RetryAt: the next acknowledgement on f re-runs Decide.
package ecf

import (
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name.
const Name = "ecf"

func init() { sched.Register(Name, func() sched.Scheduler { return New(Options{}) }) }

// Beta is ECF's hysteresis factor β: while waiting, the first test's bound
// grows by this fraction (kernel mptcp_ecf_r_beta = 4, i.e. 1/4).
const Beta = 0.25

// Options configure an ECF scheduler. The zero value is the default.
type Options struct {
	// PaperK uses k exactly as in the paper, without raising it to cwnd_f
	// and cwnd_s (the kernel's floor). Default false: the floor applies.
	PaperK bool
}

// Scheduler is an ECF scheduler for one connection.
type Scheduler struct {
	paperK  bool // k is not floored at cwnd
	waiting bool // ECF's waiting bit: the last slow-path decision was WAIT
}

// New returns an ECF scheduler.
func New(o Options) *Scheduler { return &Scheduler{paperK: o.PaperK} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Waiting reports ECF's waiting bit.
func (s *Scheduler) Waiting() bool { return s.waiting }

// Decide implements sched.Scheduler.
func (s *Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	i, f := minrtt.PickAndFaster(paths)
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	if f < 0 || !Testable(&paths[f], &paths[i]) {
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
	}
	if s.wait(conn, &paths[f], &paths[i]) {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
}

// wait applies ECF's two tests and updates the waiting bit.
func (s *Scheduler) wait(conn *sched.ConnInfo, f, sp *sched.PathInfo) bool {
	seg := conn.SegmentSize
	if seg == 0 {
		seg = f.MSS
	}
	k := (float64(conn.SendBufferBytes) + float64(conn.RetransmitQueued)*float64(seg)) / float64(seg)
	w, waiting := Test(k, f, sp, s.waiting, !s.paperK)
	s.waiting = waiting
	return w
}

// Testable reports whether Test can weigh f against sp: both have an RTT
// sample, an MSS and a congestion window.
func Testable(f, sp *sched.PathInfo) bool {
	return f.SmoothedRTT > 0 && sp.SmoothedRTT > 0 && f.MSS > 0 && sp.MSS > 0 &&
		f.CongestionWindow > 0 && sp.CongestionWindow > 0
}

// Test is ECF's two tests for k packets still to send, f the fastest path
// and sp the fastest path that can send, both with an RTT sample, a window
// and an MSS, given the waiting bit: it reports whether to wait for f, and
// the waiting bit after the decision (the rule in the package doc; with
// floorK, k is raised to cwnd_f in the first test and to cwnd_s in the
// second). SA-ECF (sched/streamaware) applies it per stream. It does not
// allocate.
func Test(k float64, f, sp *sched.PathInfo, waiting, floorK bool) (wait, stillWaiting bool) {
	cwndF := float64(f.CongestionWindow) / float64(f.MSS)
	cwndS := float64(sp.CongestionWindow) / float64(sp.MSS)
	rttF, rttS := float64(f.SmoothedRTT), float64(sp.SmoothedRTT)
	delta := float64(max(f.RTTVar, sp.RTTVar))

	kf, ks := k, k
	if floorK {
		kf, ks = max(k, cwndF), max(k, cwndS)
	}
	hyst := 1.0
	if waiting {
		hyst += Beta
	}
	if (1+kf/cwndF)*rttF < hyst*(rttS+delta) {
		if ks/cwndS*rttS >= 2*rttF+delta {
			return true, true
		}
		return false, waiting
	}
	return false, false
}

var _ sched.Scheduler = (*Scheduler)(nil)
