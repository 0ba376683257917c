package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// A series sampled every 0.2 s (rates 1..6 over (0, 1.2]) in 0.5 s
// intervals: [0, 0.5) holds 1·0.2 + 2·0.2 + 3·0.1 = 0.9, a mean of 1.8;
// [0.5, 1.0) holds 3·0.1 + 4·0.2 + 5·0.2 = 2.1, a mean of 4.2; [1.0, 1.5)
// does not end by 1.2 and is left out.
func TestRebin(t *testing.T) {
	got := rebin([]float64{0.2, 0.4, 0.6, 0.8, 1.0, 1.2}, []float64{1, 2, 3, 4, 5, 6}, 0.5, 1.2)
	want := []float64{1.8, 4.2}
	if len(got) != len(want) {
		t.Fatalf("rebin = %v, want %v", got, want)
	}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-12 {
			t.Errorf("bin %d = %v, want %v", k, got[k], want[k])
		}
	}
	// Samples longer than a bin spread over every bin they cover.
	got = rebin([]float64{1.5}, []float64{8}, 0.5, 1.5)
	if len(got) != 3 || got[0] != 8 || got[1] != 8 || got[2] != 8 {
		t.Errorf("one 1.5 s sample of 8 = %v, want [8 8 8]", got)
	}
	for _, c := range []struct {
		ends, rate  []float64
		width, upTo float64
		name        string
	}{
		{[]float64{1}, []float64{1}, 0, 1, "zero width"},
		{[]float64{1}, []float64{1, 2}, 0.5, 1, "lengths differ"},
		{[]float64{1}, []float64{1}, 0.5, math.NaN(), "NaN end"},
		{[]float64{1}, []float64{1}, 0.5, -1, "negative end"},
	} {
		if got := rebin(c.ends, c.rate, c.width, c.upTo); got != nil {
			t.Errorf("%s: rebin = %v, want nil", c.name, got)
		}
	}
}

// crossResults is a timed scenario with two competitors, three seeds of
// two schedulers, plus one failed run. minrtt+lia's session gets 5, 6 and
// 7 Mbit/s against competitors of 5 and 5 Mbit/s: ratios 1, 1.2, 1.4 (mean
// 1.2), shares 5/15, 6/16, 7/17, and Jain's index (5+5+5)²/(3·75) = 1,
// 16²/(3·86) = 256/258 and 17²/(3·99) = 289/297.
func crossResults() []metrics.Result {
	var out []metrics.Result
	for _, sch := range []string{"minrtt+lia", "minrtt+none"} {
		for seed := int64(1); seed <= 3; seed++ {
			sess := float64(4+seed) * 1e6
			if sch == "minrtt+none" {
				sess = 10e6
			}
			n := 300 // 30 s of 100 ms samples
			series, ts := make([]float64, n), make([]float64, n)
			c1, c2 := make([]float64, n), make([]float64, n)
			for i := range n {
				ts[i] = float64(i+1) * 0.1
				series[i], c1[i], c2[i] = sess, 5e6, 5e6
			}
			out = append(out, metrics.Result{
				Scheduler: sch, Scenario: "fair-test", Seed: seed, Timed: true,
				Bytes: uint64(sess * 30 / 8), FCTSeconds: 30, GoodputBps: sess, CapacityBps: 20e6,
				PerPathBytes:  []uint64{1000, 3000},
				PathNames:     []string{"congested", "idle"},
				SHA256OK:      true,
				GoodputSeries: series, SeriesTimes: ts, SeriesStepSec: 0.1,
				CapacityTimes: []float64{0}, CapacitySeries: []float64{20e6},
				CrossNames:       []string{"c1", "c2"},
				CrossGoodputBps:  []float64{5e6, 5e6},
				CrossSeries:      [][]float64{c1, c2},
				CrossSeriesTimes: ts,
			})
		}
	}
	out = append(out, metrics.Result{Scheduler: "minrtt+lia", Scenario: "fair-test", Seed: 4, Timed: true, Error: "bench: server: boom", CrossGoodputBps: []float64{1, 1}})
	return out
}

