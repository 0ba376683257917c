package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs main instead of the tests when the test binary is
// re-executed as the server (MPQ_SERVER_MAIN=1).
func TestMain(m *testing.M) {
	if os.Getenv("MPQ_SERVER_MAIN") == "1" {
		os.Args = append([]string{"mpquic-server"}, strings.Fields(os.Getenv("MPQ_SERVER_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func server(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MPQ_SERVER_MAIN=1", "MPQ_SERVER_ARGS="+strings.Join(args, " "))
	return cmd
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// The process's exit statuses: -h 0, a bad flag 2, and an unknown
// scheduler 2 with the registered names (the blank import's).
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "usage: mpquic-server"},
		{[]string{"-frobnicate"}, 2, "flag provided but not defined"},
		{[]string{"-scheduler", "fastest", "-dev-cert", t.TempDir()}, 2, "blest"},
	} {
		out, err := server(c.args...).CombinedOutput()
		if exitCode(err) != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("%q: exit %d, output %s; want %d and %q", c.args, exitCode(err), out, c.code, c.want)
		}
	}
}

// -dev-cert writes cert.pem; SIGINT stops the server with status 0.
func TestDevCertAndSIGINT(t *testing.T) {
	dir := t.TempDir()
	cmd := server("-addr", "127.0.0.1:0", "-dir", dir, "-dev-cert", dir, "-h3-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		if strings.Contains(sc.Text(), "serving") {
			break
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cert.pem")); err != nil {
		t.Errorf("cert.pem: %v", err)
	}
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	if err := cmd.Wait(); exitCode(err) != 0 {
		t.Errorf("after SIGINT: %v", err)
	}
}
