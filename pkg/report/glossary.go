package report

import (
	"fmt"
	"strings"
)

// Term defines one column of a report table.
type Term struct {
	Column  string // the column's heading, as the table prints it
	Unit    string // the unit of its values ("" for names and counts)
	Meaning string // how it is measured
}

// Glossary holds, per table of results.md (and the table mpquic-bench
// prints), the definition of every column, in table order.
var Glossary = []struct {
	Table string // the table's name in the glossary
	Terms []Term
}{
	{"Summary table (and the table mpquic-bench prints)", []Term{
		{"scenario", "", "the emulated network: paths, their rates, delays, losses and events over time, and the transfer (scenario library, `mpquic-bench list`)"},
		{"scheduler", "", "the packet scheduler that chose the path of every packet the server sent"},
		{"runs (failed)", "count", "runs recorded, and of them those that failed (an error, or data that did not match what was sent: its SHA-256, or byte for byte in mpquic-bench's runs); failed runs are left out of every other column"},
		{"goodput (Mbit/s)", "Mbit/s", "application bytes delivered and verified × 8 / FCT, mean ± half-width of the 95% Student-t interval over the runs"},
		{"tie group", "letters", "(\"tie\" in the printed table) schedulers that share a letter have goodputs that are statistically tied within the scenario (Welch's t-test on every pair, Holm-corrected); \"a\" holds the highest mean"},
		{"/capacity", "fraction", "(printed table) mean goodput over the capacity"},
		{"FCT (s)", "s", "flow completion time: from the session's open to the last byte delivered in order to the application; \"timed run\" for scenarios of a fixed length, judged by goodput"},
		{"out-of-order segs", "segments per run", "segments that arrived at the receiver while an earlier segment was still missing"},
		{"HoL blocked (s)", "s per run", "head-of-line blocked time: the time during which some stream held bytes waiting for a missing part of its own data (the union of those intervals, not a sum over streams; since protocol version 4 one stream never waits for another's; before it, the time the connection-level reorder buffer held data). " +
			"It can equal nearly the whole transfer without any fault: on hetero-2path every scheduler that keeps both paths busy has the download's segments in flight on the slow path while later ones arrive on the fast one, " +
			"so from the first packets to the last some of the download waits (5.9 s of a 6.0 s transfer); the application still receives data at the capacity, which goodput and max stall show. " +
			"Schedulers that send every segment on every path (redundant, and EdAR where its redundancy column is high) and runs that use one path stay near 0"},
		{"retrans rate (%)", "% of packets", "packets lost and re-sent, plus segments reinjected on another path, over packets sent (sent packets estimated from bytes at 1200 B per packet when a run does not count them)"},
		{"redundancy (%)", "% of application bytes", "bytes sent beyond the first copy of each segment (redundant schedulers, reinjection) over application bytes"},
		{"capacity (Mbit/s)", "Mbit/s", "the sum of the paths' bottleneck down-link rates, time-averaged if they vary"},
		{"FCT lower bound (s)", "s", "the FCT of an ideal fluid transfer over the same paths, joined as the runner joins them (see Method)"},
		{"max stall (s)", "s", "each run's longest wait for in-order data between the request and the FCT, timed at every read; mean over runs"},
		{"recovery (s)", "s", "per outage or handoff: time from the link's return until the path again carries half its rate of the 2 s before the event, over a 200 ms window; pooled over the events of all runs; \"k!\" after it in the printed table: k events did not recover before the FCT; n/a: no events"},
		{"failover gap (s)", "s", "per outage or handoff: the longest wait for in-order data during the event's window, counted from its start: how long the application waited before another path took over"},
	}},
	{"Tie groups", []Term{
		{"runs per scheduler", "count", "successful runs each scheduler's goodput sample holds"},
		{"tie groups", "Mbit/s", "the groups of schedulers that are pairwise tied, best first, with the range of their mean goodputs"},
		{"smallest difference resolvable (Mbit/s)", "Mbit/s", "the difference of mean goodput at which Welch's t reaches the critical value of Holm's first step, for the two schedulers with the widest spread: differences below it are reported as ties"},
	}},
	{"Run-to-run spread of one seed", []Term{
		{"one seed: runs, s.d. (min–max)", "count; Mbit/s", "goodput of one seed run again and again (`-repeat`) plus the matrix's own run of it: sample standard deviation, smallest and largest"},
		{"across seeds: runs, s.d. (min–max)", "count; Mbit/s", "goodput over the matrix's seeds, one run each: the same figures"},
	}},
	{"Every outage and handoff (per scenario)", []Term{
		{"seed, path, kind", "", "the run's seed, the path's index in scenario order, outage or handoff"},
		{"window (s)", "s", "the event's start and end on the emulator's clock"},
		{"pre-event rate (Mbit/s)", "Mbit/s", "the path's receive rate over the 2 s before the event (shorter if an earlier event or the open is closer)"},
		{"recovery (s), failover gap (s)", "s", "as in the summary table, for this one event"},
	}},
}

// GlossaryMarkdown renders Glossary as Markdown: a table per report table.
func GlossaryMarkdown() string {
	var b strings.Builder
	b.WriteString("Every column of the tables above, with its unit. Each figure is over the successful runs. The fairness and workload tables, when present, are defined in their own paragraphs above them.\n")
	for _, g := range Glossary {
		fmt.Fprintf(&b, "\n**%s**\n\n| column | unit | meaning |\n|---|---|---|\n", g.Table)
		for _, t := range g.Terms {
			unit := t.Unit
			if unit == "" {
				unit = "—"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdEscape(t.Column), unit, mdEscape(t.Meaning))
		}
	}
	return b.String()
}
