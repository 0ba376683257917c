package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The one-seed sample is the repeats plus the matrix's run of that seed; a
// failed repeat is left out; across seeds is the matrix alone.
func TestSpreads(t *testing.T) {
	main := runs("m", 10, 12, 14) // seeds 1, 2, 3
	reps := runs("m", 11, 9)      // seed 1 twice more (runs numbers seeds from 1)
	reps[1].Seed = 1
	bad := runs("m", 50)[0]
	bad.SHA256OK = false
	reps = append(reps, bad)
	sp := Spreads(main, reps)
	if len(sp) != 1 {
		t.Fatalf("%d spreads, want 1", len(sp))
	}
	s := sp[0]
	if s.OneSeed.N != 3 || math.Abs(s.OneSeed.Mean-10e6) > 1 || math.Abs(s.OneSeed.StdDev-1e6) > 1 {
		t.Errorf("one seed = %+v, want 3 runs of mean 10 and s.d. 1 Mbit/s", s.OneSeed)
	}
	if s.Seeds.N != 3 || math.Abs(s.Seeds.StdDev-2e6) > 1 {
		t.Errorf("across seeds = %+v, want 3 runs of s.d. 2 Mbit/s", s.Seeds)
	}
	if md := SpreadSection(sp); !strings.Contains(md, "0.50×") || !strings.Contains(md, "| s | m | 3 | 1.000 (9.00–11.00) | 3 | 2.000 (10.00–14.00) |") {
		t.Errorf("spread section:\n%s", md)
	}
	if Spreads(main, nil) != nil {
		t.Error("spreads without repeats")
	}
}

// results.md shows the spread only when the directory has repeats.jsonl.
func TestMarkdownReadsRepeats(t *testing.T) {
	dir := writeResults(t, runs("m", 10, 12, 14))
	md, err := Markdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(md)
	if strings.Contains(string(b), "**Run-to-run spread of one seed.**") {
		t.Error("spread section without repeats")
	}
	if err := os.WriteFile(filepath.Join(dir, RepeatsFile), []byte(`{"scheduler":"m","scenario":"s","seed":1,"goodput_bps":9e6,"sha256_ok":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if md, err = Markdown(dir); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(md)
	if !strings.Contains(string(b), "**Run-to-run spread of one seed.**") {
		t.Error("no spread section with repeats")
	}
}
