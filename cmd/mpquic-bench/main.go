// Command mpquic-bench compares multipath schedulers on the in-process
// network emulator; see package cli (BenchMain) and `mpquic-bench help`.
package main

import (
	"github.com/mpqsched/mpqsched/cli"
	_ "github.com/mpqsched/mpqsched/sched/all" // every built-in scheduler
)

func main() { cli.BenchMain() }
