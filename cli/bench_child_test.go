package cli

import (
	"os"

	_ "github.com/mpqsched/mpqsched/sched/all" // the schedulers the tests run
)

// init lets runVirtual re-execute this test binary as its virtual-time
// child, as it re-executes mpquic-bench. It is an init, not a TestMain, so
// that the package's other commands keep TestMain for their own use.
func init() {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
}
