package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
)

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report DIR", "Rebuilds DIR/summary.csv, DIR/plots/ and DIR/results.md from DIR/results.jsonl\nand prints the path of results.md.", stdout)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report takes one results directory, got %d arguments", len(pos))
	}
	md, err := report.Markdown(pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, md)
	return nil
}

// listWidth is the line width list wraps scenario descriptions to, columns.
const listWidth = 100

func listCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", "list", "Lists the registered schedulers and the scenario library, with each scenario's\nfull description.", stdout)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("list takes no arguments, got %q", pos)
	}
	fmt.Fprintln(stdout, "SCHEDULERS")
	for _, n := range sched.Names() {
		fmt.Fprintf(stdout, "  %s\n", n)
	}
	lib := scenario.Library()
	width := 0
	for _, s := range lib {
		width = max(width, len(s.Name))
	}
	indent := strings.Repeat(" ", 2+width+2)
	fmt.Fprintln(stdout, "\nWORKLOADS (a scenario's \"workload\"; without one, a scenario is one download of \"bytes\")")
	for _, w := range scenario.WorkloadDocs {
		lines := wrap(w.Doc, max(listWidth-len(indent), 30))
		fmt.Fprintf(stdout, "  %-*s  %s\n", width, w.Kind, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(stdout, "%s%s\n", indent, l)
		}
	}
	fmt.Fprintln(stdout, "\nSCENARIOS")
	for _, s := range lib {
		lines := wrap(s.Description, max(listWidth-len(indent), 30))
		if len(lines) == 0 {
			lines = []string{""}
		}
		fmt.Fprintf(stdout, "  %-*s  %s\n", width, s.Name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(stdout, "%s%s\n", indent, l)
		}
	}
	return nil
}

// wrap splits text into lines of at most width characters at spaces; a word
// longer than width gets a line of its own. No word is dropped or cut.
func wrap(text string, width int) []string {
	var lines, cur []string
	n := 0 // characters in cur, spaces included
	for _, w := range strings.Fields(text) {
		lw := utf8.RuneCountInString(w)
		if len(cur) > 0 && n+1+lw > width {
			lines = append(lines, strings.Join(cur, " "))
			cur, n = cur[:0], 0
		}
		if len(cur) > 0 {
			n++
		}
		cur = append(cur, w)
		n += lw
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}
