package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs main instead of the tests when the test binary is
// re-executed as the client (MPQ_CLIENT_MAIN=1).
func TestMain(m *testing.M) {
	if os.Getenv("MPQ_CLIENT_MAIN") == "1" {
		os.Args = append([]string{"mpquic-client"}, strings.Fields(os.Getenv("MPQ_CLIENT_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The process's exit statuses: -h 0, a bad flag 2, and an unknown
// scheduler 2 with the registered names (the blank import's).
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "usage: mpquic-client"},
		{[]string{"-frobnicate"}, 2, "flag provided but not defined"},
		{[]string{"-addr", "127.0.0.1:1", "-ca", "x", "-scheduler", "fastest", "get", "f"}, 2, "blest"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MPQ_CLIENT_MAIN=1", "MPQ_CLIENT_ARGS="+strings.Join(c.args, " "))
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("%q: exit %d, output %s; want %d and %q", c.args, code, out, c.code, c.want)
		}
	}
}
