package metrics

import (
	"encoding/json"
	"math"
	"testing"
)

// Hand-worked figures: a session of 10 Mbit/s against two competitors of 5
// has twice the mean competitor's goodput, half of the total, and Jain's
// index (10+5+5)² / (3·(100+25+25)) = 400/450.
func TestNewFairness(t *testing.T) {
	for _, c := range []struct {
		name    string
		session float64
		comps   []float64
		want    Fairness
	}{
		{"twice two competitors", 10e6, []float64{5e6, 5e6}, Fairness{CompetitorMeanBps: 5e6, Ratio: 2, Share: 0.5, Jain: 400.0 / 450}},
		{"equal", 8e6, []float64{8e6}, Fairness{CompetitorMeanBps: 8e6, Ratio: 1, Share: 0.5, Jain: 1}},
		// (6+12)² / (2·(36+144)) = 324/360
		{"half", 6e6, []float64{12e6}, Fairness{CompetitorMeanBps: 12e6, Ratio: 0.5, Share: 1.0 / 3, Jain: 0.9}},
		{"competitor starved", 10e6, []float64{0}, Fairness{Ratio: 0, Share: 1, Jain: 0.5}},
		{"session starved", 0, []float64{4e6, 4e6}, Fairness{CompetitorMeanBps: 4e6, Share: 0, Jain: 2.0 / 3}},
	} {
		got := NewFairness(c.session, c.comps)
		if got == nil {
			t.Errorf("%s: nil", c.name)
			continue
		}
		for _, f := range []struct {
			field     string
			got, want float64
		}{
			{"competitor mean", got.CompetitorMeanBps, c.want.CompetitorMeanBps},
			{"ratio", got.Ratio, c.want.Ratio},
			{"share", got.Share, c.want.Share},
			{"jain", got.Jain, c.want.Jain},
		} {
			if math.Abs(f.got-f.want) > 1e-9 {
				t.Errorf("%s: %s = %v, want %v", c.name, f.field, f.got, f.want)
			}
		}
		if _, err := json.Marshal(got); err != nil { // no NaN or Inf reaches results.jsonl
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// No competitors, nothing delivered, or a goodput that is not a finite
// non-negative number: no figures.
func TestNewFairnessUndefined(t *testing.T) {
	for _, c := range []struct {
		session float64
		comps   []float64
	}{
		{10e6, nil},
		{0, []float64{0, 0}},
		{math.NaN(), []float64{1}},
		{1, []float64{math.Inf(1)}},
		{1, []float64{-1}},
	} {
		if got := NewFairness(c.session, c.comps); got != nil {
			t.Errorf("NewFairness(%v, %v) = %+v, want nil", c.session, c.comps, *got)
		}
	}
}
