package scenario

import (
	"errors"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/scenarios from Library")

func TestLibraryValid(t *testing.T) {
	lib := Library()
	seen := map[string]bool{}
	for _, s := range lib {
		if seen[s.Name] {
			t.Errorf("duplicate name %q", s.Name)
		}
		seen[s.Name] = true
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if s.Description == "" {
			t.Errorf("%s: no description", s.Name)
		}
		// A paper whose full text we did not have is cited by its abstract.
		if s.Paper != "" && !strings.Contains(s.Description, "§") && !strings.Contains(s.Description, "Table") && !strings.Contains(s.Description, "abstract") {
			t.Errorf("%s: description does not cite a section, table or abstract: %q", s.Name, s.Description)
		}
		vs, err := s.Expand()
		if err != nil {
			t.Errorf("%s: Expand: %v", s.Name, err)
			continue
		}
		for _, v := range vs {
			r, err := v.Resolve(1)
			if err != nil {
				t.Errorf("%s: Resolve: %v", v.Name, err)
				continue
			}
			if c := r.CapacityBps(); !(c > 0) {
				t.Errorf("%s: CapacityBps = %v, want > 0", v.Name, c)
			}
			// Shared bottlenecks have no bound (see shared.go).
			if b := r.FCTLowerBound(); b <= 0 || (b == time.Duration(1<<63-1)) != (len(r.Bottlenecks) > 0) {
				t.Errorf("%s: FCTLowerBound = %v", v.Name, b)
			}
			if got, err := Lookup(v.Name); err != nil || got.Name != v.Name {
				t.Errorf("Lookup(%q) = %q, %v", v.Name, got.Name, err)
			}
		}
	}
	for _, name := range []string{
		Default, "wifi-lte", "wifi-walk-dropout", "rtt10x-256k", "wifi-handoff", "wifi-lte-drive", "wifi-lte-drive-wifi-only", "wifi-lte-drive-lte-only",
		"prs-rtt-ratio-1", "prs-rtt-ratio-4", "prs-rtt-ratio-8", "prs-rtt-ratio-10",
		"prs-loss-0", "prs-loss-0.5", "prs-loss-1", "prs-loss-3", "prs-loss-5",
		"prs-mixed-0.5-1", "prs-mixed-1-3", "prs-mixed-3-5",
		"llhd-s1", "llhd-s2", "llhd-s3", "llhd-comprehensive",
		"fprs-wifi-wifi", "fprs-wifi-lte", "fprs-wifi-ethernet", "fprs-size-sweep",
		"edar-setting-i", "edar-setting-ii", "edar-setting-iii", "edar-setting-iv", "edar-setting-v",
		"edar-handoff", "edar-fig10-delay", "edar-fig11-loss",
	} {
		if !seen[name] {
			t.Errorf("library lacks %q", name)
		}
	}
}

// PRS-MPTCP §5: "we set variable RTT ratios (RTT_s to RTT_f) at 1, 4, 8, and
// 10, where the subflows experience a constant loss rate of 1 %".
func TestPRSRatios(t *testing.T) {
	for _, ratio := range []int{1, 4, 8, 10} {
		s, err := Get("prs-rtt-ratio-" + map[int]string{1: "1", 4: "4", 8: "8", 10: "10"}[ratio])
		if err != nil {
			t.Fatal(err)
		}
		fast, slow := s.Paths[0].RTT(), s.Paths[1].RTT()
		if fast != 10*time.Millisecond || slow != time.Duration(ratio)*fast {
			t.Errorf("ratio %d: RTTs %v, %v", ratio, fast, slow)
		}
		if s.Paths[0].Down.Loss != 0.01 || s.Paths[1].Up.Loss != 0.01 || s.Bytes != 10*MB || s.Paths[0].Down.RateBps != 100e6 {
			t.Errorf("ratio %d: %+v", ratio, s)
		}
	}
}

// EdAR §VI-A Table II: "receive buffer (KB) 128 128 128 256 64".
func TestEdARBuffers(t *testing.T) {
	for id, kb := range map[string]int64{"i": 128, "ii": 128, "iii": 128, "iv": 256, "v": 64} {
		s, err := Get("edar-setting-" + id)
		if err != nil {
			t.Fatal(err)
		}
		if s.ReceiveBuffer != kb*KB {
			t.Errorf("setting %s: receive buffer %d, want %d KB", id, s.ReceiveBuffer, kb)
		}
	}
}

func TestResolveDeterministic(t *testing.T) {
	s, _ := Get("edar-setting-ii")
	a, err := s.Resolve(7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Resolve(7)
	c, _ := s.Resolve(8)
	if !reflect.DeepEqual(a, b) {
		t.Error("Resolve(7) differs between calls")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("Resolve(7) == Resolve(8)")
	}
	if a.Ranges != nil {
		t.Error("resolved scenario keeps its ranges")
	}
	// Table II setting ii, path 2: bandwidth 5-10 Mbps, delay 50-100 ms,
	// loss 0.1-1.0 %, handoff enabled.
	p2 := a.Paths[1].Down
	if p2.RateBps < 5e6 || p2.RateBps > 10e6 || p2.Delay < ms(50) || p2.Delay > ms(100) || p2.Loss < 0.001 || p2.Loss > 0.01 {
		t.Errorf("path 2 outside Table II ranges: %+v", p2)
	}
	if a.Paths[1].Up.RateBps != p2.RateBps {
		t.Error("directions drew different rates")
	}
	if len(p2.Handoffs) == 0 || len(a.Paths[0].Down.Handoffs) != 0 {
		t.Errorf("handoffs: path 2 %v, path 1 %v", p2.Handoffs, a.Paths[0].Down.Handoffs)
	}
	if a.Bytes < 10*MB || a.Bytes > 100*MB {
		t.Errorf("bytes %d outside 10-100 MB", a.Bytes)
	}
	// The library itself is untouched.
	if s2, _ := Get("edar-setting-ii"); s2.Ranges == nil {
		t.Error("Resolve changed the library")
	}
}

func TestResolveEvery(t *testing.T) {
	s, _ := Get("llhd-comprehensive")
	r, err := s.Resolve(3)
	if err != nil {
		t.Fatal(err)
	}
	// 300 s redrawn every 10 s: 29 steps after the initial draw.
	if n := len(r.Paths[0].Down.Schedule); n != 29 {
		t.Errorf("%d schedule steps, want 29", n)
	}
	for _, st := range r.Paths[1].Down.Schedule {
		if *st.RateBps < 10e6 || *st.RateBps > 30e6 || *st.Loss < 0.02 || *st.Loss > 0.10 || *st.Delay < ms(10) || *st.Delay > ms(30) {
			t.Errorf("step outside LLHD ranges: %+v", st)
		}
	}
}

func TestExpand(t *testing.T) {
	s, _ := Get("edar-fig11-loss")
	vs, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 6 || vs[0].Name != "edar-fig11-loss@loss=0.01%" || vs[5].Paths[1].Down.Loss != 0.03 || vs[5].Paths[0].Down.Loss != 0.001 {
		t.Errorf("variants: %v ...", vs[0].Name)
	}
	f, _ := Get("fprs-size-sweep")
	fv, _ := f.Expand()
	if fv[0].Name != "fprs-size-sweep@bytes=4KB" || fv[4].Bytes != 256*MB {
		t.Errorf("fprs variants %q %d", fv[0].Name, fv[4].Bytes)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, s := range Library() {
		b, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.Name, err, b)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("%s: round trip changed the scenario", s.Name)
		}
	}
}

const good = `{
  "name": "t",
  "description": "test",
  "paths": [
    {"up": {"rate_bps": 1e7, "delay": "5ms"}, "down": {"rate_bps": 1e7, "delay": "5ms"}},
    {"up": {"rate_bps": 1e7, "delay": "5ms"}, "down": {"rate_bps": 1e7, "delay": "5ms", "loss": 0.01}}
  ],
  "bytes": 1000,
  "duration": "10s"
}`

func TestParseGood(t *testing.T) {
	s, err := Parse(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Paths[1].Down.Delay.D() != 5*time.Millisecond || s.Paths[1].Down.Loss != 0.01 {
		t.Errorf("parsed %+v", s.Paths[1].Down)
	}
}

func TestParseBad(t *testing.T) {
	tests := []struct {
		name     string
		old, new string // replace old with new in good
		want     string // the error must contain this
	}{
		{"unknown field", `"bytes": 1000`, `"bytes": 1000, "bites": 3`, "bites: unknown field"},
		{"unknown nested field", `"loss": 0.01`, `"los": 0.01`, "paths[1].down.los: unknown field"},
		{"loss above 1", `"loss": 0.01`, `"loss": 1.5`, "paths[1].down.loss: 1.5 outside [0,1]"},
		{"negative loss", `"loss": 0.01`, `"loss": -0.1`, "paths[1].down.loss: -0.1 outside [0,1]"},
		{"negative rate", `"down": {"rate_bps": 1e7, "delay": "5ms", "loss"`, `"down": {"rate_bps": -5, "delay": "5ms", "loss"`, "paths[1].down.rate_bps: -5 must be > 0"},
		{"numeric delay", `"down": {"rate_bps": 1e7, "delay": "5ms", "loss"`, `"down": {"rate_bps": 1e7, "delay": 5, "loss"`, `paths[1].down.delay: 5 is not a duration string`},
		{"bad duration", `"duration": "10s"`, `"duration": "10 parsecs"`, `duration: "10 parsecs" is not a duration`},
		{"string rate", `"down": {"rate_bps": 1e7, "delay": "5ms", "loss"`, `"down": {"rate_bps": "fast", "delay": "5ms", "loss"`, `paths[1].down.rate_bps: want a number`},
		{"zero bytes", `"bytes": 1000`, `"bytes": 0`, "bytes: 0 must be > 0"},
		{"inverted window", `"loss": 0.01`, `"loss": 0.01, "outages": [{"start": "2s", "end": "1s"}]`, "paths[1].down.outages[0].end: 1s must be after start 2s"},
		{"overlapping windows", `"loss": 0.01`, `"loss": 0.01, "outages": [{"start": "1s", "end": "3s"}, {"start": "2s", "end": "4s"}]`, "paths[1].down.outages[1].start: 2s overlaps"},
		{"window beyond duration", `"loss": 0.01`, `"loss": 0.01, "handoffs": [{"start": "9s", "end": "11s"}]`, "paths[1].down.handoffs[0].end: 11s is beyond the scenario duration 10s"},
		{"unsorted schedule", `"loss": 0.01`, `"loss": 0.01, "schedule": [{"at": "3s", "loss": 0.1}, {"at": "2s", "loss": 0.2}]`, "paths[1].down.schedule[1].at: 2s is before the end of schedule[0]"},
		{"overlapping ramp", `"loss": 0.01`, `"loss": 0.01, "schedule": [{"at": "1s", "ramp": "3s", "loss": 0.1}, {"at": "2s", "loss": 0.2}]`, "paths[1].down.schedule[1].at: 2s is before the end of schedule[0] (4s)"},
		{"step beyond duration", `"loss": 0.01`, `"loss": 0.01, "schedule": [{"at": "9s", "ramp": "2s", "loss": 0.1}]`, "paths[1].down.schedule[0].at: step ends at 11s, beyond the scenario duration 10s"},
		{"empty step", `"loss": 0.01`, `"loss": 0.01, "schedule": [{"at": "1s"}]`, "paths[1].down.schedule[0]: sets nothing"},
		{"step loss", `"loss": 0.01`, `"loss": 0.01, "schedule": [{"at": "1s", "loss": 2}]`, "paths[1].down.schedule[0].loss: 2 outside [0,1]"},
		{"GE and loss", `"loss": 0.01`, `"loss": 0.01, "gilbert_elliott": {"p_good_bad": 0.1, "p_bad_good": 0.5, "loss_good": 0, "loss_bad": 1}`, "paths[1].down.loss: 0.01 must be 0 when gilbert_elliott is set"},
		{"GE probability", `"loss": 0.01`, `"gilbert_elliott": {"p_good_bad": 1.2, "p_bad_good": 0.5, "loss_good": 0, "loss_bad": 1}`, "paths[1].down.gilbert_elliott.p_good_bad: 1.2 outside [0,1]"},
		{"inverted range", `"bytes": 1000`, `"bytes": 1000, "ranges": {"paths": [{}, {"loss": {"min": 0.05, "max": 0.01}}]}`, "ranges.paths[1].loss: max 0.01 < min 0.05"},
		{"range loss", `"bytes": 1000`, `"bytes": 1000, "ranges": {"paths": [{"loss": {"min": 0.05, "max": 1.5}}]}`, "ranges.paths[0].loss.max: 1.5 outside [0,1]"},
		{"step in handoff", `"loss": 0.01`, `"loss": 0.01, "handoffs": [{"start": "2s", "end": "4s"}], "schedule": [{"at": "3s", "loss": 0.1}]`, "paths[1].down.schedule[0].at: step at 3s (ramp 0s) falls in handoffs[0]"},
		{"two sweeps", `"bytes": 1000`, `"bytes": 1000, "sweep": {"path": 1, "loss": [0.1], "bytes": [5]}`, "sweep: exactly one of"},
		{"sweep path", `"bytes": 1000`, `"bytes": 1000, "sweep": {"path": 2, "loss": [0.1]}`, "sweep.path: 2 is not a path index"},
		{"trailing data", `"duration": "10s"
}`, `"duration": "10s"
} {}`, "trailing data"},
		{"all backup", `{"up": {"rate_bps": 1e7, "delay": "5ms"}, "down": {"rate_bps": 1e7, "delay": "5ms"}},`, `{"backup": true, "up": {"rate_bps": 1e7, "delay": "5ms"}, "down": {"rate_bps": 1e7, "delay": "5ms"}},`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Replace(good, tt.old, tt.new, 1)
			if in == good {
				t.Fatalf("replacement %q not found", tt.old)
			}
			_, err := Parse(strings.NewReader(in))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
			var fe *FieldError
			if tt.name != "trailing data" && !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FieldError", err)
			}
		})
	}
}

func TestAllBackupRejected(t *testing.T) {
	s, _ := Get(Default)
	s.Paths[0].Backup, s.Paths[1].Backup = true, true
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "paths: every path is a backup") {
		t.Errorf("Validate = %v", err)
	}
}

func TestLibraryFiles(t *testing.T) {
	if *update {
		if err := WriteLibrary(LibraryDir); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckLibrary(LibraryDir); err != nil {
		t.Fatalf("%v\nrun: go test ./pkg/scenario -run TestLibraryFiles -update", err)
	}
	// And the files load back as the library.
	for _, s := range Library() {
		got, err := Load(LibraryDir + "/" + s.Name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("%s: file differs from library", s.Name)
		}
	}
}

// Issue 20, item 2: "make bench runs a small matrix where the schedulers'
// rules matter". The Makefile's list is BenchMatrix, and every name in it is
// a library scenario.
func TestBenchMatrix(t *testing.T) {
	for _, n := range strings.Split(BenchMatrix, ",") {
		if _, err := Get(n); err != nil {
			t.Error(err)
		}
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "\nBENCH_SCENARIOS := "+BenchMatrix+"\n") {
		t.Errorf("the Makefile's BENCH_SCENARIOS is not %q", BenchMatrix)
	}
}
