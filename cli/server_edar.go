package cli

import (
	"errors"
	"fmt"

	"github.com/mpqsched/mpqsched/pkg/model/policy"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
)

// serverScheduler checks -scheduler and -edar-model and sets up cfg's
// scheduler. EdAR needs a model: -scheduler edar runs the greedy policy of
// the model (EdAR-p, as mpquic-bench runs it), loaded once through
// pkg/model/policy (onnxruntime, or the pure-Go backend with a log line)
// and shared by every session. Without -edar-model, edar is refused
// instead of running policy-less. edar-o learns online with mpquic-bench's
// trainer and has no server form. log receives the model's lines.
func serverScheduler(cfg *session.Config, name, model string, log func(string)) error {
	if _, err := sched.New(name); err != nil {
		return err
	}
	switch name {
	case edar.Name:
	case edar.NameOnline:
		return fmt.Errorf("-scheduler %s learns online with mpquic-bench's trainer; the server runs EdAR's offline policy: -scheduler %s -edar-model FILE", edar.NameOnline, edar.Name)
	default:
		if model != "" {
			return fmt.Errorf("-edar-model is for -scheduler %s, not %s", edar.Name, name)
		}
		return nil
	}
	if model == "" {
		return errors.New("-scheduler edar needs a model: -edar-model FILE; the repository ships one at " + policy.DefaultModel + " (`make train` rebuilds it)")
	}
	path := policy.Resolve(model)
	p, backend, err := policy.Open(path, policy.Options{Log: log})
	if err != nil {
		return fmt.Errorf("-edar-model %s: %w", model, err)
	}
	log(fmt.Sprintf("edar: EdAR-p model %s on %s", path, backend))
	// The server sends the data; the reward's buffer term assumes the
	// clients' default receive window.
	reward := edar.RewardWithBuffer(session.DefaultRecvWindow)
	cfg.NewScheduler = func() sched.Scheduler {
		return edar.New(edar.Config{Policy: p, Reward: reward, Log: log})
	}
	return nil
}
