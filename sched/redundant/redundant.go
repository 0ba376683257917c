// Package redundant sends every segment on every live path.
//
// A new segment goes out only when every live, non-backup path has window
// room, and then on all of them at once, so every segment crosses every live
// path and the receiver delivers the first copy (as ReMP TCP and the Linux
// redundant scheduler intend). The price is that the connection moves at the
// pace of its slowest live path. A path the transport marks potentially failed
// stops counting as live, so a dead path cannot stall the connection. Backup
// paths join only when no regular path is live.
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

// Decide implements sched.Scheduler.
func (*Scheduler) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if set, ok := all(paths, false); ok {
		return sched.Decision{Action: sched.SendNext, Paths: set}
	}
	if set, ok := all(paths, true); ok {
		return sched.Decision{Action: sched.SendNext, Paths: set}
	}
	return sched.Decision{Action: sched.Wait}
}

// all marks every live path of the given kind. ok is false if there is no
// live path of that kind or one of them has no room.
func all(paths []sched.PathInfo, backup bool) (set sched.PathSet, ok bool) {
	for i := range paths {
		p := &paths[i]
		if p.Backup != backup || p.PotentiallyFailed {
			continue
		}
		if !p.SendingAllowed() {
			return 0, false
		}
		set = set.Add(i)
	}
	return set, set != 0
}

var _ sched.Scheduler = (*Scheduler)(nil)
