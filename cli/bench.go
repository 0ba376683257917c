package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/bench/runner"
)

// BenchMain is the whole mpquic-bench command: it reads os.Args, runs the
// command and exits the process (status 0 on success and on help, 1 when a
// run or a report fails, 2 on a bad command line).
//
// It is also the virtual-time child: mpquic-bench re-executes its own binary
// to run jobs inside testing/synctest bubbles, and BenchMain recognises such
// a child by its environment and runs the jobs instead. The child resolves
// scheduler names in its own registry, so a binary that calls BenchMain must
// register every scheduler it wants to run in its main package (blank
// imports), never conditionally at run time.
func BenchMain() {
	if runner.IsChild() {
		os.Exit(runner.ChildMain())
	}
	os.Exit(runBench(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses of mpquic-bench.
const (
	exitOK    = 0 // success, or help was asked for
	exitFail  = 1 // a run failed, or a report could not be written
	exitUsage = 2 // a bad command line: unknown command or flag, bad or contradictory values
)

// benchCommands are mpquic-bench's commands, in the order its help lists them.
var benchCommands = []struct{ name, args, what string }{
	{"run", "[flags]", "run a scheduler × scenario × seed matrix (the default command: every scheduler on hetero-2path)"},
	{"report", "DIR", "rebuild DIR/results.md, summary.csv and plots from DIR/results.jsonl"},
	{"list", "", "list the registered schedulers and the library's scenarios"},
	{"reproduce", "[flags]", "run the papers' experiments and write reproduction.md (default -out results/reproduce)"},
	{"merge", "-out DIR DIR...", "merge the result directories of a sharded run (run -shard K/N) into one report"},
	{"help", "[COMMAND]", "this help, or a command's flags"},
}

// commandNames lists the commands for error messages: "run, report, …".
func commandNames() string {
	var ns []string
	for _, c := range benchCommands {
		ns = append(ns, c.name)
	}
	return strings.Join(ns, ", ")
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef makes a usageError.
func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// errHelp reports that help was asked for and printed (exit status 0).
var errHelp = errors.New("help requested")

// runBench runs one mpquic-bench command line (without the program name) and
// returns the process's exit status.
func runBench(args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 {
		switch a := args[0]; {
		case isHelpFlag(a):
			benchUsage(stdout)
			return exitOK
		case a != "" && a[0] != '-':
			cmd, args = a, args[1:]
		}
	}
	var err error
	switch cmd {
	case "run":
		err = runCmd(args, stdout, stderr)
	case "report":
		err = reportCmd(args, stdout, stderr)
	case "list":
		err = listCmd(args, stdout, stderr)
	case "reproduce":
		err = reproduceCmd(args, stdout, stderr)
	case "merge":
		err = mergeCmd(args, stdout, stderr)
	case "help":
		err = helpCmd(args, stdout, stderr)
	default:
		err = usagef("unknown command %q (commands: %s)", cmd, commandNames())
	}
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "mpquic-bench:", err)
		fmt.Fprintf(stderr, "Run 'mpquic-bench help' for the commands, 'mpquic-bench %s -h' for a command's flags.\n", helpTarget(cmd))
		return exitUsage
	default:
		fmt.Fprintln(stderr, "mpquic-bench:", err)
		return exitFail
	}
}

// helpTarget is the command whose -h the usage hint names.
func helpTarget(cmd string) string {
	for _, c := range benchCommands {
		if c.name == cmd && cmd != "help" {
			return cmd
		}
	}
	return "COMMAND"
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// benchUsage prints the top-level help.
func benchUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: mpquic-bench [COMMAND] [flags] [args]")
	fmt.Fprintln(w)
	for _, c := range benchCommands {
		fmt.Fprintf(w, "  %-42s %s\n", strings.TrimSpace("mpquic-bench "+c.name+" "+c.args), c.what)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Without a command, the flags are run's. 'mpquic-bench COMMAND -h' shows a command's flags.")
	fmt.Fprintln(w, "Exit status: 0 on success or help, 1 if a run or report failed, 2 on a bad command line.")
}

// helpCmd is `mpquic-bench help [COMMAND]`.
func helpCmd(args []string, stdout, stderr io.Writer) error {
	switch len(args) {
	case 0:
		benchUsage(stdout)
		return nil
	case 1:
		if args[0] == "help" {
			benchUsage(stdout)
			return nil
		}
		for _, c := range benchCommands {
			if c.name == args[0] {
				return runBenchHelp(c.name, stdout, stderr)
			}
		}
		return usagef("help: unknown command %q (commands: %s)", args[0], commandNames())
	}
	return usagef("help takes at most one command, got %q", args)
}

// runBenchHelp prints one command's help, as `COMMAND -h` does.
func runBenchHelp(cmd string, stdout, stderr io.Writer) error {
	h := []string{"-h"}
	switch cmd {
	case "run":
		return runCmd(h, stdout, stderr)
	case "report":
		return reportCmd(h, stdout, stderr)
	case "list":
		return listCmd(h, stdout, stderr)
	case "reproduce":
		return reproduceCmd(h, stdout, stderr)
	case "merge":
		return mergeCmd(h, stdout, stderr)
	}
	return nil
}

// cmdFlags is one command's flag set with its help text. Help goes to
// stdout (it was asked for); parse errors come back as usage errors.
type cmdFlags struct {
	*flag.FlagSet
	synopsis string // "report DIR": the command line after "mpquic-bench"
	what     string // what the command does, one paragraph
	stdout   io.Writer
}

// newFlagSet makes a command's flag set.
func newFlagSet(name, synopsis, what string, stdout io.Writer) *cmdFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // runBench prints the error once
	fs.Usage = func() {}     // parse prints the help itself, to stdout
	return &cmdFlags{FlagSet: fs, synopsis: synopsis, what: what, stdout: stdout}
}

// help prints the command's synopsis, what it does and its flags.
func (c *cmdFlags) help() {
	fmt.Fprintf(c.stdout, "usage: mpquic-bench %s\n\n%s\n", c.synopsis, c.what)
	n := 0
	c.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(c.stdout, "\nFlags:")
		c.SetOutput(c.stdout)
		c.PrintDefaults()
		c.SetOutput(io.Discard)
	}
}

// parse parses flags and positional arguments in any order ("report DIR -h"
// asks for help too) and returns the positional ones; everything after "--"
// is positional. -h, -help and --help print the command's help and return
// errHelp; a flag the flag package refuses is a usage error (exit status 2).
func (c *cmdFlags) parse(args []string) ([]string, error) {
	var pos []string
	for {
		err := c.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c.help()
			return nil, errHelp
		}
		if err != nil {
			return nil, usagef("%s: %v", c.Name(), err)
		}
		rest := c.Args()
		switch {
		case len(rest) == 0:
			return pos, nil
		case rest[0] == "--":
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// given returns the names of the flags set on the command line.
func (c *cmdFlags) given() map[string]bool {
	m := map[string]bool{}
	c.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}
