package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The README's program runs: the whole download arrives, and both paths
// appear in the client's statistics.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	run(&out, 1<<20)
	if !strings.HasPrefix(out.String(), "received 1048576 bytes\n") || strings.Count(out.String(), "\npath ") != 2 {
		t.Errorf("output:\n%s", out.String())
	}
}

// The README shows this program; the two must not drift apart.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "package main")
	if !strings.Contains(string(readme), "```go\npackage main"+code+"```\n") {
		t.Error("README's session program differs from examples/twopaths/main.go (from `package main` on)")
	}
}
