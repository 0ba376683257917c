package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

func ptr(v float64) *float64 { return &v }

func inherited(ev metrics.HandoffEvent) metrics.HandoffEvent {
	ev.PreRateInherited = true
	return ev
}

// withEvents is five minrtt runs of a two-outage scenario file; seed 2's
// run failed and does not count. The others' recovered events: 0.2, 0.4,
// 0.6, 0.8 and 0.5 s (mean 0.5, s = √0.05 = 0.2236, 95% CI half-width
// t(0.975, 4)·0.2236/√5 = 2.776445·0.1 = 0.2776 s); seed 3's second outage
// did not recover before the FCT, seed 5's first not before its next one,
// and seed 4's second had no traffic before it. Failover gaps 0.1 to 0.6,
// 0.3 and 0.35 s over eight events (mean 2.75/8 = 0.34375); max stalls 0.5,
// 0.7, 0.9, 0.7 s (mean 0.7, CI t(0.975, 3)·0.1633/2 = 0.2598).
func withEvents() []metrics.Result {
	ev := func(start float64, rec *float64, none string, gap float64) metrics.HandoffEvent {
		return metrics.HandoffEvent{Path: 0, Kind: "outage", StartSec: start, EndSec: start + 3, PreRateBps: 20e6,
			PreEventSec: 2, RecoverySec: rec, NoRecovery: none, RecoveryWindowSec: 0.2, FailoverGapSec: gap}
	}
	mk := func(seed int64, stall float64, evs ...metrics.HandoffEvent) metrics.Result {
		r := fromFile("minrtt", seed, 0.63)
		r.Scenario = "commuter-file"
		r.MaxStallSec = stall
		r.HandoffEvents = evs
		return r
	}
	bad := mk(2, 9, ev(5, ptr(9), "", 9))
	bad.SHA256OK = false
	return []metrics.Result{
		mk(1, 0.5, ev(5, ptr(0.2), "", 0.1), ev(20, ptr(0.4), "", 0.2)),
		bad,
		mk(3, 0.7, ev(5, ptr(0.6), "", 0.3), ev(20, nil, "not before the FCT", 0.4)),
		mk(4, 0.9, ev(5, ptr(0.8), "", 0.5), ev(20, nil, "no traffic on the path before the event", 0.6)),
		mk(5, 0.7, ev(5, nil, "not before the path's next event", 0.3), inherited(ev(9, ptr(0.5), "", 0.35))),
	}
}

func TestSummarizeHandoff(t *testing.T) {
	rs := append(withEvents(), fromFile("minrtt", 1, 0.63)) // a scenario without events
	rows := Summarize(rs)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	r := rows[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"recovery mean", r.Recovery.Mean, 0.5},
		{"recovery ci", r.Recovery.CI95, 2.776445 * math.Sqrt(0.05) / math.Sqrt(5)},
		{"failover gap mean", r.FailoverGap.Mean, 0.34375},
		{"max stall mean", r.MaxStall.Mean, 0.7},
		{"max stall ci", r.MaxStall.CI95, 3.182446 * math.Sqrt(0.08/3) / 2},
		{"events", float64(r.Events), 8},
		{"unrecovered", float64(r.Unrecovered), 2},
	} {
		if math.Abs(c.got-c.want) > 1e-4 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	none := rows[1]
	if none.Events != 0 || none.Recovery.N != 0 || !math.IsNaN(none.MaxStall.Mean) {
		t.Errorf("scenario without events or stalls: %+v", none)
	}

	md := MarkdownTable(rows)
	if !strings.Contains(md, "| 0.50 ± 0.28 (2 of 8 unrecovered) |") || !strings.Contains(md, "| 0.700 ± 0.260 |") {
		t.Errorf("markdown recovery or max stall cell missing:\n%s", md)
	}
	if !strings.HasSuffix(strings.TrimSpace(strings.Split(md, "\n")[3]), "| n/a | n/a | n/a |") {
		t.Errorf("scenario without events: want n/a for max stall, recovery and failover gap:\n%s", md)
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "0.50 2!") || !strings.Contains(txt.String(), "0.344") {
		t.Errorf("text table:\n%s", txt.String())
	}

	var cb bytes.Buffer
	if err := WriteCSV(&cb, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	if got := recs[1][col("recovery_s_mean")]; got != "0.5" {
		t.Errorf("recovery_s_mean = %q, want 0.5", got)
	}
	if got := recs[1][col("handoff_events")] + "/" + recs[1][col("unrecovered_events")]; got != "8/2" {
		t.Errorf("events/unrecovered = %s, want 8/2", got)
	}
	if got := recs[2][col("recovery_s_mean")] + recs[2][col("failover_gap_s_mean")]; got != "" {
		t.Errorf("scenario without events: recovery and gap %q, want empty cells", got)
	}
}

// The event table lists every event of the successful runs with why a path
// did not recover; the plot draws them and is left out without events.
func TestEventTableAndPlot(t *testing.T) {
	rs := withEvents()
	tab := EventTable(rs)
	lines := strings.Split(strings.TrimSpace(tab), "\n")
	if len(lines) != 2+8 {
		t.Fatalf("%d lines, want a header and 8 events:\n%s", len(lines), tab)
	}
	for _, want := range []string{"| minrtt | 1 | 0 | outage | 5.00-8.00 | 20.00 | 0.20 | 0.100 |", "not before the FCT", "not before the path's next event", "| 20.00 (previous event's) | 0.50 |", "no traffic on the path before the event"} {
		if !strings.Contains(tab, want) {
			t.Errorf("event table lacks %q:\n%s", want, tab)
		}
	}
	if strings.Contains(tab, "| 2 |") {
		t.Errorf("the failed run's events are listed:\n%s", tab)
	}
	if EventTable([]metrics.Result{fromFile("minrtt", 1, 0.63)}) != "" {
		t.Error("an event table without events")
	}
	p, fig, ok := recoveryPlot("commuter-file", rs, nil)
	if !ok || fig.Kind != "recovery" || !strings.Contains(fig.Note, "had not recovered") {
		t.Fatalf("recovery plot %v, %+v", ok, fig)
	}
	if p.Y.Max < 0.8 || p.X.Max < float64(len(schedulers(rs)))-1 {
		t.Errorf("axes end at x %v, y %v: want every scheduler's strip and every event (recovery 0.8 s) inside", p.X.Max, p.Y.Max)
	}
	if _, _, ok := recoveryPlot("x", []metrics.Result{fromFile("minrtt", 1, 0.63)}, nil); ok {
		t.Error("a recovery plot without events")
	}

	dir := writeResults(t, rs)
	md, err := Markdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(md)
	if !strings.Contains(string(b), "plots/recovery_commuter-file.png") || !strings.Contains(string(b), "<details>") {
		t.Errorf("results.md lacks the recovery plot or the event table")
	}
	if _, err := os.Stat(filepath.Join(dir, PlotsDir, "recovery_commuter-file.svg")); err != nil {
		t.Error(err)
	}
}
