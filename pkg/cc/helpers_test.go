package cc

import (
	"math"
	"testing"
	"time"
)

// seg is the segment size of the worked examples, in bytes.
const seg = 1000.0

// ms is n milliseconds.
func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// path is a coupled path of w bytes, rtt milliseconds and 1000-byte segments.
func path(w, rtt float64) Path { return Path{Window: w, RTT: ms(rtt), MSS: seg} }

// wantClose fails unless got is within a relative 1e-9 (or 1e-12 absolute)
// of want.
func wantClose(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 && math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// all is every rule, as the registry holds them.
func all(t testing.TB) []Coupling {
	t.Helper()
	var out []Coupling
	for _, n := range Names() {
		c, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}
