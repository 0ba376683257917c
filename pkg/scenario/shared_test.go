package scenario

import (
	"math"
	"strings"
	"testing"
	"time"
)

// sharedJSON is a valid scenario with a bottleneck, cross traffic and an
// outage process; the tests below break one field at a time.
const sharedJSON = `{
  "name": "s",
  "description": "test",
  "paths": [
    {"up": {"rate_bps": 1e9, "delay": "5ms"}, "down": {"rate_bps": 1e9, "delay": "5ms"}},
    {"up": {"rate_bps": 1e9, "delay": "15ms"}, "down": {"rate_bps": 1e9, "delay": "15ms"}}
  ],
  "bottlenecks": [{"paths": [0, 1], "up": {"rate_bps": 1e7, "delay": "1ms"}, "down": {"rate_bps": 1e7, "delay": "1ms"}}],
  "cross_traffic": [
    {"kind": "bulk", "bottleneck": 0, "access_delay": "5ms"},
    {"kind": "onoff", "path": 1, "mean_on": "1s", "mean_off": "2s", "cbr_rate_bps": 2e6, "start": "1s", "stop": "9s"}
  ],
  "ranges": {"paths": [{"outage_process": {"mean_gap": "3s", "min_len": "1s", "max_len": "2s"}}]},
  "bytes": 1000,
  "duration": "10s"
}`

func TestParseShared(t *testing.T) {
	s, err := Parse(strings.NewReader(sharedJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Bottlenecks) != 1 || len(s.Cross) != 2 || *s.Cross[1].Path != 1 || s.Cross[0].AccessDelay.D() != 5*time.Millisecond {
		t.Errorf("parsed %+v / %+v", s.Bottlenecks, s.Cross)
	}
	links, err := s.EmuShared()
	if err != nil || len(links) != 1 || links[0].Down.RateBps != 1e7 || len(links[0].Paths) != 2 {
		t.Errorf("EmuShared = %+v, %v", links, err)
	}
}

// Errors in the new fields name the field by its JSON path.
func TestParseSharedBad(t *testing.T) {
	for _, tt := range []struct{ old, new, want string }{
		{`"paths": [0, 1]`, `"paths": [0, 2]`, "bottlenecks[0].paths[1]: 2 is not a path index"},
		{`"paths": [0, 1]`, `"paths": [1, 1]`, "bottlenecks[0].paths[1]: path 1 is listed twice"},
		{`"paths": [0, 1]`, `"paths": []`, "bottlenecks[0].paths: at least one path"},
		{`"down": {"rate_bps": 1e7, "delay": "1ms"}`, `"down": {"rate_bps": 1e7, "delay": "1ms", "loss": 2}`, "bottlenecks[0].down.loss: 2 outside [0,1]"},
		{`"kind": "bulk"`, `"kind": "tcp"`, `cross_traffic[0].kind: "tcp" must be`},
		{`"kind": "bulk", "bottleneck": 0`, `"kind": "bulk", "bottleneck": 0, "mean_on": "1s"`, "cross_traffic[0].kind: a bulk flow takes no"},
		{`"kind": "bulk", "bottleneck": 0`, `"kind": "bulk"`, "cross_traffic[0]: set exactly one of path and bottleneck"},
		{`"kind": "bulk", "bottleneck": 0`, `"kind": "bulk", "bottleneck": 0, "path": 0`, "cross_traffic[0]: set exactly one"},
		{`"bottleneck": 0`, `"bottleneck": 1`, "cross_traffic[0].bottleneck: 1 is not a bottleneck index"},
		{`"path": 1`, `"path": 5`, "cross_traffic[1].path: 5 is not a path index"},
		{`"mean_on": "1s"`, `"mean_on": "0s"`, "cross_traffic[1].mean_on: 0s must be > 0"},
		{`"mean_off": "2s"`, `"mean_off": "-2s"`, "cross_traffic[1].mean_off: -2s must be > 0"},
		{`"cbr_rate_bps": 2e6`, `"cbr_rate_bps": -1`, "cross_traffic[1].cbr_rate_bps: -1 must be >= 0"},
		{`"stop": "9s"`, `"stop": "11s"`, "cross_traffic[1].stop: 11s is beyond the scenario duration 10s"},
		{`"stop": "9s"`, `"stop": "500ms"`, "cross_traffic[1].stop: 500ms must be after start 1s"},
		{`"start": "1s"`, `"start": "10s"`, "cross_traffic[1].start: 10s is not before"},
		{`"access_delay": "5ms"`, `"access_delay": "5"`, "cross_traffic[0].access_delay: \"5\" is not a duration"},
		{`"mean_gap": "3s"`, `"mean_gap": "0s"`, "ranges.paths[0].outage_process.mean_gap: 0s must be > 0"},
		{`"min_len": "1s", "max_len": "2s"`, `"min_len": "3s", "max_len": "2s"`, "ranges.paths[0].outage_process: lengths [3s, 2s]"},
		{`"max_len": "2s"}`, `"max_len": "2s", "offset": "-1s"}`, "ranges.paths[0].outage_process.offset: -1s must be >= 0"},
		{`"max_len": "2s"}`, `"max_len": "2s", "mean_len": "2s"}`, "ranges.paths[0].outage_process.mean_len: unknown field"},
		{`{"up": {"rate_bps": 1e9, "delay": "5ms"}, "down": {"rate_bps": 1e9, "delay": "5ms"}}`,
			`{"up": {"rate_bps": 1e9, "delay": "5ms", "outages": [{"start": "1s", "end": "2s"}]}, "down": {"rate_bps": 1e9, "delay": "5ms"}}`,
			"ranges.paths[0].outage_process: the path already has outage windows"},
	} {
		in := strings.Replace(sharedJSON, tt.old, tt.new, 1)
		if in == sharedJSON {
			t.Fatalf("replacement %q not found", tt.old)
		}
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s → %s: Parse error = %v, want it to contain %q", tt.old, tt.new, err, tt.want)
		}
	}
}

