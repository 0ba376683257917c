package cli

import (
	"fmt"

	"github.com/mpqsched/mpqsched/pkg/model/gympolicy"
	"github.com/mpqsched/mpqsched/pkg/model/policy"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// serverPolicy sets up -scheduler learned with -policy for mpquic-server.
func serverPolicy(cfg *session.Config, name, path string, log func(string)) error {
	if name != learned.Name {
		if path != "" {
			return fmt.Errorf("-policy is for -scheduler %s, not %s", learned.Name, name)
		}
		return nil
	}
	if path == "" {
		return fmt.Errorf("-scheduler %s needs a model: -policy FILE (an ONNX policy exported by python/mpqgym)", learned.Name)
	}
	p, err := gympolicy.Load(policy.Resolve(path), log)
	if err != nil {
		return fmt.Errorf("-policy %s: %w", path, err)
	}
	log(fmt.Sprintf("learned: policy %s on %s", path, p.Backend()))
	reward := edar.RewardWithBuffer(session.DefaultRecvWindow)
	cfg.NewScheduler = func() sched.Scheduler {
		return learned.New(learned.Config{Policy: p, EdarState: p.EdarState(), Reward: reward, Log: log})
	}
	return nil
}
