package metrics

import "github.com/mpqsched/mpqsched/pkg/stats"

// Fairness compares a session's goodput with that of the cross traffic that
// competed with it (Result.CrossGoodputBps), over the session's run: the
// figures of RFC 6356 §3's goals, where a fair multipath session takes no
// more than a single-path flow on its best path.
type Fairness struct {
	CompetitorMeanBps float64 `json:"competitor_mean_bps"` // mean goodput of the competitors, bits/s
	// Ratio is the session's goodput over CompetitorMeanBps: 1 is an equal
	// share, 2 twice a competitor's. 0 when the competitors got nothing
	// (the ratio is then undefined; Share is 1).
	Ratio float64 `json:"ratio"`
	Share float64 `json:"share"` // session goodput / (session + every competitor's), fraction
	// Jain is Jain's fairness index over the goodputs of the session and
	// each competitor (stats.Jain): 1 when all are equal, 1/n at worst.
	Jain float64 `json:"jain"`
}

// NewFairness returns the fairness figures of a session of goodput
// sessionBps against competitors of goodputs competitorBps (bits/s); nil
// when there are no competitors or the figures are undefined (nobody
// delivered anything, or a goodput is negative, NaN or infinite).
func NewFairness(sessionBps float64, competitorBps []float64) *Fairness {
	if len(competitorBps) == 0 {
		return nil
	}
	all := append([]float64{sessionBps}, competitorBps...)
	j := stats.Jain(all...)
	if j != j { // NaN: undefined
		return nil
	}
	var sum float64
	for _, c := range competitorBps {
		sum += c
	}
	f := &Fairness{CompetitorMeanBps: sum / float64(len(competitorBps)), Jain: j}
	f.Share = sessionBps / (sessionBps + sum)
	if f.CompetitorMeanBps > 0 {
		f.Ratio = sessionBps / f.CompetitorMeanBps
	}
	return f
}
