// Package cli holds the project's commands as functions, so that a binary of
// your own runs them with your schedulers registered. Each entry point reads
// os.Args and exits the process:
//
//   - BenchMain is mpquic-bench: scheduler × scenario × seed matrices on the
//     in-process emulator, reports, the papers' reproduction, and sharded
//     sweeps (run -shard K/N, then merge).
//   - ServerMain is mpquic-server: files and HTTP over multipath QUIC on
//     real sockets.
//   - ClientMain is mpquic-client: downloads over several real paths.
//
// A user's binary is a five-line main that blank-imports the scheduler
// packages it wants (the registry is filled by their init functions) and
// calls one entry point:
//
//	package main
//
//	import (
//		"github.com/mpqsched/mpqsched/cli"
//		_ "github.com/mpqsched/mpqsched/sched/all" // the built-in schedulers
//		_ "example.com/own-scheduler/lowestloss"   // yours
//	)
//
//	func main() { cli.BenchMain() }
//
// mpquic-bench runs virtual time by re-executing its own binary as child
// processes (testing/synctest bubbles exist only inside a test run);
// BenchMain recognises such a child and runs its jobs. The child therefore
// sees exactly the schedulers the binary registers at init, which is why
// registration belongs in blank imports and not in code run after main
// starts. The project's own cmd/mpquic-bench, cmd/mpquic-server and
// cmd/mpquic-client are such mains; examples/own-scheduler is a complete
// module built this way.
package cli
