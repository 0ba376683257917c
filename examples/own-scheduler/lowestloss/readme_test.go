package lowestloss

import (
	"os"
	"strings"
	"testing"
)

// The README shows this package's code; the two must not drift apart. The
// README's first Go block under "Writing your own scheduler" must equal
// lowestloss.go without its package doc comment.
func TestREADMEShowsThisCode(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Skipf("README not found (module used outside the repository): %v", err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Writing your own scheduler")
	if !ok {
		t.Fatal(`README has no "Writing your own scheduler" section`)
	}
	_, block, ok := strings.Cut(sec, "```go\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("no Go block in the section")
	}
	src, err := os.ReadFile("lowestloss.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "package lowestloss")
	if block != "package lowestloss"+code {
		t.Errorf("README's code and lowestloss.go differ:\nREADME:\n%s\nlowestloss.go:\n%s", block, "package lowestloss"+code)
	}
}
