package reproduce

// From a claims file's claims to the claims the report judges: registered
// schedulers, and each metric's measurement.

import (
	"fmt"
	"math"

	"github.com/mpqsched/mpqsched/sched"
)

// metricByName maps a claims file's metric names (Metrics) to
// how reproduce measures and prints them.
var metricByName = map[string]metric{"ooo": mOOO, "fct": mFCT, "goodput": mGoodput, "hol": mHoL, "resent": mResent}

// Registered reports the first scheduler name of cs that is not
// registered (sched.New refuses it), naming the claim and the field:
// "claims[2] (id).baselines[1]: ...". The report refuses such claims.
func Registered(cs []Claim) error {
	_, err := claimsFrom(cs)
	return err
}

// claimsFrom turns claims read from a file into the claims the report
// judges, refusing scheduler names that are not registered (errors name
// the claim and the field).
func claimsFrom(in []Claim) ([]claim, error) {
	out := make([]claim, 0, len(in))
	for i, c := range in {
		if _, err := sched.New(c.Scheduler); err != nil {
			return nil, fmt.Errorf("claims[%d] (%s).scheduler: %v", i, c.ID, err)
		}
		for k, b := range c.Baselines {
			if _, err := sched.New(b); err != nil {
				return nil, fmt.Errorf("claims[%d] (%s).baselines[%d]: %v", i, c.ID, k, err)
			}
		}
		claimed := make([]float64, len(c.Baselines))
		for k := range claimed {
			claimed[k] = math.NaN()
			if v, ok := c.ClaimedChange(k); ok {
				claimed[k] = v
			}
		}
		out = append(out, claim{paper: c.Paper, id: c.ID, source: c.Source, text: c.Text, sched: c.Scheduler,
			baselines: c.Baselines, claimed: claimed, metric: metricByName[c.Metric], match: c.Match, scope: c.Scope, own: c.Own})
	}
	return out, nil
}
