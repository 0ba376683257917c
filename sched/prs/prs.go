// Package prs is PRS-MPTCP, the Practical and Robust Scheduler of Khajekini,
// Amca, Ulusoy and Ever (prs-mptcp.txt §4, Fig. 12 and Fig. 13).
//
// The paper compares the fast subflow S_f (smallest RTT) with the slow one S_s
// and distinguishes four window conditions ("there is free space in the
// congestion window if inflight_i < cwnd_i"):
//
//  1. neither path has space: wait;
//  2. both have space: send on the path with the higher
//     performance_i = space_i / (rtt_i · max(1, retrans_i))   (Eq. 1);
//  3. only S_f has space: send on S_f if retrans_rate_f < retrans_rate_s,
//     where retrans_rate_i = retrans_i / total_transmitted_i (Eq. 2), else wait;
//  4. only S_s has space: send on S_s if rtt_s/2 ≤ 2·rtt_f, else wait.
//
// Units and inputs: space_i is PathInfo.Space() in bytes ("free space" means
// SendingAllowed: room for one MSS on a path that is not potentially failed);
// rtt_i is SmoothedRTT in seconds; so performance_i is in bytes per second,
// divided by a retransmission count. retrans_i is PathInfo.PacketsLost and
// total_transmitted_i is PacketsSent, both cumulative since the path opened
// (Eq. 2 divides totals, not a recent window, so LossRate is not used). The
// paper works on Linux subflows, where a subflow retransmits exactly what it
// lost, so its retransmission count measures the subflow's own losses. In
// multipath QUIC lost data may be re-sent on any path, so PacketsRetransmitted
// says where the scheduler put repairs, not how lossy a path is; the number of
// packets the path lost (and so caused to be retransmitted) is the faithful
// equivalent. Condition 4 is evaluated as rtt_s ≤ 4·rtt_f, which is the same
// inequality without rounding a halved duration.
//
// Choices where the paper is open, and slips implemented as intended:
//
//   - Ties in condition 2 (performance_f = performance_s): Fig. 13 tests only
//     the two strict inequalities (lines 19 and 23) and then falls through
//     without returning a subflow, which would stall a connection whose paths
//     are identical. A tie goes to the faster path (lower smoothed RTT, then
//     lower path ID), as the default scheduler the paper inherits from would
//     do.
//   - Ties in condition 3: read literally (line 31, "<"), a connection with no
//     retransmissions on either path (both rates 0) would refuse its free fast
//     path whenever the slow one is full, even though the fast path is then
//     better on every metric. The comparison is done as rate_f ≤ rate_s: the
//     scheduler waits only when the fast path really retransmits more.
//   - A path that has sent nothing has a retransmission rate of 0 (Eq. 2 is
//     undefined there).
//   - Line 1, "only the fastest subflow is available": with a single usable
//     path the rules reduce to "send on it if it has space, else wait".
//   - The extraction of Fig. 13 lost the division signs (lines 16, 18, 29, 30,
//     41); Eq. 1, Eq. 2 and §4's text give them back.
//
// N paths (the paper handles two and leaves more to future work): S_f is the
// usable path with the lowest smoothed RTT, whether or not it has space, and
// every other usable path plays S_s against it, pairwise:
//
//  1. no usable path has space: wait;
//  2. S_f and at least one other path have space: the path with the highest
//     performance_i among all paths with space (ties to the faster path);
//  3. only S_f has space: send on S_f if rate_f ≤ rate_s for every other
//     usable path S_s (each full path that is more reliable than S_f would,
//     as a pair, make PRS wait for it), else wait;
//  4. S_f is full: the paths with space that pass rtt_s ≤ 4·rtt_f against S_f
//     compete on performance_i; if none passes, wait.
//
// With two paths this is exactly the paper's rule (apart from the two tie
// choices above; TestTwoPathsIsFig13 checks it against a line-by-line
// transcription of Fig. 13).
//
// What the paper's rule does with a small receive window (measured in
// docs/prs-n-paths.md): on three paths (40 Mbit/s at 20 ms RTT; 15 Mbit/s at
// 80 ms; 80 Mbit/s at 50 ms with 0.2% loss; testdata/prs-3path-256k.json)
// and a 256 KB window, PRS put 60–90% of its bytes on the 80 ms path and
// reached 15–21 Mbit/s (one run: 34, its fast path's burst below being 9
// losses), against 39–43 for minRTT. The cause is Eq. 1, not
// the generalisation: the first two paths alone, where this package is
// Fig. 13, and a literal transcription of Fig. 13 starve the fast path the
// same way (15–24 Mbit/s, 57–93% on the slow path). retrans_i counts since
// the subflow opened (Table 3 defines it next to total_transmitted_i, Eq. 2's
// denominator), so the fast path's one burst of 9–22 losses, when slow start
// overflowed its queue in the first 0.25 s, divides its performance by that
// number for the rest of the transfer, while the slow path, whose BDP plus
// queue exceeds the 256 KB window, never loses a packet. With every count
// read as 0 the same rule reaches 33–41 Mbit/s. The package keeps the
// paper's rule.
//
// Usable paths: not potentially failed and with an RTT sample. Backup paths
// take part only when no non-backup path has space (PathInfo.Backup); the same
// rule then runs over the backup paths. A path without an RTT sample cannot
// be ranked (Eq. 1 divides by its RTT); as in minrtt it is used only when no
// measured path of its class has space, so that new paths get probed.
//
// PRS keeps no state; Decide does not allocate.
package prs

