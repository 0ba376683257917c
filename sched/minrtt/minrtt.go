// Package minrtt is the default scheduler: the path with the lowest smoothed
// RTT that has congestion-window room takes the next segment. Backup paths are
// used only when no regular path is live (sched.OnlyBackups, Linux MPTCP's
// rule): a full regular path makes the segment wait, not go to the backup. A path with no RTT sample yet ranks
// after every path that has one, so a new path is used once the measured
// paths are full (as the kernel's default scheduler probes new subflows).
// A stream pinned to a path (sched.PinPath) sends only there while the path
// is live; a preferred path (sched.PreferPath) is used first when it has room.
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

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Decide implements sched.Scheduler. It honours the data's stream's path
// preference (sched.ConnInfo.PreferredIndex): a pinned stream's data waits
// for its path while that path is live; a preferred path takes the data
// when it can send, else minRTT picks as usual.
func (*Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if k, _ := conn.PreferredIndex(paths); k >= 0 {
		if !paths[k].SendingAllowed() {
			return sched.Decision{Action: sched.Wait} // pinned to a full path
		}
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(k)}
	}
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

// PickAndFaster returns Pick's path i and the faster path f that cannot
// send now, which the waiting schedulers (ECF, SA-ECF, Peekaboo) weigh
// waiting for; f is -1 when i is the fastest live path (or there is none),
// and both are -1 when no path can send.
func PickAndFaster(paths []sched.PathInfo) (i, f int) {
	i = Pick(paths)
	if i < 0 {
		return -1, -1
	}
	if f = Fastest(paths); f == i {
		f = -1
	}
	return i, f
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