// The outage process gives each seed its own windows, the same ones every
// time, on both directions; lengths stay in [min_len, max_len], nothing
// starts before the offset, and the gaps average the mean.
func TestOutageProcess(t *testing.T) {
	s := Scenario{
		Name: "op", Bytes: 1, Duration: sec(10000),
		Paths: []PathSpec{sym("a", link(10, 5, 0)), sym("b", link(10, 5, 0))},
		Ranges: &Ranges{Paths: []PathRanges{{
			Outages: &OutageProcess{MeanGap: sec(15), MinLen: sec(3), MaxLen: sec(6), Offset: sec(5)},
		}}},
	}
	r1, err := s.Resolve(1)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.Resolve(1)
	r2, _ := s.Resolve(2)
	w := r1.Paths[0].Down.Outages
	if len(w) < 300 {
		t.Fatalf("%d outages in 10000 s, want about 10000/19.5 = 513", len(w))
	}
	if !equalWindows(w, again.Paths[0].Down.Outages) || !equalWindows(w, r1.Paths[0].Up.Outages) {
		t.Error("the same seed or the other direction gave other windows")
	}
	if equalWindows(w, r2.Paths[0].Down.Outages) {
		t.Error("seeds 1 and 2 gave the same windows")
	}
	if len(r1.Paths[1].Down.Outages) != 0 {
		t.Error("path 1 has no process but got outages")
	}
	if w[0].Start < sec(5) {
		t.Errorf("first outage at %v, before the 5 s offset", w[0].Start)
	}
	var gaps float64
	prevEnd := sec(5)
	for i, x := range w {
		if n := x.End - x.Start; (n < sec(3) || n > sec(6)) && i < len(w)-1 {
			t.Errorf("outage %d lasts %v, want in [3s, 6s]", i, n)
		}
		gaps += (x.Start - prevEnd).Seconds()
		prevEnd = x.End
	}
	// The mean of n exponential gaps has standard deviation mean/sqrt(n).
	mean := gaps / float64(len(w))
	if math.Abs(mean-15) > 4*15/math.Sqrt(float64(len(w))) {
		t.Errorf("mean gap %.2f s, want 15 s within 4 standard errors", mean)
	}
	if err := r1.Validate(); err != nil {
		t.Errorf("resolved scenario: %v", err)
	}
}

func equalWindows(a, b []Window) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A shared bottleneck caps the capacity of the paths behind it, and there
// is no FCT bound for such a scenario.
func TestSharedCapacityNoBound(t *testing.T) {
	s, err := Get("rfc6356-shared")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CapacityBps(); got != 20e6 {
		t.Errorf("CapacityBps = %v, want the bottleneck's 20e6", got)
	}
	if got := s.FCTLowerBound(); got != time.Duration(math.MaxInt64) {
		t.Errorf("FCTLowerBound = %v, want none (the largest Duration)", got)
	}
	tt, bps := s.CapacityCurve()
	if len(tt) != 2 || bps[0] != 20e6 || tt[1] != 30 {
		t.Errorf("CapacityCurve = %v, %v", tt, bps)
	}
	p1, _ := Get("olia-p1-upgrade")
	if got := p1.CapacityBps(); got != 20e6 {
		t.Errorf("olia-p1-upgrade CapacityBps = %v, want 10e6 private + 10e6 shared", got)
	}
}

// Short scales cross-traffic times and the outage process with the rest of
// the timeline.
func TestShortShared(t *testing.T) {
	s, err := Parse(strings.NewReader(sharedJSON))
	if err != nil {
		t.Fatal(err)
	}
	sh := Short(s, 0, sec(5))
	x, o := sh.Cross[1], sh.Ranges.Paths[0].Outages
	if x.Start != sec(0.5) || x.Stop != sec(4.5) || x.MeanOn != sec(0.5) || x.MeanOff != sec(1) {
		t.Errorf("short cross %+v", x)
	}
	if o.MeanGap != sec(1.5) || o.MinLen != sec(0.5) || o.MaxLen != sec(1) {
		t.Errorf("short outage process %+v", o)
	}
	if err := sh.Validate(); err != nil {
		t.Error(err)
	}
}
