package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mpqsched/mpqsched/pkg/report"
)

const mergeWhat = `Merges the result directories of the shards of one sweep (run -shard K/N,
the same flags otherwise) into OUT: results.jsonl, matrix.json and the report,
the same as one unsharded run of the matrix would have written (apart from
wall times). Refuses directories of different matrices, the same shard twice,
a missing or incomplete shard, and results that do not match their matrix.json.`

func mergeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge", "merge -out DIR DIR...", mergeWhat, stdout)
	out := fs.String("out", "", "directory for the merged results and report (required)")
	noReport := fs.Bool("no-report", false, "do not write the Markdown report and plots")
	quiet := fs.Bool("q", false, "no summary line on stderr")
	dirs, err := fs.parse(args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("merge: -out DIR is required")
	}
	if len(dirs) == 0 {
		return usagef("merge: give the shards' result directories")
	}
	for _, d := range dirs {
		if filepath.Clean(d) == filepath.Clean(*out) {
			return usagef("merge: -out %s is also an input; write the merge elsewhere", *out)
		}
	}
	m, results, err := report.MergeShards(dirs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := writeResults(filepath.Join(*out, report.ResultsFile), results); err != nil {
		return err
	}
	if err := report.WriteManifest(*out, m); err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stderr, "mpquic-bench: merged %d runs from %d shards → %s\n", len(results), len(dirs), *out)
	}
	if !*noReport && len(results) > 0 {
		md, err := report.Markdown(*out)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		fmt.Fprintln(stdout, md)
	}
	return nil
}
