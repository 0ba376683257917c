package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// CSVHeader is the header row of WriteCSV. Every metric has a mean, a 95% CI
// half-width and the number of runs it covers; units are in the names.
var CSVHeader = []string{
	"scenario", "scheduler", "runs", "failed",
	"goodput_bps_mean", "goodput_bps_ci95",
	"fct_s_mean", "fct_s_ci95",
	"ooo_segments_mean", "ooo_segments_ci95",
	"hol_blocked_s_mean", "hol_blocked_s_ci95",
	"retrans_rate_mean", "retrans_rate_ci95",
	"redundancy_overhead_mean", "redundancy_overhead_ci95",
	"capacity_bps", "fct_lower_bound_s",
	"max_stall_s_mean", "max_stall_s_ci95",
	"recovery_s_mean", "recovery_s_ci95",
	"failover_gap_s_mean", "failover_gap_s_ci95",
	"handoff_events", "unrecovered_events",
	"goodput_tie_group",
}

// WriteCSV writes rows as CSV with CSVHeader; goodput_tie_group is
// Row.GoodputTie. Unknown values (NaN) are empty cells: recovery and
// failover gap are empty for a scenario without outages or handoffs
// (handoff_events 0).
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	for _, r := range rows {
		rec := []string{r.Scenario, r.Scheduler, strconv.Itoa(r.Runs), strconv.Itoa(r.Failed)}
		for _, s := range []struct{ m, ci float64 }{
			{r.Goodput.Mean, r.Goodput.CI95}, {r.FCT.Mean, r.FCT.CI95}, {r.OOO.Mean, r.OOO.CI95},
			{r.HoL.Mean, r.HoL.CI95}, {r.Retrans.Mean, r.Retrans.CI95}, {r.Redundancy.Mean, r.Redundancy.CI95},
		} {
			rec = append(rec, num(s.m), num(s.ci))
		}
		rec = append(rec, num(r.CapacityBps), num(r.FCTLowerBoundSec))
		for _, s := range []struct{ m, ci float64 }{
			{r.MaxStall.Mean, r.MaxStall.CI95}, {r.Recovery.Mean, r.Recovery.CI95}, {r.FailoverGap.Mean, r.FailoverGap.CI95},
		} {
			rec = append(rec, num(s.m), num(s.ci))
		}
		rec = append(rec, strconv.Itoa(r.Events), strconv.Itoa(r.Unrecovered), r.GoodputTie)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// pm formats a value with a scale and unit, "n/a" if unknown, and a ± part
// only if ci is known (for single figures, pass NaN).
func pm(mean, ci, scale float64, prec int, unit string) string {
	if math.IsNaN(mean) {
		return "n/a"
	}
	s := strconv.FormatFloat(mean*scale, 'f', prec, 64)
	if !math.IsNaN(ci) {
		s += " ± " + strconv.FormatFloat(ci*scale, 'f', prec, 64)
	}
	return s + unit
}

// MarkdownTable renders rows as a Markdown table: mean ± 95% CI of each
// metric, the goodput tie groups (Row.GoodputTie), the two bound columns,
// and the handoff metrics (max stall of every run; recovery and failover
// gap pooled over the outage and handoff events, "n/a" for a scenario
// without any).
func MarkdownTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| scenario | scheduler | runs (failed) | goodput (Mbit/s) | tie group | FCT (s) | out-of-order segs | HoL blocked (s) | retrans rate (%) | redundancy (%) | capacity (Mbit/s) | FCT lower bound (s) | max stall (s) | recovery (s) | failover gap (s) |\n")
	b.WriteString("|---|---|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fct := r.FCT.Format(1, 3)
		if r.Timed {
			fct = "timed run"
		}
		gap := "n/a"
		if r.Events > 0 {
			gap = r.FailoverGap.Format(1, 3)
		}
		fmt.Fprintf(&b, "| %s | %s | %d (%d) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdEscape(r.Scenario), mdEscape(r.Scheduler), r.Runs, r.Failed,
			r.Goodput.Format(1e-6, 2), r.GoodputTie,
			fct,
			r.OOO.Format(1, 0),
			r.HoL.Format(1, 3),
			r.Retrans.Format(100, 2),
			r.Redundancy.Format(100, 1),
			pm(r.CapacityBps, math.NaN(), 1e-6, 2, ""),
			pm(r.FCTLowerBoundSec, math.NaN(), 1, 3, ""),
			r.MaxStall.Format(1, 3), recoveryCell(r, 2), gap,
		)
	}
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteText writes rows as the aligned plain-text table mpquic-bench prints:
// mean ± 95% CI of goodput and FCT ("± n/a" after a single run, "n/a"
// without a successful run), the goodput tie groups, goodput over
// capacity, and the means of the other metrics: max stall per run, and recovery and failover gap over the
// outage and handoff events ("n/a" without any; "k!" after the recovery
// when k events did not recover before the FCT).
func WriteText(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tscheduler\truns\tgoodput Mbit/s\ttie\t/capacity\tFCT s\tOOO segs\tHoL s\tredundancy\tmax stall s\trecovery s\tfailover s\t")
	for _, r := range rows {
		fct := r.FCT.Format(1, 3)
		if r.Timed {
			fct = "timed run"
		}
		rec, gap := "n/a", "n/a"
		if r.Events > 0 {
			rec, gap = pm(r.Recovery.Mean, math.NaN(), 1, 2, ""), pm(r.FailoverGap.Mean, math.NaN(), 1, 3, "")
			if r.Unrecovered > 0 {
				rec += fmt.Sprintf(" %d!", r.Unrecovered)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			r.Scenario, r.Scheduler, r.Runs-r.Failed, r.Runs, r.Goodput.Format(1e-6, 2), r.GoodputTie,
			pm(r.Goodput.Mean/r.CapacityBps, math.NaN(), 1, 3, ""), fct,
			pm(r.OOO.Mean, math.NaN(), 1, 0, ""), pm(r.HoL.Mean, math.NaN(), 1, 2, ""), pm(r.Redundancy.Mean, math.NaN(), 1, 3, ""),
			pm(r.MaxStall.Mean, math.NaN(), 1, 3, ""), rec, gap)
	}
	return tw.Flush()
}
