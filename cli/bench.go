// Command mpquic-bench compares multipath schedulers on the in-process
// network emulator: it runs schedulers × scenarios × seeds, prints a table
// (or JSON/CSV records), and writes a results directory with a Markdown
// report and plots.
//
//	mpquic-bench                                  # the default comparison: every scheduler on hetero-2path
//	mpquic-bench run -scenarios 'prs-*' -seeds 3  # a matrix
//	mpquic-bench report results/default           # rebuild a report
//	mpquic-bench list                             # schedulers and scenarios
//
// Runs use virtual time (testing/synctest) by default, in child processes of
// this binary, so a sweep takes a fraction of its emulated duration; -realtime
// runs them on the wall clock instead.
package main

import (
	"fmt"
	"os"

	_ "github.com/mpqsched/mpqsched/sched/all"
)

func main() {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	args := os.Args[1:]
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "run":
		err = runCmd(args)
	case "report":
		err = reportCmd(args)
	case "list":
		err = listCmd(args)
	case "reproduce":
		err = reproduceCmd(args)
	case "help", "-h", "--help":
		usage()
		return
	default:
		err = fmt.Errorf("unknown command %q (run, report, list)", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpquic-bench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  mpquic-bench [run] [flags]     run a scheduler × scenario × seed matrix (default: every scheduler on hetero-2path)
  mpquic-bench report DIR        rebuild DIR/results.md, summary.csv and plots from DIR/results.jsonl
  mpquic-bench list              list schedulers and scenarios
  mpquic-bench reproduce         run the papers' experiments and write docs/reproduction.md
Run 'mpquic-bench run -h' for the run flags.
`)
}
