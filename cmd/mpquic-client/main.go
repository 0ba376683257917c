// Command mpquic-client downloads from mpquic-server over several real
// paths and checks the SHA-256; see cli.ClientMain and `mpquic-client -h`.
package main

import (
	"github.com/mpqsched/mpqsched/cli"
	_ "github.com/mpqsched/mpqsched/sched/all" // every built-in scheduler
)

func main() { cli.ClientMain() }
