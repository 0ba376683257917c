package modelrun

import (
	"fmt"
	"sync"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/model/gympolicy"
	"github.com/mpqsched/mpqsched/pkg/model/policy"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/learned"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// The learned scheduler (sched/learned) with a policy trained in the
// environment (python/mpqgym) and exported to ONNX: `-schedulers learned
// -policy FILE`. The model runs on onnxruntime or the pure-Go interpreter
// (pkg/model/gympolicy). As for EdAR, an unusable model refuses the matrix,
// or, with -edar-fallback, runs minRTT under the name
// "learned-minrtt-fallback". "all" includes learned only with -policy.

// learnedPolicies caches the loaded policies of this process, by file.
var learnedPolicies struct {
	mu sync.Mutex
	m  map[string]learnedEntry
}

type learnedEntry struct {
	p   *gympolicy.Policy
	err error
}

// loadLearned opens the policy of path once per process; first reports
// that this call opened it.
func loadLearned(path string) (p *gympolicy.Policy, first bool, err error) {
	learnedPolicies.mu.Lock()
	defer learnedPolicies.mu.Unlock()
	if e, ok := learnedPolicies.m[path]; ok {
		return e.p, false, e.err
	}
	if path == "" {
		err = fmt.Errorf("%s needs a model: -policy FILE (an ONNX policy exported by python/mpqgym)", learned.Name)
	} else {
		p, err = gympolicy.Load(policy.Resolve(path), benchLog)
	}
	if learnedPolicies.m == nil {
		learnedPolicies.m = map[string]learnedEntry{}
	}
	learnedPolicies.m[path] = learnedEntry{p, err}
	return p, true, err
}

// configureLearned makes r a run of the learned scheduler with the job's
// policy on the data sender (the client, which only sends the request,
// runs minRTT).
func configureLearned(r *bench.Run, j Spec) error {
	p, first, err := loadLearned(j.Policy)
	if err != nil {
		return edarFallback(r, j, j.Policy, err, first)
	}
	if first {
		benchLog(fmt.Sprintf("learned: policy %s on %s", j.Policy, p.Backend()))
	}
	reward := edar.RewardWithBuffer(uint64(r.RecvWindow))
	if r.RecvWindow == 0 {
		reward = edar.RewardWithBuffer(session.DefaultRecvWindow)
	}
	r.NewScheduler = func() sched.Scheduler { return minrtt.New() }
	r.NewServerScheduler = func() sched.Scheduler {
		return learned.New(learned.Config{Policy: p, EdarState: p.EdarState(), Reward: reward, Log: benchLog})
	}
	return nil
}

// CheckPolicy refuses, before any run, a matrix (runs) with learned runs
// whose policy cannot be used, unless they allow the fallback
// (-edar-fallback). It reports the policy used through logf.
func CheckPolicy(runs []Spec, logf func(string)) error {
	for _, j := range runs {
		if j.Scheduler != learned.Name {
			continue
		}
		_, _, err := loadLearned(j.Policy)
		switch {
		case err == nil:
			logf("learned policy " + j.Policy)
		case j.Fallback:
			logf(fmt.Sprintf("no usable policy (%v): learned runs minRTT, recorded as learned-minrtt-fallback (-edar-fallback)", err))
		default:
			return fmt.Errorf("%v; or give -edar-fallback to run it as minRTT under the name learned-minrtt-fallback", err)
		}
		return nil
	}
	return nil
}
