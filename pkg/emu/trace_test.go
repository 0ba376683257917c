package emu

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TracesEnv names a directory of Mahimahi traces for the tests that replay
// measured cellular traces (ATT-LTE-driving-2016.down, TMobile-LTE-short.down,
// Verizon-LTE-short.down). Without it they look in ../shared/traces beside
// the repository. The traces are public measurement data (the Mahimahi
// repository's traces/, recorded with Saturator, Winstein et al., NSDI 2013)
// that the repository does not redistribute; its own synthetic traces are in
// pkg/scenario/traces.
const TracesEnv = "MPQ_TRACES_DIR"

// sharedTraces is the directory of measured traces: $MPQ_TRACES_DIR, else
// ../shared/traces relative to the repository root (found from this file,
// whatever the working directory).
func sharedTraces() string {
	if d := os.Getenv(TracesEnv); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "traces")
}

func loadShared(t *testing.T, name string) *Trace {
	t.Helper()
	path := filepath.Join(sharedTraces(), name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("measured trace %s not found: set %s to a directory holding the Mahimahi cellular traces "+
			"(https://github.com/ravinet/mahimahi, traces/) to run this test", path, TracesEnv)
	}
	tr, err := LoadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestParseTraceErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "no timestamps"},
		{"1\n2\nx\n", "line 3"},
		{"1\n-2\n", "line 2"},
		{"5\n3\n", "line 2: timestamp 3 ms is before the previous one (5 ms)"},
		{"0\n0\n", "period would be zero"},
	} {
		_, err := ParseTrace(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTrace(%q) error = %v, want it to contain %q", c.in, err, c.want)
		}
	}
	tr, err := ParseTrace(strings.NewReader("1\n"))
	if err != nil {
		t.Fatal(err)
	}
	// "a file that contains just "1" [...] one packet per millisecond (12 Mbps)" (README.mahimahi)
	if got := tr.MeanRateBps(); got != 12e6 {
		t.Errorf(`trace "1": MeanRateBps = %v, want 12e6`, got)
	}
}

func TestLoadSharedTraces(t *testing.T) {
	for _, name := range []string{"ATT-LTE-driving-2016.down", "TMobile-LTE-short.down", "Verizon-LTE-short.down"} {
		tr := loadShared(t, name)
		if tr.Len() == 0 || tr.Period() < time.Minute {
			t.Errorf("%s: %d opportunities over %v", name, tr.Len(), tr.Period())
		}
		within(t, name+" mean rate (bit/s)", tr.MeanRateBps(), 0.5e6, 50e6)
	}
}

// opportunities counts trace opportunities in [from, to).
func opportunities(tr *Trace, from, to time.Duration) int {
	return int(tr.firstAtOrAfter(to) - tr.firstAtOrAfter(from))
}

// replay saturates a trace-driven link with 1472-byte payloads (1500 bytes
// on the wire) for dur and returns the delivered wire rate over [skip, dur)
// and the trace's capacity over the same window, bits/s.
func replay(t *testing.T, tr *Trace, dur, skip time.Duration) (got, want float64) {
	// Offer more than the busiest millisecond of the trace can carry.
	perMs := 1
	for i, run := 1, 1; i < len(tr.ms); i++ {
		if tr.ms[i] == tr.ms[i-1] {
			run++
			perMs = max(perMs, run)
		} else {
			run = 1
		}
	}
	synctest.Test(t, func(t *testing.T) {
		p := newPair(t, 1, LinkConfig{Trace: tr, Delay: 10 * time.Millisecond, QueueBytes: 1 << 20}, LinkConfig{})
		seq := uint32(0)
		for range dur / time.Millisecond {
			for range perMs + 1 {
				p.send(seq, TraceMTU-Overhead)
				seq++
			}
			time.Sleep(time.Millisecond)
		}
		recv := p.close(0)
		got = wireRate(recv, skip+10*time.Millisecond, dur+10*time.Millisecond)
	})
	want = float64(opportunities(tr, skip, dur)*TraceMTU*8) / (dur - skip).Seconds()
	return got, want
}

// Replaying a real LTE trace delivers what the trace offers.
func TestTraceReplayLTE(t *testing.T) {
	tr := loadShared(t, "Verizon-LTE-short.down")
	got, want := replay(t, tr, 20*time.Second, time.Second)
	t.Logf("Verizon-LTE-short: delivered %.2f Mbit/s, trace offers %.2f Mbit/s (whole-trace mean %.2f)", got/1e6, want/1e6, tr.MeanRateBps()/1e6)
	within(t, "replay rate / trace rate", got/want, 0.97, 1.03)
}

// A synthetic trace replayed over a whole period delivers its mean rate.
func TestSyntheticTraceReplay(t *testing.T) {
	for _, kind := range []string{TraceConstant, TraceLTE, TraceWiFiWalk} {
		tr := SyntheticTrace(3, 8e6, 10*time.Second, kind)
		within(t, kind+" MeanRateBps", tr.MeanRateBps(), 0.99*8e6, 1.01*8e6)
		if tr.Period() != 10*time.Second {
			t.Errorf("%s: period %v, want 10s", kind, tr.Period())
		}
		got, _ := replay(t, tr, 10*time.Second, 0)
		within(t, kind+" replay rate / mean rate", got/tr.MeanRateBps(), 0.97, 1.03)
	}
}

func TestSyntheticTraceRoundTrip(t *testing.T) {
	tr := SyntheticTrace(9, 20e6, 5*time.Second, TraceLTE)
	var buf bytes.Buffer
	if _, err := tr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ParseTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.ms, tr.ms) || back.period != tr.period {
		t.Error("WriteTo then ParseTrace changed the trace")
	}
	again := SyntheticTrace(9, 20e6, 5*time.Second, TraceLTE)
	if !slices.Equal(again.ms, tr.ms) {
		t.Error("same seed, different synthetic traces")
	}
	// LTE-like: the per-second capacity varies.
	lo, hi := 1e18, 0.0
	for s := range 5 {
		r := float64(opportunities(tr, time.Duration(s)*time.Second, time.Duration(s+1)*time.Second))
		lo, hi = min(lo, r), max(hi, r)
	}
	if hi < 1.3*lo {
		t.Errorf("LTE trace per-second opportunities span [%v, %v]: too flat", lo, hi)
	}
}
