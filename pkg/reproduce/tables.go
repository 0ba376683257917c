package reproduce

// The report's tables: the scenarios as run, the failed runs and each
// claim's per-scenario comparison; and the cell formats they share.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// shrinkRow describes how one scenario was run against its library form.
type shrinkRow struct {
	name, orig            string
	origBytes, bytes      int64
	origDur, dur          scenario.Duration
	factor                float64
	timed                 bool
	schedulers, seedCount int
}

// shrinks lists the scenarios of runs with their shrink factors.
func shrinks(jobs []bench.Job) []shrinkRow {
	seen := map[string]*shrinkRow{}
	var order []string
	scheds := map[string]map[string]bool{}
	seeds := map[string]map[int64]bool{}
	for _, j := range jobs {
		n := j.Scenario.Name
		if scheds[n] == nil {
			scheds[n], seeds[n] = map[string]bool{}, map[int64]bool{}
		}
		scheds[n][j.Scheduler], seeds[n][j.Seed] = true, true
		if seen[n] != nil {
			continue
		}
		orig := strings.TrimSuffix(n, ".short")
		row := &shrinkRow{name: n, orig: orig, bytes: j.Scenario.Bytes, dur: j.Scenario.Duration, factor: 1, timed: j.Scenario.Timed}
		if s, err := scenario.Lookup(orig); err == nil {
			row.origBytes, row.origDur = s.Bytes, s.Duration
			if s.Duration > 0 {
				row.factor = float64(j.Scenario.Duration) / float64(s.Duration)
			}
		}
		seen[n] = row
		order = append(order, n)
	}
	var out []shrinkRow
	for _, n := range order {
		r := seen[n]
		r.schedulers, r.seedCount = len(scheds[n]), len(seeds[n])
		out = append(out, *r)
	}
	return out
}

// failedRuns is the failed-runs section for both columns.
func failedRuns(plan []Paper, cols []*column) string {
	type failure struct {
		coupling string
		r        metrics.Result
	}
	var fails []failure
	for _, c := range cols {
		for _, p := range plan {
			for _, r := range c.results[p.Key] {
				if r.Error != "" || !r.SHA256OK {
					fails = append(fails, failure{p.CouplingOf(c.key), r})
				}
			}
		}
	}
	var b strings.Builder
	if len(fails) == 0 {
		b.WriteString("None: every run, in both columns, finished without error and its data matched the sender's SHA-256.\n\n")
		return b.String()
	}
	b.WriteString("A failed run (an error, or a SHA-256 mismatch) is left out of the means and counted in the tables' \"runs (failed)\" column. Each is a transport or scheduler bug to investigate.\n\n")
	kinds := map[string][2]int{} // error → runs, runs whose data verified
	var order []string
	for _, f := range fails {
		k, ok := kinds[f.r.Error]
		if !ok {
			order = append(order, f.r.Error)
		}
		k[0]++
		if f.r.SHA256OK {
			k[1]++
		}
		kinds[f.r.Error] = k
	}
	for _, e := range order {
		k := kinds[e]
		fmt.Fprintf(&b, "* %d run(s): `%s`; the received data matched the sender's SHA-256 in %d of them", k[0], reproMdCell(e), k[1])
		if k[1] == k[0] && e != "" {
			b.WriteString(", so the download itself completed and the error came after it (FCT and the other metrics of these runs are in results.jsonl, but the runs are not counted)")
		}
		b.WriteString(".\n")
	}
	b.WriteString("\n| coupling | scheduler | scenario | seed | SHA-256 ok | error |\n|---|---|---|---:|---|---|\n")
	for _, f := range fails {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %v | %s |\n", f.coupling, f.r.Scheduler, f.r.Scenario, f.r.Seed, f.r.SHA256OK, reproMdCell(f.r.Error))
	}
	b.WriteString("\n")
	return b.String()
}

// reproFmtBytes is scenario.FormatBytes for exact sizes, else MB with one decimal.
func reproFmtBytes(n int64) string {
	if n < scenario.MB || n%scenario.KB == 0 {
		return scenario.FormatBytes(n)
	}
	return fmt.Sprintf("%.1fMB", float64(n)/scenario.MB)
}

func reproFmtDur(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
}

func reproMdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// detailTable shows, per scenario, the scheduler's mean and each baseline's
// with the change; * marks separated CIs.
func detailTable(vs []verdictRow) string {
	m := vs[0].c.metric
	var b strings.Builder
	b.WriteString("| scenario | " + vs[0].c.sched + " " + m.name + m.unit + " |")
	for _, v := range vs {
		b.WriteString(" " + v.baseline + " | Δ |")
	}
	b.WriteString("\n|---|---:|")
	for range vs {
		b.WriteString("---:|---:|")
	}
	b.WriteString("\n")
	var scens []string
	for _, v := range vs {
		for _, c := range v.comps {
			scens = append(scens, c.scenario)
		}
	}
	slices.Sort(scens)
	scens = slices.Compact(scens)
	for _, s := range scens {
		var x string
		cells := make([]string, 0, 2*len(vs))
		for _, v := range vs {
			i := slices.IndexFunc(v.comps, func(c comparison) bool { return c.scenario == s })
			if i < 0 {
				cells = append(cells, "", "")
				continue
			}
			c := v.comps[i]
			x = numCI(m, c.x)
			d := reproPct(c.change)
			switch c.sep {
			case 1:
				d += " ✓"
			case -1:
				d += " ✗"
			}
			cells = append(cells, numCI(m, c.b), d)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", s, x, strings.Join(cells, " | "))
	}
	b.WriteString("| **overall** | " + reproNum(m, vs[0].aggX) + " |")
	for _, v := range vs {
		fmt.Fprintf(&b, " %s | **%s** (%s) |", reproNum(m, v.aggB), reproPct(v.change), v.verdict)
	}
	b.WriteString("\n\nΔ is the change of the claim's scheduler against that baseline; ✓ marks 95% CIs that separate in the claimed direction, ✗ against it.")
	for _, v := range vs {
		if len(v.comps) < 2 {
			continue
		}
		lo, hi := v.comps[0], v.comps[0]
		for _, c := range v.comps {
			if c.change < lo.change {
				lo = c
			}
			if c.change > hi.change {
				hi = c
			}
		}
		best, worst := lo, hi
		if !m.lowerBetter {
			best, worst = hi, lo
		}
		fmt.Fprintf(&b, " Against %s, Δ is most favourable to the claim in %s (%s) and least in %s (%s).", v.baseline, best.scenario, reproPct(best.change), worst.scenario, reproPct(worst.change))
	}
	b.WriteString("\n")
	return b.String()
}

func shrinkTable(rows []shrinkRow) string {
	var b strings.Builder
	b.WriteString("| scenario run | library scenario | transfer | duration | shrink factor f | schedulers × seeds |\n|---|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		tr := reproFmtBytes(r.bytes)
		if r.origBytes > 0 && r.origBytes != r.bytes {
			tr = reproFmtBytes(r.origBytes) + " → " + reproFmtBytes(r.bytes)
		}
		if r.timed {
			tr += " (offered; timed)"
		}
		du := r.dur.String()
		if r.origDur > 0 && r.origDur != r.dur {
			du = r.origDur.String() + " → " + r.dur.String()
		}
		f := "1 (as in the paper)"
		if r.factor < 1 {
			f = fmt.Sprintf("%.4g", r.factor)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d × %d |\n", r.name, r.orig, tr, du, f, r.schedulers, r.seedCount)
	}
	return b.String()
}
