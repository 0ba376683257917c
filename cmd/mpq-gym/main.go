// Command mpq-gym is the emulator side of the training environment
// (python/mpqgym, docs/gym.md): it speaks the protocol of pkg/gym on its
// standard input and output and runs each episode in virtual time, in a
// testing/synctest bubble of its own. The Python package starts it; a user
// never needs to.
//
//	mpq-gym            serve the protocol on stdin/stdout (logs on stderr)
//	mpq-gym -list      print the library's scenario names, one per line
//	mpq-gym -eval M    print an exported policy's logits for JSON observations on stdin
//
// Virtual time needs testing/synctest, so the loop runs inside testing.Main
// as one test; its output ("PASS") goes to stderr, so that stdout carries
// only frames. GOMAXPROCS defaults to 1: one bubble hardly uses a second
// processor (see cli/bench_child.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"testing"
	"testing/synctest"

	"github.com/mpqsched/mpqsched/pkg/gym"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// ProfileEnv, if set, names a file for a CPU profile of the whole process
// (go tool pprof), written when the agent quits.
const ProfileEnv = "MPQ_GYM_CPUPROFILE"

func main() {
	list := flag.Bool("list", false, "print the library's scenario names and exit")
	eval := flag.String("eval", "", "evaluate this exported policy on JSON observations from stdin and exit")
	flag.Parse()
	if *eval != "" {
		os.Exit(evalPolicy(*eval))
	}
	if *list {
		for _, s := range scenario.Library() {
			fmt.Println(s.Name)
		}
		return
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if p := os.Getenv(ProfileEnv); p != "" {
		f, err := os.Create(p)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mpq-gym:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	out := os.Stdout
	os.Stdout = os.Stderr // testing.Main's own lines must not reach the frames
	serve := func(t *testing.T) {
		err := gym.Serve(os.Stdin, out, func(f func()) {
			synctest.Test(t, func(*testing.T) { f() })
		})
		if err != nil {
			t.Errorf("mpq-gym: %v", err) // exit status 1
		}
		pprof.StopCPUProfile() // testing.Main exits without running main's defers
	}
	os.Args = os.Args[:1] // testing.Main parses only its own flags
	testing.Main(func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) },
		[]testing.InternalTest{{Name: "TestGym", F: serve}}, nil, nil)
}
