package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"gonum.org/v1/plot"
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
		// hetero-2path (see scenario.TestBoundsDefault): 20e6·(T − 30 ms) +
		// 10e6·(T − 80 ms) = 20 MB·8.
		{"fct bound", r.FCTLowerBoundSec, (float64(20<<20)*8 + 20e6*0.030 + 10e6*0.080) / 30e6},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-4*math.Abs(c.want)+1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The bound is for the bytes the run moved (20 MB), not the library
	// scenario's 80 MB.
	ws, _ := scenario.Get("wifi-walk-dropout")
	ws.Bytes = 20 << 20
	if got, want := rows[2].FCTLowerBoundSec, ws.FCTLowerBound().Seconds(); math.Abs(got-want) > 1e-6 || got > 4 {
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

// fromFile is a run of a scenario that is not in the library (a scenario
// file, or one shortened by scenario.Short), with what its scenario says
// recorded in the run.
func fromFile(sch string, seed int64, fct float64) metrics.Result {
	r := metrics.Result{
		Scheduler: sch, Scenario: "my-three-paths", Seed: seed, Bytes: 5 << 20,
		FCTSeconds: fct, GoodputBps: float64(5<<20) * 8 / fct, SHA256OK: true,
		CapacityBps: 135e6, PerPathBytes: []uint64{1, 2, 3}, SentBytes: 6,
		FCTLowerBoundSec: 0.42,
		CapacityTimes:    []float64{0, 0.3, 0.3, 2},
		CapacitySeries:   []float64{135e6, 135e6, 55e6, 55e6},
		Outages:          [][2]float64{{0.3, 2}},
		PathNames:        []string{"wifi", "lte", "mmwave"},
		SeriesStepSec:    0.1,
	}
	// Nothing before 0.1 s, then 100 Mbit/s, and a last partial interval
	// that ends at the FCT.
	for t := 0.1; t < fct-1e-9; t += 0.1 {
		r.SeriesTimes = append(r.SeriesTimes, math.Round(t*10)/10)
	}
	r.SeriesTimes = append(r.SeriesTimes, fct)
	for k := range r.SeriesTimes {
		r.GoodputSeries = append(r.GoodputSeries, map[bool]float64{true: 0, false: 100e6}[k == 0])
	}
	return r
}

// A scenario from a file reports like a library one: its bound, capacity,
// windows and path names come from the runs, and its goodput plot runs on
// the recorded times to the FCT of the median run.
func TestRecordedScenario(t *testing.T) {
	rs := []metrics.Result{fromFile("minrtt", 1, 0.63), fromFile("minrtt", 2, 0.61), fromFile("minrtt", 3, 0.67)}
	rows := Summarize(rs)
	if len(rows) != 1 || rows[0].FCTLowerBoundSec != 0.42 || rows[0].CapacityBps != 135e6 {
		t.Fatalf("rows = %+v, want the recorded bound 0.42 s and capacity", rows)
	}
	if got := pathNames(rs, 3); !slices.Equal(got, []string{"path 0 (wifi)", "path 1 (lte)", "path 2 (mmwave)"}) {
		t.Errorf("path-share labels %q, want the scenario's path names", got)
	}
	r, ok := representative(rs, "minrtt", false)
	if !ok || r.Seed != 1 {
		t.Errorf("representative run: seed %d (%v), want seed 1, the median FCT", r.Seed, ok)
	}
	f, fig, ok := goodputOverTime("my-three-paths", rs, rows)
	if !ok {
		t.Fatal("no goodput plot")
	}
	p := f.grid[0][0]
	if want := 0.63 * 1.02; math.Abs(p.X.Max-want) > 1e-9 {
		t.Errorf("x axis ends at %v s, want just past the FCT of the run shown (%v)", p.X.Max, want)
	}
	if strings.Contains(fig.Note, "not shaded") || strings.Contains(fig.Note, "none is drawn") {
		t.Errorf("note %q: the recorded windows and capacity should be drawn", fig.Note)
	}
	ct, cb, same := capacity([]metrics.Result{r})
	if !same {
		t.Fatal("no capacity curve")
	}
	xys := clipCurve(ct, cb, 0.63)
	want := []float64{0, 135, 0.3, 135, 0.3, 55, 0.63, 55}
	if len(xys) != len(want)/2 {
		t.Fatalf("capacity line %v, want %v", xys, want)
	}
	for k, xy := range xys {
		if xy.X != want[2*k] || xy.Y != want[2*k+1] {
			t.Errorf("capacity point %d = %v, want (%v, %v)", k, xy, want[2*k], want[2*k+1])
		}
	}
	if o, _, same := windows(rs); !same || len(o) != 1 || o[0] != [2]float64{0.3, 2} {
		t.Errorf("outages %v (same %v), want the recorded [0.3, 2)", o, same)
	}
	// Seeds with different capacity over time: no single line is drawn.
	rs[1].CapacitySeries = []float64{1, 1, 1, 1}
	if _, _, same := capacity(rs); same {
		t.Error("different capacity curves reported as one")
	}
}

// One seed: "± n/a", never "NaN", in the Markdown and text tables.
func TestOneSeedNA(t *testing.T) {
	rs := []metrics.Result{fromFile("minrtt", 1, 0.63)}
	rows := Summarize(rs)
	var b bytes.Buffer
	if err := WriteText(&b, rows); err != nil {
		t.Fatal(err)
	}
	md := MarkdownTable(rows)
	for name, text := range map[string]string{"text": b.String(), "markdown": md} {
		if strings.Contains(text, "NaN") || !strings.Contains(text, "66.58 ± n/a") {
			t.Errorf("%s table after one seed:\n%s", name, text)
		}
	}
}

// Issue 20, item 6: "A -scenario-file scenario's description is dropped from
// results.md" and "The report opens with a 300-word paragraph and says
// '1 scenarios'." The recorded description is kept, the counts are
// singular for one, and the text before the table is short and says when
// schedulers can differ.
func TestMarkdownOpening(t *testing.T) {
	rs := []metrics.Result{fromFile("minrtt", 1, 0.63), fromFile("minrtt", 2, 0.61)}
	const desc = "Three paths from my own file: wifi, lte and mmwave."
	for i := range rs {
		rs[i].ScenarioDesc = desc
	}
	md, err := Markdown(writeResults(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, "\n## my-three-paths\n\n"+desc+"\n") {
		t.Errorf("results.md lacks the scenario file's description:\n%s", text)
	}
	head := text[:strings.Index(text, "| scenario")]
	if !strings.Contains(head, "2 runs of 1 scheduler on 1 scenario,") {
		t.Errorf("opening %q: want \"2 runs of 1 scheduler on 1 scenario,\"", head)
	}
	if !strings.Contains(head, "When schedulers can differ") {
		t.Errorf("opening %q does not say when schedulers can differ", head)
	}
	if n := len(strings.Fields(head)); n > 150 {
		t.Errorf("opening is %d words, want at most 150:\n%s", n, head)
	}
}

// Issue 20, item 6: "In the FCT and path-share plots the x labels overlap.
// In the out-of-order CDF, the legend covers the curves." The bar plots'
// labels are slanted, and the CDF's curves end before the room kept free
// on the right for the legend.
func TestPlotLayout(t *testing.T) {
	var rs []metrics.Result
	for i, sch := range []string{"blest", "ecf", "edar", "edar-o", "fprs", "llhd", "minrtt", "peekaboo", "prs", "redundant", "roundrobin"} {
		for seed := int64(1); seed <= 3; seed++ {
			r := fromFile(sch, seed, 0.6+0.01*float64(i))
			r.OOOSegments = uint64(100*i) + uint64(seed)
			rs = append(rs, r)
		}
	}
	rows := Summarize(rs)
	for name, f := range map[string]func(string, []metrics.Result, []Row) (*plot.Plot, Figure, bool){"fct": completionBars, "path-share": pathShare} {
		p, _, ok := f("my-three-paths", rs, rows)
		if !ok || p.X.Tick.Label.Rotation == 0 {
			t.Errorf("%s: x labels not slanted (ok %v)", name, ok)
		}
	}
	p, _, ok := oooCDF("my-three-paths", rs, rows)
	if !ok {
		t.Fatal("no CDF")
	}
	// roundrobin's curve, the rightmost, ends past its largest count, 1003,
	// by 5% of its range plus one (1003 - 1001 + 1).
	free := p.X.Max - legendRoom*(p.X.Max-p.X.Min)
	if end := 1003 + 0.05*3; end > free || p.X.Min > 1 {
		t.Errorf("x axis [%v, %v]: the curves (1 to %v) reach into the legend's room beyond %v", p.X.Min, p.X.Max, end, free)
	}
}
