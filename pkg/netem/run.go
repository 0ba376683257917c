package netem

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// runner executes commands with explicit argument vectors (never a shell)
// and logs them.
type runner struct {
	log io.Writer // nil: silent
}

// run executes argv and returns its combined output; the error quotes the
// command and its output.
func (r runner) run(argv ...string) (string, error) {
	if r.log != nil {
		fmt.Fprintf(r.log, "+ %s\n", strings.Join(argv, " "))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// ns runs argv inside namespace ns with `ip netns exec`.
func (r runner) ns(ns string, argv ...string) (string, error) {
	return r.run(append([]string{"ip", "netns", "exec", ns}, argv...)...)
}

// all runs each command in turn and stops at the first error.
func (r runner) all(cmds ...[]string) error {
	for _, c := range cmds {
		if _, err := r.run(c...); err != nil {
			return err
		}
	}
	return nil
}