import (
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name.
const Name = "prs"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// slowRTTFactor is the bound of condition 4: rtt_s/2 ≤ 2·rtt_f, i.e.
// rtt_s ≤ 4·rtt_f.
const slowRTTFactor = 4

// Scheduler is the PRS-MPTCP scheduler. It has no state.
type Scheduler struct{}

// New returns a PRS-MPTCP scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Decide implements sched.Scheduler.
func (*Scheduler) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	backup := sched.OnlyBackups(paths)
	i := pick(paths, backup)
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
}

// pick applies the four conditions to the usable paths whose Backup flag
// equals backup and returns the chosen index, or -1 to wait.
func pick(paths []sched.PathInfo, backup bool) int {
	fast, probe := -1, -1
	for i := range paths {
		p := &paths[i]
		if p.Backup != backup || p.PotentiallyFailed {
			continue
		}
		if p.SmoothedRTT <= 0 {
			if probe < 0 && p.SendingAllowed() {
				probe = i
			}
			continue
		}
		if fast < 0 || minrtt.Faster(p, &paths[fast]) {
			fast = i
		}
	}
	if fast < 0 {
		return probe
	}
	f := &paths[fast]
	best := -1 // slow path with space and the highest performance, -1 if none
	for i := range paths {
		p := &paths[i]
		if i == fast || p.Backup != backup || p.SmoothedRTT <= 0 || !p.SendingAllowed() {
			continue
		}
		if !f.SendingAllowed() && p.SmoothedRTT > slowRTTFactor*f.SmoothedRTT {
			continue // condition 4 fails for this pair
		}
		if best < 0 || better(p, &paths[best]) {
			best = i
		}
	}
	switch {
	case f.SendingAllowed() && best >= 0: // condition 2
		if better(&paths[best], f) {
			return best
		}
		return fast
	case f.SendingAllowed(): // condition 3
		rf := RetransRate(f)
		for i := range paths {
			p := &paths[i]
			if i != fast && p.Backup == backup && !p.PotentiallyFailed && p.SmoothedRTT > 0 && rf > RetransRate(p) {
				return -1
			}
		}
		return fast
	case best >= 0: // condition 4
		return best
	}
	// Condition 1 for the measured paths; probe an unmeasured one if any.
	if anySpace(paths, backup) {
		return -1
	}
	return probe
}

// anySpace reports whether a measured usable path of the class has space.
func anySpace(paths []sched.PathInfo, backup bool) bool {
	for i := range paths {
		p := &paths[i]
		if p.Backup == backup && p.SmoothedRTT > 0 && p.SendingAllowed() {
			return true
		}
	}
	return false
}

// better reports whether a ranks before b on Eq. 1, ties going to the faster
// path.
func better(a, b *sched.PathInfo) bool {
	pa, pb := Performance(a), Performance(b)
	if pa != pb {
		return pa > pb
	}
	return minrtt.Faster(a, b)
}

// Performance is Eq. 1, space_i / (rtt_i · max(1, retrans_i)), in bytes per
// second per retransmission: Space() in bytes, SmoothedRTT in seconds,
// retrans_i = PacketsLost. It is 0 for a path without an RTT sample.
func Performance(p *sched.PathInfo) float64 {
	if p.SmoothedRTT <= 0 {
		return 0
	}
	retrans := p.PacketsLost
	if retrans < 1 {
		retrans = 1
	}
	return float64(p.Space()) / (p.SmoothedRTT.Seconds() * float64(retrans))
}

// RetransRate is Eq. 2, retrans_i / total_transmitted_i = PacketsLost /
// PacketsSent, a fraction; 0 for a path that has sent nothing.
func RetransRate(p *sched.PathInfo) float64 {
	if p.PacketsSent == 0 {
		return 0
	}
	return float64(p.PacketsLost) / float64(p.PacketsSent)
}

var _ sched.Scheduler = (*Scheduler)(nil)