func TestFairnessRows(t *testing.T) {
	rows := FairnessRows(append(crossResults(), synthetic()...))
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (only the scenario with cross traffic): %+v", len(rows), rows)
	}
	lia := rows[0]
	if lia.Scheduler != "minrtt+lia" || lia.Runs != 3 {
		t.Fatalf("row 0: %s with %d runs, want minrtt+lia with 3 (the failed run left out)", lia.Scheduler, lia.Runs)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"session", lia.Session.Mean, 6e6},
		{"competitor c2", lia.Competitors[1].Mean, 5e6},
		{"ratio", lia.Ratio.Mean, 1.2},
		{"share", lia.Share.Mean, (1.0/3 + 6.0/16 + 7.0/17) / 3},
		{"jain", lia.Jain.Mean, (1 + 256.0/258 + 289.0/297) / 3},
		{"congested path", lia.PathShares[0].Mean, 0.25},
		{"idle path", lia.PathShares[1].Mean, 0.75},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := strings.Join(lia.CompetitorNames, ","); got != "c1,c2" {
		t.Errorf("competitor names %q, want c1,c2", got)
	}
	if got := strings.Join(lia.PathNames, ","); got != "path 0 (congested),path 1 (idle)" {
		t.Errorf("path names %q", got)
	}
	if FairnessRows(synthetic()) != nil {
		t.Error("results without cross traffic have fairness rows")
	}
}

// A report of results with cross traffic has the method, a fairness table
// for that scenario only, and a shares-over-time plot per scheduler; one
// without cross traffic has none of them, so other reports do not change.
func TestFairnessMarkdown(t *testing.T) {
	dir := writeResults(t, append(crossResults(), synthetic()...))
	md, err := Markdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, FairnessMethod) {
		t.Error("results.md lacks the fairness method")
	}
	if n := strings.Count(text, "| scheduler | runs | session (Mbit/s) |"); n != 1 {
		t.Errorf("%d fairness tables, want 1", n)
	}
	row := "| minrtt+lia | 3 | 6.00 ± 2.48 | c1 5.00 ± 0.00; c2 5.00 ± 0.00 | 1.20 ± 0.50 |"
	if !strings.Contains(text, row) {
		t.Errorf("results.md lacks the row %q", row)
	}
	for _, sch := range []string{"minrtt_lia", "minrtt_none"} {
		for _, ext := range []string{".png", ".svg"} {
			name := filepath.Join(PlotsDir, "shares_fair-test_"+sch+ext)
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
				t.Errorf("%s: %v", name, err)
			}
			if ext == ".png" && !strings.Contains(text, "("+filepath.ToSlash(name)+")") {
				t.Errorf("results.md does not embed %s", name)
			}
		}
	}

	plain := writeResults(t, synthetic())
	md, err = Markdown(plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "Fairness") || strings.Contains(string(b), "shares_") {
		t.Error("a report without cross traffic mentions fairness")
	}
}

// The plot of a run shows the session, each competitor and their sum in
// 0.5 s intervals: 60 whole intervals of a 30 s run.
func TestSharesOverTime(t *testing.T) {
	sps := sharesOverTime("fair-test", crossResults())
	if len(sps) != 2 {
		t.Fatalf("%d plots, want one per scheduler (2)", len(sps))
	}
	if sps[0].scheduler != "minrtt+lia" || sps[0].fig.Kind != "shares" {
		t.Errorf("plot 0: %s, %s", sps[0].scheduler, sps[0].fig.Kind)
	}
	if sps[0].p.X.Max < 30 || sps[0].p.X.Max > 31 {
		t.Errorf("x axis to %v s, want the 30 s run", sps[0].p.X.Max)
	}
	// A run without competitor series has no such plot.
	rs := crossResults()
	for i := range rs {
		rs[i].CrossSeries, rs[i].CrossSeriesTimes = nil, nil
	}
	if sps := sharesOverTime("fair-test", rs); len(sps) != 0 {
		t.Errorf("%d plots without competitor series", len(sps))
	}
}
