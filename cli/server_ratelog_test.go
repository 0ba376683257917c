package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// One line per kind per interval; the next line counts what was left out.
func TestRateLog(t *testing.T) {
	var lines []string
	l := &rateLog{Interval: 10 * time.Second, Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		at     time.Duration
		kind   string
		logged bool
		want   string // substring of the line logged
	}{
		{0, "a", true, "a: e"},
		{time.Second, "a", false, ""},
		{2 * time.Second, "b", true, "b: e"}, // kinds are independent
		{9 * time.Second, "a", false, ""},
		{10 * time.Second, "a", true, "a: e (and 2 more since the last report)"},
		{11 * time.Second, "b", false, ""},
		{19 * time.Second, "a", false, ""},
		{25 * time.Second, "a", true, "a: e (and 1 more"},
		{36 * time.Second, "a", true, "a: e"},
	} {
		n := len(lines)
		got := l.Event(t0.Add(step.at), step.kind, "e")
		if got != step.logged || (len(lines) > n) != step.logged {
			t.Fatalf("at %v %s: logged %v (%d lines), want %v", step.at, step.kind, got, len(lines)-n, step.logged)
		}
		if step.logged && !strings.HasPrefix(lines[n], step.want) {
			t.Errorf("at %v: line %q, want prefix %q", step.at, lines[n], step.want)
		}
	}
	if last := lines[len(lines)-1]; strings.Contains(last, "more") {
		t.Errorf("count not reset after a report: %q", last)
	}
	var nilLog *rateLog
	if nilLog.Event(t0, "a", "e") {
		t.Error("a nil rateLog logged")
	}
}
