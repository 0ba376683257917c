// Package redundant sends every segment on every live path, each path at its
// own pace, with the semantics of the Linux MPTCP redundant scheduler.
//
// The rule: every live path with window room sends the oldest
// unacknowledged segment it has not carried yet; if it has carried every
// unacknowledged segment, it sends the next new one (a queued
// retransmission first). The scheduler asks for exactly that with one
// decision, a sched.SendCopy with Seq = sched.OldestUncarried marking every
// live path with room; the transport picks the segment per path. So the
// fastest path is never held back by a slower one: it keeps sending new
// data at its own rate, while a slower path copies the oldest data it has
// not carried, which is the data most likely to be still missing at the
// receiver. The receiver keeps the first copy of each segment and drops the
// others.
//
// An earlier version of this package sent only when every live path had
// room, and then the same segment on all of them at once (lockstep): the
// connection moved at the pace of its slowest path, 0.31 of the capacity of
// the 20 + 10 Mbit/s pair hetero-2path, below the 10 Mbit/s path alone.
//
// Choices:
//   - "Live" means not potentially failed (sched.PathInfo.PotentiallyFailed);
//     "room" means sched.PathInfo.SendingAllowed (one MSS of window left).
//   - Backup paths send only when no regular path is live, as in the Linux
//     scheduler, which uses backup subflows only when no active one exists;
//     a regular path that is merely out of window room does not open them.
//   - The transport calls Decide only while it has new or retransmission
//     data to send (sched.Scheduler), so once every segment has been sent
//     once, slower paths copy nothing more; the copies they send before
//     that are what makes the schedule redundant.
package redundant

import "github.com/mpqsched/mpqsched/sched"

// Name is the registry name.
const Name = "redundant"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// Scheduler is the redundant scheduler. It has no state.
type Scheduler struct{}

// New returns a redundant scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Decide implements sched.Scheduler: SendCopy of each path's oldest
// uncarried segment on every live path with room, or Wait if there is none.
func (*Scheduler) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	backup := !regularLive(paths)
	var set sched.PathSet
	for i := range paths {
		p := &paths[i]
		if p.Backup == backup && p.SendingAllowed() {
			set = set.Add(i)
		}
	}
	if set == 0 {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendCopy, Paths: set, Seq: sched.OldestUncarried}
}

// DecideDatagram implements sched.DatagramScheduler: a copy of the datagram
// on every live path, whatever its window room (quic-go queues a datagram
// until its path may send). Backup paths count as in Decide, only when no
// regular path is live; if no path is live at all, the datagram goes on
// sched.FastestLive's choice. The receiver delivers the first copy and
// discards the others by the datagram's sequence number.
func (*Scheduler) DecideDatagram(_ *sched.ConnInfo, paths []sched.PathInfo, _ int) sched.PathSet {
	backup := !regularLive(paths)
	var set sched.PathSet
	for i := range paths {
		if p := &paths[i]; p.Backup == backup && !p.PotentiallyFailed {
			set = set.Add(i)
		}
	}
	if set == 0 {
		return sched.FastestLive(paths)
	}
	return set
}

// regularLive reports whether some non-backup path is not potentially failed.
func regularLive(paths []sched.PathInfo) bool {
	for i := range paths {
		if !paths[i].Backup && !paths[i].PotentiallyFailed {
			return true
		}
	}
	return false
}

var (
	_ sched.Scheduler         = (*Scheduler)(nil)
	_ sched.DatagramScheduler = (*Scheduler)(nil)
)
