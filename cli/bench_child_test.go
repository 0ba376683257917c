package cli

import (
	"os"
	"strings"
	"testing"

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

// The children run with GOMAXPROCS=1 unless the user chose a value.
func TestChildEnviron(t *testing.T) {
	env := childEnviron([]string{"HOME=/root"}, "/tmp/jobs-0.json")
	want := []string{"HOME=/root", childEnv + "=/tmp/jobs-0.json", "GOMAXPROCS=1"}
	if strings.Join(env, " ") != strings.Join(want, " ") {
		t.Errorf("env %q, want %q", env, want)
	}
	env = childEnviron([]string{"GOMAXPROCS=4"}, "f")
	if strings.Join(env, " ") != "GOMAXPROCS=4 "+childEnv+"=f" {
		t.Errorf("the user's GOMAXPROCS was not kept: %q", env)
	}
}
