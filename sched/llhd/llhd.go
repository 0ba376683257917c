// Package llhd is the Low Latency and High Data rate scheduler of Lubna,
// Mahmud and Cho (llhd.txt §3, Algorithm 1).
//
// Every usable path with window room gets the utility
//
//	γ_i = GP_i/GP_max + β · RTT_max/RTT_i,   β = 0.001   (Eqs. 2–4)
//
// and the path with the highest γ takes the next segment. GP_max and RTT_max
// are the largest goodput and smoothed RTT among the usable paths of the class
// (the paper's "among all the SFs": window room is not required for them to
// count, only for being chosen). Both terms are unit-free; β = 0.001 makes the
// RTT term a tie-breaker between paths of (nearly) equal goodput unless the
// RTTs differ by orders of magnitude.
//
// Units and inputs: RTT_i is SmoothedRTT. Goodput is "Throughput − Losses"
// (Eq. 1), the rate of data that actually reaches the receiver: it is
// PathInfo.DeliveryRate, the recent acknowledged-bytes rate in bytes/s, which
// excludes lost packets because they are never acknowledged (the paper's
// Linux implementation reads the same per-path rate estimate, ref. [12]).
// Before a path has a delivery-rate sample, Eq. 1 is applied to its window
// throughput: CongestionWindow/SmoothedRTT · (1 − LossRate) bytes/s.
//
// Paths skipped (Algorithm 1's three "continue"s), read from §3:
//   - backup: PathInfo.Backup. "Backup SFs [...] are only utilized if no
//     normal SFs are available": when no normal path is usable with window
//     room, the same rule runs over the backup paths.
//   - unavailable, "no longer useable": PathInfo.PotentiallyFailed.
//   - temporarily unavailable, "the sender is unable to send because the SF is
//     now inaccessible but may become available once the connection is
//     restored": a path with PTOCount > 0, i.e. a probe timeout fired and no
//     acknowledgement has arrived since (the QUIC counterpart of a Linux
//     subflow in loss state after a retransmission timeout). The transport's
//     own probes still run on it, and the first acknowledgement makes it
//     available again.
//
// Choices where the paper is open, and slips implemented as intended:
//   - Algorithm 1 writes "γ_curr = γ_max" inside the "γ_curr > γ_max" branch.
//     Read literally γ_max stays 0 and the last path with room wins, whatever
//     its utility; the intent, stated in §3 ("the SF_i [...] which has the
//     highest value of γ" is selected), is γ_max = γ_curr. That is what Decide
//     does (see TestGammaMaxSlip).
//   - Algorithm 1 initialises RTT_max = 9999999 and GP_SF_max = 9999 and never
//     updates them; these are placeholders. Eqs. 3 and 4 define them as maxima
//     over the subflows, so Decide computes them in a first pass.
//   - The comparison stays strict (γ_curr > γ_max), so on an exact tie the
//     path listed first wins.
//   - "Upon reception of ACK": Decide recomputes γ from the current snapshot
//     every time it is called, which includes every call after an
//     acknowledgement; no state is kept between calls.
//   - A path without an RTT sample has no utility (RTT_max/RTT_i is
//     undefined); as in minrtt it is used only when no measured path of its
//     class can take the segment, so that new paths get probed.
//   - If every usable path has zero goodput, the goodput term is 0 for all and
//     the RTT term decides.
//
// Decide does not allocate.
package llhd

import "github.com/mpqsched/mpqsched/sched"

// Name is the registry name.
const Name = "llhd"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// Beta is β of Eq. 2, the weight of the normalised inverse RTT.
const Beta = 0.001

// Scheduler is the LLHD scheduler. It has no state.
type Scheduler struct{}

// New returns an LLHD scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// NeedsPerAckSignals implements sched.PerAckSignals: LLHD skips a path
// with a probe timeout pending (PTOCount > 0, see Available) and weighs a
// path without a delivery-rate sample by its recent LossRate, so the
// transport keeps its per-ACK event feed on.
func (*Scheduler) NeedsPerAckSignals() bool { return true }

// Decide implements sched.Scheduler.
func (*Scheduler) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	backup := true
	for i := range paths {
		p := &paths[i]
		if !p.Backup && Available(p) && p.SendingAllowed() {
			backup = false
			break
		}
	}
	i := pick(paths, backup)
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
}

// Available reports whether LLHD may consider the path: neither unavailable
// (potentially failed) nor temporarily unavailable (a probe timeout pending).
func Available(p *sched.PathInfo) bool { return !p.PotentiallyFailed && p.PTOCount == 0 }

// pick runs Algorithm 1 over the available paths whose Backup flag equals
// backup and returns the chosen index, or -1 to wait.
func pick(paths []sched.PathInfo, backup bool) int {
	var gpMax, rttMax float64
	probe := -1
	for i := range paths {
		p := &paths[i]
		if p.Backup != backup || !Available(p) {
			continue
		}
		if p.SmoothedRTT <= 0 {
			if probe < 0 && p.SendingAllowed() {
				probe = i
			}
			continue
		}
		gpMax = max(gpMax, Goodput(p))
		rttMax = max(rttMax, p.SmoothedRTT.Seconds())
	}
	best, gammaMax := -1, 0.0
	for i := range paths {
		p := &paths[i]
		if p.Backup != backup || !Available(p) || p.SmoothedRTT <= 0 {
			continue
		}
		g := Utility(Goodput(p), gpMax, p.SmoothedRTT.Seconds(), rttMax)
		if p.SendingAllowed() && g > gammaMax {
			gammaMax = g // Algorithm 1 prints "γ_curr = γ_max"; the intent is this.
			best = i
		}
	}
	if best < 0 {
		return probe
	}
	return best
}

// Utility is Eq. 2 with Eqs. 3–4: gp/gpMax + β·rttMax/rtt, unit-free. gp and
// gpMax share a unit (bytes/s), rtt and rttMax too (seconds); rtt must be > 0.
// The goodput term is 0 when gpMax is 0.
func Utility(gp, gpMax, rtt, rttMax float64) float64 {
	g := Beta * rttMax / rtt
	if gpMax > 0 {
		g += gp / gpMax
	}
	return g
}

// Goodput is the path's goodput in bytes/s: DeliveryRate when the transport
// has a sample, else CongestionWindow/SmoothedRTT · (1 − LossRate); 0 for a
// path with neither.
func Goodput(p *sched.PathInfo) float64 {
	if p.DeliveryRate > 0 {
		return p.DeliveryRate
	}
	if p.SmoothedRTT <= 0 {
		return 0
	}
	return float64(p.CongestionWindow) / p.SmoothedRTT.Seconds() * (1 - p.LossRate)
}

var _ sched.Scheduler = (*Scheduler)(nil)
