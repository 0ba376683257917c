// Package minrtt is the default scheduler: the path with the lowest smoothed
// RTT that has congestion-window room takes the next segment. Backup paths are
// used only when no regular path is live (sched.OnlyBackups, Linux MPTCP's
// rule): a full regular path makes the segment wait, not go to the backup. A path with no RTT sample yet ranks
// after every path that has one, so a new path is used once the measured
// paths are full (as the kernel's default scheduler probes new subflows).
package minrtt

import "github.com/mpqsched/mpqsched/sched"

// Name is the registry name.
const Name = "minrtt"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// Scheduler is the minRTT scheduler. It has no state.
type Scheduler struct{}

// New returns a minRTT scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Decide implements sched.Scheduler.
func (*Scheduler) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	i := Pick(paths)
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
}

// Pick returns the index of the path minRTT would send on, or -1 if no path
// can send. Other schedulers use it for their "fastest path with room" step.
func Pick(paths []sched.PathInfo) int {
	backups := sched.OnlyBackups(paths)
	best := -1
	for i := range paths {
		p := &paths[i]
		if !p.SendingAllowed() || p.Backup && !backups {
			continue
		}
		if best < 0 || Faster(p, &paths[best]) {
			best = i
		}
	}
	return best
}

// Fastest returns the index of the non-backup, non-failed path with the
// lowest smoothed RTT whether or not it has room, or -1 if there is none.
func Fastest(paths []sched.PathInfo) int {
	best := -1
	for i := range paths {
		p := &paths[i]
		if p.Backup || p.PotentiallyFailed {
			continue
		}
		if best < 0 || Faster(p, &paths[best]) {
			best = i
		}
	}
	return best
}

// Faster reports whether a ranks before b: a lower smoothed RTT, with an
// unmeasured RTT (0) ranking last and ties broken by the lower path ID.
func Faster(a, b *sched.PathInfo) bool {
	ra, rb := a.SmoothedRTT, b.SmoothedRTT
	switch {
	case ra == 0 && rb == 0:
		return a.ID < b.ID
	case ra == 0:
		return false
	case rb == 0:
		return true
	case ra != rb:
		return ra < rb
	}
	return a.ID < b.ID
}

var _ sched.Scheduler = (*Scheduler)(nil)
