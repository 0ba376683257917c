package scenario

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Every library scenario, resolved and expanded, converts to link
// configurations the emulator accepts.
func TestEmuLibraryValid(t *testing.T) {
	for _, s := range Library() {
		vs, err := s.Expand()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			r, err := v.Resolve(2)
			if err != nil {
				t.Fatal(err)
			}
			paths, backup, err := r.EmuPaths()
			if err != nil {
				t.Fatalf("%s: %v", r.Name, err)
			}
			if len(paths) != len(r.Paths) || len(backup) != len(r.Paths) {
				t.Fatalf("%s: %d paths", r.Name, len(paths))
			}
			for i, p := range paths {
				for _, c := range []emu.LinkConfig{p.Up, p.Down} {
					if err := c.Validate(); err != nil {
						t.Errorf("%s: path %d: %v", r.Name, i, err)
					}
				}
			}
		}
	}
}

func TestEmuDefault(t *testing.T) {
	s, _ := Get(Default)
	p := s.Paths[1].Emu()
	if p.Down.RateBps != 10e6 || p.Down.Delay != 15*time.Millisecond || p.Up.Delay != 15*time.Millisecond || p.Down.Loss != 0 {
		t.Errorf("slow path = %+v", p.Down)
	}
}

// EdAR Table III: path 2 "suffers handoff at 20-40s and 60-80s"; each window
// becomes emu.Handoff's three steps.
func TestEmuHandoff(t *testing.T) {
	s, _ := Get("edar-handoff")
	d := s.Paths[1].Emu().Down
	if len(d.Schedule) != 6 {
		t.Fatalf("%d steps, want 6: %+v", len(d.Schedule), d.Schedule)
	}
	first := d.Schedule[0]
	if first.At != 20*time.Second || first.Ramp != 10*time.Second || first.Set&emu.FieldRate == 0 || first.RateBps != 1e6 {
		t.Errorf("first step = %+v", first)
	}
	if back := d.Schedule[2]; back.At != 40*time.Second || back.RateBps != 10e6 || back.Delay != 50*time.Millisecond || back.Loss != 0.001 {
		t.Errorf("recovery step = %+v", back)
	}
}

func TestEmuSchedule(t *testing.T) {
	s, _ := Get("wifi-walk-dropout")
	d := s.Paths[0].Emu().Down
	if len(d.Outages) != 1 || d.Outages[0] != (emu.Window{Start: 8 * time.Second, End: 12 * time.Second}) {
		t.Errorf("outages = %v", d.Outages)
	}
	st := d.Schedule[0]
	if st.Set != emu.FieldRate|emu.FieldDelay|emu.FieldLoss || st.RateBps != 5e6 || st.Ramp != 4*time.Second {
		t.Errorf("step 0 = %+v", st)
	}
	w, _ := Get("wifi-lte")
	if g := w.Paths[0].Emu().Down.GE; g == nil || g.PBadGood != 0.25 {
		t.Errorf("GE = %+v", g)
	}
}

func TestEmuTrace(t *testing.T) {
	dir := t.TempDir()
	// One 1500-byte opportunity per ms: 12 Mbit/s.
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	os.WriteFile(filepath.Join(dir, "t.trace"), []byte(b.String()), 0o644)
	js := strings.Replace(good, `"down": {"rate_bps": 1e7, "delay": "5ms", "loss": 0.01}`,
		`"down": {"rate_bps": 1.2e7, "delay": "5ms", "trace": "t.trace"}`, 1)
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(js), 0o644)
	s, err := Load(filepath.Join(dir, "s.json"))
	if err != nil {
		t.Fatal(err)
	}
	paths, _, err := s.EmuPaths()
	if err != nil {
		t.Fatal(err)
	}
	if tr := paths[1].Down.Trace; tr == nil || tr.Len() != 100 || paths[1].Down.RateBps != 0 {
		t.Errorf("trace not loaded: %+v", paths[1].Down)
	}
	if r, err := TraceMeanRateBps(s.Paths[1].Down.Trace); err != nil || r != 12e6 {
		t.Errorf("TraceMeanRateBps = %v, %v; want 12e6", r, err)
	}
	s.Paths[1].Down.Trace = filepath.Join(dir, "missing.trace")
	if _, _, err := s.EmuPaths(); err == nil || !strings.Contains(err.Error(), "paths[1]: down") {
		t.Errorf("missing trace: %v", err)
	}
}
