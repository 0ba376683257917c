package report

import (
	"strings"
	"testing"
)

// Every column heading of the summary table has a glossary entry.
func TestGlossaryCoversSummaryTable(t *testing.T) {
	defined := map[string]bool{}
	for _, g := range Glossary {
		for _, term := range g.Terms {
			defined[term.Column] = true
		}
	}
	header := strings.SplitN(MarkdownTable(nil), "\n", 2)[0]
	for _, col := range strings.Split(strings.Trim(header, "| "), " | ") {
		if !defined[col] {
			t.Errorf("summary column %q has no glossary entry", col)
		}
	}
	for _, col := range []string{"tie groups", "smallest difference resolvable (Mbit/s)", "window (s)"} {
		if !defined[col] {
			t.Errorf("column %q has no glossary entry", col)
		}
	}
}
