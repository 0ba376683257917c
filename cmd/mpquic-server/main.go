// Command mpquic-server serves a directory over multipath QUIC (FILE and
// HTTP on the session's streams); see cli.ServerMain and `mpquic-server -h`.
package main

import (
	"github.com/mpqsched/mpqsched/cli"
	_ "github.com/mpqsched/mpqsched/sched/all" // every built-in scheduler
)

func main() { cli.ServerMain() }
