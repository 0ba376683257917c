package netns

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/netem"
)

// rttOnly returns s with every path's delays scaled by c2s and s2c and its
// rates dropped, so that Verify judges only the RTT (no rate probes).
func rttOnly(s netem.Spec, c2s, s2c float64) netem.Spec {
	out := s
	out.Paths = nil
	for _, p := range s.Paths {
		up, down := p.Up(), p.Down()
		up.RateMbit, down.RateMbit = 0, 0
		up.DelayMs *= c2s
		down.DelayMs *= s2c
		out.Paths = append(out.Paths, netem.Path{Name: p.Name, C2S: &up, S2C: &down})
	}
	return out
}

// TestVerifyLoud checks on a real topology that the delay check passes the
// delay that was built and fails a spec that asks for none, for twice as
// much or for the delay on one direction only: the median judge tolerates
// queued pings without going quiet on a misconfiguration.
func TestVerifyLoud(t *testing.T) {
	requireNetns(t)
	bin := t.TempDir()
	build(t, bin, "mpq-delayd", "mpq-netns")
	s := twoPath("verify", 0)
	s.Prefix = "mpqvt"
	e := up(t, s, bin, "", "")

	var err error
	for try := 1; try <= 3; try++ { // a shared machine may spoil one check
		var cs []netem.PathCheck
		cs, err = netem.Verify(rttOnly(e.spec, 1, 1), e.opts, netem.VerifyOptions{})
		t.Logf("delay as built (try %d):\n%s", try, netem.FormatChecks(cs))
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the delay as built failed: %v", err)
	}

	for _, tc := range []struct {
		name     string
		c2s, s2c float64
	}{
		{"no delay", 0, 0},
		{"doubled delay", 2, 2},
		{"client→server delay only", 1, 0},
	} {
		cs, err := netem.Verify(rttOnly(e.spec, tc.c2s, tc.s2c), e.opts, netem.VerifyOptions{})
		t.Logf("spec with %s:\n%s", tc.name, netem.FormatChecks(cs))
		if err == nil {
			t.Errorf("spec with %s: verify passed, want a failure on every path", tc.name)
			continue
		}
		for p := 1; p <= len(s.Paths); p++ {
			if want := fmt.Sprintf("path %d: RTT median", p); !strings.Contains(err.Error(), want) {
				t.Errorf("spec with %s: error %q lacks %q", tc.name, err, want)
			}
		}
	}
}
