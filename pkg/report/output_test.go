package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// -format json prints one line per run: the series stay in results.jsonl,
// the cross traffic's goodput and the fairness figures are printed.
func TestWriteFormatJSONDropsSeries(t *testing.T) {
	r := metrics.Result{
		Scheduler: "minrtt+lia", Scenario: "rfc6356-shared", GoodputBps: 6e6,
		GoodputSeries: []float64{6e6}, SeriesTimes: []float64{0.1},
		CrossGoodputBps: []float64{12e6}, CrossSeries: [][]float64{{12e6}}, CrossSeriesTimes: []float64{0.1},
		Fairness: metrics.NewFairness(6e6, []float64{12e6}),
	}
	var b bytes.Buffer
	if err := WriteFormat(&b, "json", []metrics.Result{r}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, gone := range []string{"goodput_series_bps", "cross_goodput_series_bps", "cross_series_t_s"} {
		if strings.Contains(out, `"`+gone+`"`) {
			t.Errorf("stdout holds %s: %s", gone, out)
		}
	}
	for _, kept := range []string{`"cross_goodput_bps":[12000000]`, `"fairness":{"competitor_mean_bps":12000000,"ratio":0.5,`} {
		if !strings.Contains(out, kept) {
			t.Errorf("stdout lacks %s: %s", kept, out)
		}
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("%d lines, want 1", strings.Count(out, "\n"))
	}
}
