package report

import (
	"fmt"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// FairnessRow summarises, for one scheduler on one scenario with cross
// traffic, how the session shared the network with its single-path
// competitors, over the successful runs that had competitors. Goodputs are
// over the session's run (bits/s); the figures are metrics.Fairness's.
type FairnessRow struct {
	Scenario  string // scenario name as recorded
	Scheduler string // scheduler name (with "+coupling" when the runs set one)
	Runs      int    // successful runs with cross traffic

	Session         stats.Summary   // the session's goodput, bits/s
	CompetitorNames []string        // each competitor's name, in scenario order ("competitor k" if unnamed)
	Competitors     []stats.Summary // each competitor's goodput, bits/s, in scenario order
	Ratio           stats.Summary   // session goodput / mean competitor goodput
	Share           stats.Summary   // session goodput / (session + every competitor's), fraction
	Jain            stats.Summary   // Jain's index over {session, competitors}
	PathNames       []string        // the session's paths, "path j (name)"
	PathShares      []stats.Summary // each path's share of the bytes the session sent, fraction, in path order
}

// FairnessRows builds one FairnessRow per scenario × scheduler whose
// successful runs had cross traffic, sorted by scenario then scheduler; nil
// when no run had any. The figures are recomputed from GoodputBps and
// CrossGoodputBps with metrics.NewFairness, as the runner records them, so
// that records without a fairness field report alike.
func FairnessRows(results []metrics.Result) []FairnessRow {
	keys, groups := group(results)
	var rows []FairnessRow
	for _, k := range keys {
		rs := groups[k]
		tm := timedRuns(k.scenario, rs)
		row := FairnessRow{Scenario: k.scenario, Scheduler: k.scheduler}
		var sess, ratio, share, jain []float64
		var comps, paths [][]float64
		for _, r := range rs {
			f := metrics.NewFairness(r.GoodputBps, r.CrossGoodputBps)
			if !OK(r, tm) || f == nil {
				continue
			}
			row.Runs++
			sess, share, jain = append(sess, r.GoodputBps), append(share, f.Share), append(jain, f.Jain)
			if f.CompetitorMeanBps > 0 {
				ratio = append(ratio, f.Ratio)
			}
			for i, g := range r.CrossGoodputBps {
				if i == len(comps) {
					comps = append(comps, nil)
					row.CompetitorNames = append(row.CompetitorNames, fmt.Sprintf("competitor %d", i))
				}
				comps[i] = append(comps[i], g)
				if i < len(r.CrossNames) && r.CrossNames[i] != "" {
					row.CompetitorNames[i] = r.CrossNames[i]
				}
			}
			var sent float64
			for _, b := range r.PerPathBytes {
				sent += float64(b)
			}
			for j, b := range r.PerPathBytes {
				if j == len(paths) {
					paths = append(paths, nil)
				}
				if sent > 0 {
					paths[j] = append(paths[j], float64(b)/sent)
				}
			}
		}
		if row.Runs == 0 {
			continue
		}
		row.Session, row.Ratio, row.Share, row.Jain = stats.Summarize(sess), stats.Summarize(ratio), stats.Summarize(share), stats.Summarize(jain)
		for _, c := range comps {
			row.Competitors = append(row.Competitors, stats.Summarize(c))
		}
		row.PathNames = pathNames(rs, len(paths))
		for _, p := range paths {
			row.PathShares = append(row.PathShares, stats.Summarize(p))
		}
		rows = append(rows, row)
	}
	return rows
}

// FairnessMethod is the paragraph that explains the fairness tables and the
// shares-over-time plots.
const FairnessMethod = "**Fairness.** Scenarios with cross traffic also report how the session shared the network with its single-path competitors, per scheduler over its successful runs (mean ± 95% CI): " +
	"each flow's goodput over the session's run (competitors from the start to the session's FCT, whole 100 ms intervals), " +
	"the ratio of the session's goodput to the mean competitor's (1 is an equal share; RFC 6356 §3, goal 2, asks a multipath flow to take no more than a single-path flow on its best path), " +
	"the session's share of all the flows' goodput, Jain's fairness index over the session and each competitor ((Σx)²/(n·Σx²): 1 when all are equal, 1/n at worst; Jain, Chiu, Hawe 1984), " +
	"and each path's share of the bytes the session sent (RFC 6356 §3, goal 3: traffic should move off the most congested paths). " +
	"Every competitor counts, whatever its kind (bulk, on/off, constant rate). " +
	"The shares-over-time plots show, per scheduler, the goodput of the session and of each competitor in 0.5 s intervals in its run of median goodput (FCT if not timed)."

// FairnessTable renders the rows of scenario scn as a Markdown table; ""
// when scn has none (no cross traffic), so that other reports do not
// change.
func FairnessTable(rows []FairnessRow, scn string) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Scenario != scn {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| scheduler | runs | session (Mbit/s) | competitors (Mbit/s) | session / mean competitor | session share (%) | Jain's index | session bytes per path (%) |\n")
			b.WriteString("|---|---:|---:|---|---:|---:|---:|---|\n")
		}
		comps := make([]string, len(r.Competitors))
		for i, c := range r.Competitors {
			comps[i] = mdEscape(r.CompetitorNames[i]) + " " + c.Format(1e-6, 2)
		}
		paths := make([]string, len(r.PathShares))
		for j, p := range r.PathShares {
			paths[j] = mdEscape(r.PathNames[j]) + " " + p.Format(100, 1)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", mdEscape(r.Scheduler), r.Runs,
			r.Session.Format(1e-6, 2), strings.Join(comps, "; "), r.Ratio.Format(1, 2),
			r.Share.Format(100, 1), r.Jain.Format(1, 3), strings.Join(paths, "; "))
	}
	return b.String()
}
