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
// and embeds the PNG plots by relative path; with dir/repeats.jsonl
// (RepeatsFile), it also shows the run-to-run spread of one seed. It
// returns the path of results.md.
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
	fmt.Fprintf(&b, "%s of %s on %s, from `%s`: mean ± half-width of the 95%% confidence interval over the successful runs; the method is at the end, the numbers also in [%s](%s).\n\n",
		plural(len(results), "run"), plural(len(schedulers(results)), "scheduler"), plural(len(scenarios(results)), "scenario"), ResultsFile, SummaryFile, SummaryFile)
	b.WriteString(WhenSchedulersDiffer + "\n\n")
	b.WriteString(MarkdownTable(rows))
	b.WriteString("\n" + TieSection(rows))
	repeats, err := readRepeats(dir)
	if err != nil {
		return "", err
	}
	if t := SpreadSection(Spreads(results, repeats)); t != "" {
		b.WriteString("\n" + t)
	}
	if t := VideoTables(VideoRows(results)); t != "" { // video.go
		b.WriteString("\n" + t)
	}
	if t := WebTables(WebRows(results)); t != "" { // workloads.go
		b.WriteString("\n" + t)
	}
	if t := RPCTables(RPCRows(results)); t != "" {
		b.WriteString("\n" + t)
	}
	fair := FairnessRows(results) // fairness.go: nil without cross traffic
	if fair != nil {
		b.WriteString("\n" + FairnessMethod + "\n")
	}

	cur := ""
	for _, f := range figs {
		if f.Scenario != cur {
			cur = f.Scenario
			fmt.Fprintf(&b, "\n## %s\n\n", cur)
			if d := description(results, cur); d != "" {
				b.WriteString(d + "\n\n")
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
	b.WriteString("## Glossary\n\n" + GlossaryMarkdown() + "\n")
	b.WriteString("## Method\n\n")
	writeMethod(&b)
	out := filepath.Join(dir, MarkdownFile)
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// WhenSchedulersDiffer is the report's one line on what the numbers can show.
const WhenSchedulersDiffer = "**When schedulers can differ.** With lossless paths and a receive window larger than every path's bandwidth-delay product, " +
	"any scheduler that keeps every path busy fills every window, so their goodputs come within a few per cent of each other (hetero-2path, where runs vary so little that the tie test can still tell differences of 0.1% apart); " +
	"they differ when the receive buffer is small beside paths of very different RTTs (data on the slow path holds the window: rtt10x-256k), " +
	"when a path loses packets, fades or fails (wifi-handoff: max stall), and in latency (out-of-order segments, head-of-line blocking)."

// writeMethod writes how every column of the table is computed.
func writeMethod(b *strings.Builder) {
	b.WriteString("Each cell is the mean ± the half-width of the 95% Student-t confidence interval over the successful runs (± n/a after a single run); ")
	b.WriteString("failed runs (an error, or data that did not verify) are counted but left out. ")
	b.WriteString("Retransmission rate is retransmitted over sent packets (estimated from bytes sent at ")
	fmt.Fprintf(b, "%d B per packet when the run does not report `sent_packets`); ", AssumedSegmentBytes)
	b.WriteString("redundancy is redundant bytes per application byte. ")
	b.WriteString("Capacity is the sum of the paths' bottleneck rates (time-averaged if they vary); ")
	b.WriteString("the FCT lower bound is an ideal fluid transfer joined the way the runner joins paths: path 0 is up after two of its RTTs (QUIC and session handshakes) and the request reaches the server one up-link delay later; paths 1, 2, ... join one after another while the download runs, two RTTs each; each path then carries its down-link rate (outages, steps, handoffs and trace means included), and a bit arrives one down-link delay after it is sent. ")
	b.WriteString("Goodput over time shows, in one panel per scheduler on shared axes, its run of median FCT, from the session's open to that FCT: one thin step per 100 ms sample interval, and in bold their mean over ")
	fmt.Fprintf(b, "%.2f s intervals, against the summed capacity of the paths; the area under a curve is the bytes delivered in order. ", SmoothSec)
	b.WriteString("Those bytes are counted when the application can read them: when a missing segment arrives, the data held behind it goes up at once, so such an interval can rise above the capacity line and the intervals before it fall below. We plot these bursts as measured rather than smooth them away. ")
	b.WriteString("Max stall is each run's longest wait for in-order data between the request and the FCT (timed at every read). ")
	b.WriteString("For scenarios with outages or handoffs, each event of a path's down link is measured: recovery is the time from the link's return until the path carries half its receive rate of the 2 s before the event again, over a 200 ms window (on a 10 ms sampling grid); ")
	b.WriteString("the failover gap is the longest wait for in-order data during the window, counted from its start. Both are pooled over the events of all successful runs; events whose path had not recovered by the FCT are counted beside the mean and listed under each scenario; n/a: no events. ")
	b.WriteString("\n")
}

// plural is "1 run", "2 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// description is scenario scn's description as recorded in its runs (so a
// -scenario-file scenario keeps its own), else the library's.
func description(results []metrics.Result, scn string) string {
	for _, r := range results {
		if r.Scenario == scn && r.ScenarioDesc != "" {
			return r.ScenarioDesc
		}
	}
	if s, err := scenario.Lookup(scn); err == nil {
		return s.Description
	}
	return ""
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
