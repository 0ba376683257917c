package reproduce

// Expanding a paper's matrices into the runs of one column.

import (
	"errors"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/bench"
)

// Jobs expands p's matrices into one job list, seeds 1..seeds per
// scheduler and scenario, every run under coupling (the column's, see
// CouplingOf; the result names get the suffix "+<coupling>", which the
// report takes off again). Each Matrix expands exactly as `mpquic-bench
// run` expands the same flags (bench.Matrix), less the shortened variants
// of a DropShrunk matrix; the jobs are numbered from 0 across matrices.
func (p Paper) Jobs(seeds int, coupling string) ([]bench.Job, error) {
	var all []bench.Job
	for _, m := range p.Matrices {
		bm := bench.Matrix{Schedulers: strings.Join(m.Schedulers, ","), Scenarios: m.Scenarios, Seeds: seeds, Seed: 1,
			MaxBytes: m.MaxBytes, MaxDur: m.MaxDur, Couplings: coupling}
		jobs, err := bm.Jobs()
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if m.DropShrunk && strings.HasSuffix(j.Scenario.Name, ".short") {
				continue
			}
			j.Index = len(all)
			all = append(all, j)
		}
	}
	if len(all) == 0 {
		return nil, errors.New("no runs")
	}
	return all, nil
}
