package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// Output file names inside a results directory.
const (
	SummaryFile  = "summary.csv"
	MarkdownFile = "results.md"
)

// Markdown reads dir/results.jsonl and writes dir/summary.csv, the plots in
// dir/plots (PNG and SVG) and dir/results.md, which holds the summary table
// and embeds the PNG plots by relative path. It returns the path of
// results.md.
func Markdown(dir string) (string, error) {
	results, err := ReadResults(filepath.Join(dir, ResultsFile))
	if err != nil {
		return "", err
	}
	if len(results) == 0 {
		return "", fmt.Errorf("report: %s has no results", filepath.Join(dir, ResultsFile))
	}
	rows := Summarize(results)
	var csvBuf bytes.Buffer
	if err := WriteCSV(&csvBuf, rows); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), csvBuf.Bytes(), 0o644); err != nil {
		return "", err
	}
	figs, err := Plots(dir, results)
	if err != nil {
		return "", err
	}

	var b strings.Builder
	b.WriteString("# Results\n\n")
	fmt.Fprintf(&b, "%d runs of %d schedulers on %d scenarios, from `%s`. ", len(results), len(schedulers(results)), len(scenarios(results)), ResultsFile)
	b.WriteString("Each cell is the mean ± the half-width of the 95% Student-t confidence interval over the successful runs (± n/a after a single run); ")
	b.WriteString("failed runs (an error, or data that did not verify) are counted but left out. ")
	b.WriteString("Retransmission rate is retransmitted over sent packets (estimated from bytes sent at ")
	fmt.Fprintf(&b, "%d B per packet when the run does not report `sent_packets`); ", AssumedSegmentBytes)
	b.WriteString("redundancy is redundant bytes per application byte. ")
	b.WriteString("Capacity is the sum of the paths' bottleneck rates (time-averaged if they vary); ")
	b.WriteString("the FCT lower bound is an ideal fluid transfer joined the way the runner joins paths: path 0 is up after two of its RTTs (QUIC and session handshakes) and the request reaches the server one up-link delay later; paths 1, 2, ... join one after another while the download runs, two RTTs each; each path then carries its down-link rate (outages, steps, handoffs and trace means included), and a bit arrives one down-link delay after it is sent. ")
	b.WriteString("Goodput over time shows, per scheduler, its run of median FCT, from the session's open to that FCT, one step per 100 ms sample interval, against the summed capacity of the paths; the area under a curve is the bytes delivered in order. ")
	b.WriteString("Those bytes are counted when the application can read them: when a missing segment arrives, the data held behind it goes up at once, so such an interval can rise above the capacity line and the intervals before it fall below. We plot these bursts as measured rather than smooth them away. ")
	b.WriteString("Max stall is each run's longest wait for in-order data between the request and the FCT (timed at every read). ")
	b.WriteString("For scenarios with outages or handoffs, each event of a path's down link is measured: recovery is the time from the link's return until the path carries half its receive rate of the 2 s before the event again, over a 200 ms window (on a 10 ms sampling grid); ")
	b.WriteString("the failover gap is the longest wait for in-order data during the window, counted from its start. Both are pooled over the events of all successful runs; events whose path had not recovered by the FCT are counted beside the mean and listed under each scenario; n/a: no events. ")
	fmt.Fprintf(&b, "The same numbers are in [%s](%s).\n\n", SummaryFile, SummaryFile)
	b.WriteString(MarkdownTable(rows))
	fair := FairnessRows(results) // fairness.go: nil without cross traffic
	if fair != nil {
		b.WriteString("\n" + FairnessMethod + "\n")
	}

	cur := ""
	for _, f := range figs {
		if f.Scenario != cur {
			cur = f.Scenario
			fmt.Fprintf(&b, "\n## %s\n\n", cur)
			if s, err := scenario.Lookup(cur); err == nil && s.Description != "" {
				b.WriteString(s.Description + "\n\n")
			}
			if t := FairnessTable(fair, cur); t != "" {
				b.WriteString("Fairness against the cross traffic (mean ± 95% CI over the successful runs):\n\n" + t + "\n")
			}
			if t := EventTable(ofScenario(results, cur)); t != "" {
				b.WriteString("<details><summary>Every outage and handoff: recovery and failover gap per run</summary>\n\n" + t + "\n</details>\n\n")
			}
		}
		fmt.Fprintf(&b, "![%s](%s)\n\n", f.Title, filepath.ToSlash(f.PNG))
		fmt.Fprintf(&b, "*%s* ([SVG](%s))", f.Title, filepath.ToSlash(f.SVG))
		if f.Note != "" {
			b.WriteString(" " + f.Note)
		}
		b.WriteString("\n\n")
	}
	out := filepath.Join(dir, MarkdownFile)
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// ofScenario returns the results of scenario scn.
func ofScenario(results []metrics.Result, scn string) []metrics.Result {
	var out []metrics.Result
	for _, r := range results {
		if r.Scenario == scn {
			out = append(out, r)
		}
	}
	return out
}
