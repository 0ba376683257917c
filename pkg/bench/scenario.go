package bench

import (
	"fmt"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// FromScenario makes the Run of scheduler schedName on scenario s with seed:
// s is resolved for the seed (parameters drawn within its ranges), its links
// converted to the emulator's, and its capacity and limits carried over. s
// must not be a sweep family (see scenario.Expand).
func FromScenario(s scenario.Scenario, schedName string, seed int64) (Run, error) {
	if s.Sweep != nil {
		return Run{}, fmt.Errorf("bench: scenario %s is a sweep; expand it first", s.Name)
	}
	rs, err := s.Resolve(seed)
	if err != nil {
		return Run{}, err
	}
	paths, backup, err := rs.EmuPaths()
	if err != nil {
		return Run{}, err
	}
	r := Run{
		Scheduler:   schedName,
		Scenario:    s.Name,
		Seed:        seed,
		Paths:       paths,
		Backup:      backup,
		Bytes:       rs.Bytes,
		RecvWindow:  int(rs.ReceiveBuffer),
		CapacityBps: rs.CapacityBps(),
		Timeout:     rs.Duration.D() + 30*time.Second,
		Spec:        &rs,
		Workload:    rs.Workload,
	}
	if rs.Timed {
		r.Timed = rs.Duration.D()
	}
	if rs.Coupling != "" {
		r.SessionConfig = &session.Config{Coupling: rs.Coupling}
	}
	return r, nil
}
