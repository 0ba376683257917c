package cli

import (
	"os"

	"github.com/mpqsched/mpqsched/pkg/bench/runner"
	_ "github.com/mpqsched/mpqsched/sched/all" // the schedulers the tests run
)

// init lets runner.Virtual re-execute this test binary as its virtual-time
// child, as it re-executes mpquic-bench. It is an init, not a TestMain, so
// that the package's other commands keep TestMain for their own use.
func init() {
	if runner.IsChild() {
		os.Exit(runner.ChildMain())
	}
}
