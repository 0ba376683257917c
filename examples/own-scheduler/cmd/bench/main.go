// Command bench is mpquic-bench with the lowestloss scheduler registered
// next to the built-in ones: `go run ./cmd/bench list`, or
// `go run ./cmd/bench run -schedulers lowestloss,minrtt`.
package main

import (
	_ "example.com/own-scheduler/lowestloss" // this module's scheduler
	"github.com/mpqsched/mpqsched/cli"
	_ "github.com/mpqsched/mpqsched/sched/all" // the built-in schedulers
)

func main() { cli.BenchMain() }
