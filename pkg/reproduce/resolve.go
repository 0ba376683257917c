package reproduce

// From a claims file's claims to the claims the report judges (claim):
// registered schedulers, and each metric's measurement (metric).

import (
	"fmt"
	"math"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/sched"
)

// metric is one measured quantity a claim is about.
type metric struct {
	name        string  // column heading
	unit        string  // display unit
	scale       float64 // display = value · scale
	prec        int     // display decimals
	lowerBetter bool
	value       func(metrics.Result) float64
	// floor: if the baseline's overall mean is below it, there is nothing to
	// improve on and the verdict is n/a (0 = no floor).
	floor float64
}

var (
	mOOO = metric{name: "out-of-order segments", unit: "", scale: 1, prec: 0, lowerBetter: true,
		value: func(r metrics.Result) float64 { return float64(r.OOOSegments) }}
	mFCT = metric{name: "FCT", unit: " s", scale: 1, prec: 3, lowerBetter: true,
		value: func(r metrics.Result) float64 { return r.FCTSeconds }}
	mGoodput = metric{name: "goodput", unit: " Mbit/s", scale: 1e-6, prec: 2,
		value: func(r metrics.Result) float64 { return r.GoodputBps }}
	mHoL = metric{name: "HoL-blocked time", unit: " s", scale: 1, prec: 3, lowerBetter: true,
		value: func(r metrics.Result) float64 { return r.HoLBlockedSec }}
	mResent = metric{name: "re-sent bytes", unit: " KB", scale: 1.0 / 1024, prec: 1, lowerBetter: true,
		value: func(r metrics.Result) float64 { return float64(r.RedundantBytes) }, floor: report.AssumedSegmentBytes}
)

// claim is one statement of a paper, checked against our data.
type claim struct {
	paper     string    // key of the Paper whose section shows the details
	id        string    // file-name-safe identifier
	source    string    // who claims it
	text      string    // the claim, as stated
	sched     string    // the scheduler the claim is about
	baselines []string  // what it is compared with
	claimed   []float64 // per baseline, the claimed relative change (−0.38 = 38% less); NaN: only the direction is claimed
	metric    metric
	match     func(name string) bool // the scenarios (recorded names) the claim is judged on
	scope     string                 // which scenarios, and whether they are the paper's own
	own       bool                   // the scenarios are the paper's own experiments
}

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
