// Package blest is the BLEST scheduler (BLocking ESTimation; Ferlin, Alay,
// Mehani, Boreli, IFIP Networking 2016), in the paper's closed form.
//
// Rule. f is the fastest path (lowest smoothed RTT, minrtt.Fastest). If f
// can send, the segment goes on f. Otherwise s is the fastest path that can
// send (minrtt.Pick) and BLEST estimates how many bytes f could send while
// one segment sent now on s is in flight:
//
//	rtts = RTT_s / RTT_f
//	X    = MSS_f · (cwnd_f + (rtts − 1)/2) · rtts
//
// (cwnd_f in packets, growing by one MSS per RTT_f) and
//
//	WAIT  iff  λ·X > SW − MSS_s·(inflight_s + 1),  otherwise SEND on s.
//
// Units and quantities in this transport:
//   - RTT_f, RTT_s are PathInfo.SmoothedRTT; only their ratio is used.
//   - cwnd_f = CongestionWindow_f / MSS_f, in packets (a real number, not
//     rounded).
//   - MSS_s·(inflight_s + 1) = BytesInFlight_s + BytesQueued_s + MSS_s: the
//     bytes s already holds plus the segment about to be sent, in bytes.
//   - SW is the connection send window counted, as MPTCP's snd_wnd, from
//     the oldest unacknowledged byte: SW = ConnInfo.PeerWindow (new data the
//     peer's flow-control window still admits) + ConnInfo.InFlightBytes
//     (connection-level bytes sent and not yet acknowledged), in bytes.
//   - All arithmetic is float64, so neither the product nor the
//     subtraction can overflow or wrap (the right side may go negative,
//     which means WAIT, as the kernel's floor at 0 does).
//
// λ adaptation (from the kernel module): λ starts at 1.2 and is kept in
// thousandths, so the steps are exact. When the slow-path check runs and at
// least MinRTT_s (SmoothedRTT_s if no minimum yet) has passed since the last
// update, λ moves by +0.04 if a bad event was seen since that update and by
// −0.01 otherwise, then is clamped to [1.0, 1.3] and the bad flag cleared.
// The first slow-path check only starts that clock; it does not move λ.
//
// The bad event. The kernel's signal is its opportunistic retransmission
// running while the connection window blocks (head-of-line blocking at the
// receiver). Here it is: Observer.SegmentLost (the transport is about to
// re-send a segment, lost or reinjected) arriving while the connection is
// window-limited, that is while the last Decide saw ConnInfo.PeerWindow
// smaller than one segment (ConnInfo.SegmentSize, or the fastest path's MSS
// if that is 0).
//
// Other choices where the paper is silent:
//   - If there is no non-backup, non-failed path, or f or s has no RTT sample
//     yet, there is nothing to estimate with: the segment goes on
//     minrtt.Pick's path (or WAIT if no path can send).
//   - Retransmissions are treated like new data (the rule decides).
//   - A backup path can be s only when no regular path can send (as in
//     minrtt); the rule then still decides whether waiting for f is better.
//   - WAIT carries no RetryAt: the next acknowledgement on f re-runs Decide.
package blest

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name.
const Name = "blest"

func init() { sched.Register(Name, func() sched.Scheduler { return New(Options{}) }) }

// λ bounds and steps, in thousandths (the kernel's ×1000 fixed point).
const (
	lambdaInit = 1200 // initial λ = 1.2
	lambdaMin  = 1000 // λ never goes below 1.0
	lambdaMax  = 1300 // λ never goes above 1.3
	lambdaBad  = 40   // +0.04 after a bad event
	lambdaGood = 10   // −0.01 otherwise
)

// Options configure a BLEST scheduler. The zero value gives the paper's and
// the kernel's defaults.
type Options struct {
	// Lambda is the initial λ, rounded to thousandths and clamped to
	// [1.0, 1.3]; 0 means 1.2.
	Lambda float64
	// FixedLambda disables λ adaptation.
	FixedLambda bool
}

// Scheduler is a BLEST scheduler for one connection.
type Scheduler struct {
	lambda        int       // λ in thousandths, in [lambdaMin, lambdaMax]
	fixed         bool      // λ adaptation disabled
	bad           bool      // a bad event was seen since the last λ update
	windowLimited bool      // the last Decide saw the peer window below one segment
	lastUpdate    time.Time // time of the last λ update; zero before the first slow-path check
}

// New returns a BLEST scheduler.
func New(o Options) *Scheduler {
	l := lambdaInit
	if o.Lambda != 0 {
		l = int(o.Lambda*1000 + 0.5)
		l = min(max(l, lambdaMin), lambdaMax)
	}
	return &Scheduler{lambda: l, fixed: o.FixedLambda}
}

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Lambda returns the current λ.
func (s *Scheduler) Lambda() float64 { return float64(s.lambda) / 1000 }

// Decide implements sched.Scheduler.
func (s *Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	f := minrtt.Fastest(paths)
	seg := conn.SegmentSize
	if seg == 0 && f >= 0 {
		seg = paths[f].MSS
	}
	s.windowLimited = conn.PeerWindow < seg
	i := minrtt.Pick(paths)
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	if f < 0 || i == f {
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
	}
	pf, ps := &paths[f], &paths[i]
	if pf.SmoothedRTT <= 0 || ps.SmoothedRTT <= 0 || pf.MSS == 0 {
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
	}
	s.updateLambda(conn.Now, ps)
	if s.wait(conn, pf, ps) {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
}

// wait evaluates the paper's inequality λ·X > SW − MSS_s·(inflight_s + 1).
func (s *Scheduler) wait(conn *sched.ConnInfo, f, sp *sched.PathInfo) bool {
	rtts := float64(sp.SmoothedRTT) / float64(f.SmoothedRTT)
	mssF := float64(f.MSS)
	cwndF := float64(f.CongestionWindow) / mssF
	x := mssF * (cwndF + (rtts-1)/2) * rtts
	sw := float64(conn.PeerWindow) + float64(conn.InFlightBytes)
	rhs := sw - float64(sp.BytesInFlight+sp.BytesQueued+sp.MSS)
	return float64(s.lambda)*x/1000 > rhs // λ·X with λ in thousandths
}

// updateLambda applies one λ step if at least MinRTT_s has passed since the
// previous one.
func (s *Scheduler) updateLambda(now time.Time, sp *sched.PathInfo) {
	if s.fixed {
		return
	}
	if s.lastUpdate.IsZero() {
		s.lastUpdate = now
		return
	}
	period := sp.MinRTT
	if period <= 0 {
		period = sp.SmoothedRTT
	}
	if now.Sub(s.lastUpdate) < period {
		return
	}
	if s.bad {
		s.lambda += lambdaBad
	} else {
		s.lambda -= lambdaGood
	}
	s.lambda = min(max(s.lambda, lambdaMin), lambdaMax)
	s.bad = false
	s.lastUpdate = now
}

// SegmentAcked implements sched.Observer; BLEST learns nothing from acks.
func (*Scheduler) SegmentAcked(time.Time, sched.PathID, uint64, uint64, time.Time) {}

// SegmentLost implements sched.Observer: a re-send while the connection is
// window-limited is BLEST's bad event.
func (s *Scheduler) SegmentLost(_ time.Time, _ sched.PathID, _ uint64) {
	if s.windowLimited {
		s.bad = true
	}
}

var _ sched.Observer = (*Scheduler)(nil)

var _ sched.Scheduler = (*Scheduler)(nil)
