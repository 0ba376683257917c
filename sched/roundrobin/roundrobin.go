// Package roundrobin sends each segment on the next path, in path order, that
// has congestion-window room. Backup paths are used only when no other path
// can send.
package roundrobin

import "github.com/mpqsched/mpqsched/sched"

// Name is the registry name.
const Name = "roundrobin"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// Scheduler is the round-robin scheduler.
type Scheduler struct {
	last sched.PathID // ID of the path that took the previous segment
}

// New returns a round-robin scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Decide implements sched.Scheduler: the first path after the previous one
// (by ID, wrapping) that can send; backups only if no regular path can.
func (s *Scheduler) Decide(_ *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	i := s.next(paths, false)
	if i < 0 {
		i = s.next(paths, true)
	}
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	s.last = paths[i].ID
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
}

// next finds the sendable path (backup or not) whose ID follows s.last most
// closely, wrapping around to the lowest ID.
func (s *Scheduler) next(paths []sched.PathInfo, backup bool) int {
	after, lowest := -1, -1
	for i := range paths {
		p := &paths[i]
		if p.Backup != backup || !p.SendingAllowed() {
			continue
		}
		if p.ID > s.last && (after < 0 || p.ID < paths[after].ID) {
			after = i
		}
		if lowest < 0 || p.ID < paths[lowest].ID {
			lowest = i
		}
	}
	if after >= 0 {
		return after
	}
	return lowest
}

var _ sched.Scheduler = (*Scheduler)(nil)
