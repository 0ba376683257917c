// Package lowestloss is the scheduler of the README's "Writing your own
// scheduler", as written there: each segment goes on the path with room and
// the lowest loss rate.
package lowestloss

import "github.com/mpqsched/mpqsched/sched"

// Name is the scheduler's name in the registry.
const Name = "lowestloss"

func init() { sched.Register(Name, func() sched.Scheduler { return &Scheduler{} }) }

// Scheduler sends each segment on the path with room and the lowest loss rate.
type Scheduler struct{}

// Name returns Name.
func (*Scheduler) Name() string { return Name }

// Decide marks the path with room and the lowest loss rate, or waits. A
// backup path is used only when no regular path is live, as every built-in
// scheduler does (sched.OnlyBackups).
func (*Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	backups := sched.OnlyBackups(paths)
	best := -1
	for i := range paths {
		if paths[i].Backup != backups || !paths[i].SendingAllowed() {
			continue
		}
		if best < 0 || paths[i].LossRate < paths[best].LossRate {
			best = i
		}
	}
	if best < 0 {
		return sched.Decision{Action: sched.Wait} // asked again on the next ack, loss or new data
	}
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(best)}
}
