package runner

import (
	"strings"
	"testing"
)

// The children run with GOMAXPROCS=1 unless the user chose a value.
func TestChildEnviron(t *testing.T) {
	env := childEnviron([]string{"HOME=/root"}, "/tmp/jobs-0.json")
	want := []string{"HOME=/root", ChildEnv + "=/tmp/jobs-0.json", "GOMAXPROCS=1"}
	if strings.Join(env, " ") != strings.Join(want, " ") {
		t.Errorf("env %q, want %q", env, want)
	}
	env = childEnviron([]string{"GOMAXPROCS=4"}, "f")
	if strings.Join(env, " ") != "GOMAXPROCS=4 "+ChildEnv+"=f" {
		t.Errorf("the user's GOMAXPROCS was not kept: %q", env)
	}
}
