package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/bench/runner"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
)

// maxRepeat bounds -repeat: runs of one seed beyond the matrix's own.
const maxRepeat = 100

// runRepeats runs bench.RepeatJobs(jobs, f.repeat, …) as the matrix ran and
// writes their results, in table order, to DIR/repeats.jsonl: how much one
// seed varies from run to run (goroutine order in the bubble, and EdAR-o's
// model, which learns from run to run). The report reads them from there
// (report.RepeatsFile). It removes a repeats file an earlier run left when
// f.repeat is 0.
func runRepeats(f *runFlags, jobs []job, first int, stderr io.Writer) error {
	path := filepath.Join(f.out, report.RepeatsFile)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	if f.repeat == 0 || len(jobs) == 0 {
		return nil
	}
	var mu sync.Mutex
	var results []metrics.Result
	collect := func(_ job, r metrics.Result) { // called from several goroutines
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
	}
	rj := bench.RepeatJobs(jobs, f.repeat, first)
	start := time.Now()
	if f.realtime {
		runner.Local(rj, f.parallel, collect)
	} else if err := runner.Virtual(rj, f.parallel, collect); err != nil {
		return err
	}
	report.SortResults(results)
	if !f.quiet {
		fmt.Fprintf(stderr, "mpquic-bench: %d repeated runs of one seed in %.1f s wall → %s\n", len(results), time.Since(start).Seconds(), path)
	}
	return writeResults(path, results)
}
