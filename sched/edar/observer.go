package edar

import "github.com/mpqsched/mpqsched/sched"

// Observer turns the snapshots a scheduler sees once per TI into States,
// exactly as the EdAR scheduler does (same history, rates over the TI, slot
// reuse). Other per-TI schedulers use it to give a policy EdAR's state: the
// learned scheduler (sched/learned) and the training environment, so that a
// network trained there sees the features EdAR's does. The zero value is
// ready; one Observer serves one connection and is not safe for concurrent
// use.
type Observer struct{ o observer }

// Observe samples the snapshots at a TI boundary into s; prev is a_{t−1}
// (the mode of the TI that just ended). Each path's history advances by one
// row. It does not allocate.
func (o *Observer) Observe(s *State, conn *sched.ConnInfo, paths []sched.PathInfo, prev Mode) {
	o.o.observe(s, conn, paths, prev)
}

// MergeReport adds receiver report r to the running aggregate a, as EdAR
// merges the reports of one TI: counts and durations add up, ReorderBytes
// (a level, not a count) takes the latest value.
func MergeReport(a, r *sched.ReceiverReport) { mergeReport(a, r) }
