package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// synthetic builds a small results set: two schedulers on two library
// scenarios, three seeds each, plus one failed run. minrtt's goodput on
// hetero-2path is 10, 20, 30 Mbit/s: mean 20, s = 10, 95% CI half-width
// t(0.975, 2)·10/√3 = 4.302653·5.773503 = 24.84138 Mbit/s.
func synthetic() []metrics.Result {
	var out []metrics.Result
	for _, scn := range []string{"hetero-2path", "wifi-walk-dropout"} {
		for si, sch := range []string{"minrtt", "redundant"} {
			for seed := int64(1); seed <= 3; seed++ {
				gp := float64(seed) * 10e6
				if sch == "redundant" {
					gp = 15e6
				}
				series := make([]float64, 200)
				for i := range series {
					series[i] = gp * (1 + 0.2*math.Sin(float64(i)/10))
					if scn == "wifi-walk-dropout" && i >= 80 && i < 120 {
						series[i] = gp * 0.2
					}
				}
				out = append(out, metrics.Result{
					Scheduler: sch, Scenario: scn, Seed: seed,
					Bytes:          20 << 20,
					FCTSeconds:     float64(20<<20) * 8 / gp,
					GoodputBps:     gp,
					CapacityBps:    30e6,
					OOOSegments:    uint64(100*seed + 50*int64(si)),
					HoLBlockedSec:  0.1 * float64(seed),
					RetransPackets: 10 * uint64(seed),
					SentBytes:      (20 << 20) * uint64(1+si),
					RedundantBytes: (20 << 20) * uint64(si),
					PerPathBytes:   []uint64{uint64(15 << 20), uint64(5<<20) + uint64(si)*(20<<20)},
					SHA256OK:       true,
					GoodputSeries:  series,
					SeriesStepSec:  0.1,
					Extra:          map[string]float64{"sent_packets": 20000},
				})
			}
		}
	}
	out = append(out, metrics.Result{Scheduler: "minrtt", Scenario: "hetero-2path", Seed: 4, Error: "bench: SHA-256 mismatch"})
	return out
}

func writeResults(t *testing.T, rs []metrics.Result) string {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSummarize(t *testing.T) {
	rows := Summarize(synthetic())
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	r := rows[0]
	if r.Scenario != "hetero-2path" || r.Scheduler != "minrtt" || r.Runs != 4 || r.Failed != 1 {
		t.Fatalf("row 0 = %s/%s runs %d failed %d", r.Scenario, r.Scheduler, r.Runs, r.Failed)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"goodput mean", r.Goodput.Mean, 20e6},
		{"goodput ci", r.Goodput.CI95, 24.84138e6},
		{"ooo mean", r.OOO.Mean, 200},
		{"hol mean", r.HoL.Mean, 0.2},
		{"retrans mean", r.Retrans.Mean, 20.0 / 20000},
		{"redundancy", r.Redundancy.Mean, 0},
		{"capacity", r.CapacityBps, 30e6},
		// hetero-2path: 10 ms + 20 MB·8 / 30 Mbit/s + 5 ms.
		{"fct bound", r.FCTLowerBoundSec, 0.010 + float64(20<<20)*8/30e6 + 0.005},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-4*math.Abs(c.want)+1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The bound is for the bytes the run moved (20 MB), not the library
	// scenario's 80 MB: wifi-walk-dropout carries 20 MB before its Wi-Fi
	// fades at 4 s, so 10 ms + 20·2^20·8 bits / 60 Mbit/s + 5 ms.
	if got, want := rows[2].FCTLowerBoundSec, 0.010+float64(20<<20)*8/60e6+0.005; math.Abs(got-want) > 1e-6 {
		t.Errorf("%s bound = %v, want %v", rows[2].Scenario, got, want)
	}
	if red := rows[1].Redundancy.Mean; red != 1 {
		t.Errorf("redundant scheduler overhead = %v, want 1", red)
	}
}

func TestMarkdown(t *testing.T) {
	dir := writeResults(t, synthetic())
	md, err := Markdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	// The table holds minrtt's mean goodput on hetero-2path, 20 Mbit/s ± 24.84.
	if !strings.Contains(string(text), "| hetero-2path | minrtt | 4 (1) | 20.00 ± 24.84 |") {
		t.Errorf("results.md lacks the minrtt row:\n%s", text)
	}
	// Every embedded plot exists and decodes; each has an SVG twin.
	var pngs int
	for _, line := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(line, "![") {
			continue
		}
		rel := line[strings.Index(line, "](")+2 : len(line)-1]
		f, err := os.Open(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Errorf("%s is %v", rel, b)
		}
		svg, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(rel, ".png")+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s: no SVG twin (%v)", rel, err)
		}
		pngs++
	}
	// Two scenarios × (goodput, fct, ooo-cdf, path-share).
	if pngs != 8 {
		t.Errorf("%d plots embedded, want 8", pngs)
	}
	for _, kind := range []string{"goodput", "fct", "ooo-cdf", "path-share"} {
		if _, err := os.Stat(filepath.Join(dir, PlotsDir, kind+"_wifi-walk-dropout.png")); err != nil {
			t.Error(err)
		}
	}

	// summary.csv: header plus four rows, minrtt's goodput mean in place.
	f, err := os.Open(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || len(recs[0]) != len(CSVHeader) {
		t.Fatalf("csv has %d records of %d fields", len(recs), len(recs[0]))
	}
	if recs[1][0] != "hetero-2path" || recs[1][1] != "minrtt" || recs[1][4] != "2e+07" {
		t.Errorf("csv row 1 = %v", recs[1])
	}
}

func TestReadResultsNamesLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ResultsFile)
	os.WriteFile(p, []byte("{\"scheduler\":\"a\"}\n\n{\"scheduler\": 3}\n"), 0o644)
	if _, err := ReadResults(p); err == nil || !strings.Contains(err.Error(), ":3:") {
		t.Errorf("error = %v, want it to name line 3", err)
	}
}

func TestUnknownScenario(t *testing.T) {
	rs := synthetic()
	for i := range rs {
		rs[i].Scenario = "not-in-library"
		rs[i].CapacityBps = 0
	}
	rows := Summarize(rs)
	if !math.IsNaN(rows[0].FCTLowerBoundSec) || !math.IsNaN(rows[0].CapacityBps) {
		t.Errorf("bounds for an unknown scenario: %v, %v", rows[0].FCTLowerBoundSec, rows[0].CapacityBps)
	}
	if _, err := Plots(t.TempDir(), rs); err != nil {
		t.Fatal(err)
	}
}
