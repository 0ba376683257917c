package reproduce

import (
	"strings"
	"testing"

	_ "github.com/mpqsched/mpqsched/sched/all" // the schedulers the claims name
)

// Every metric a claims file may name is one reproduce can measure, and the
// papers' claims load with registered schedulers.
func TestPaperClaimsFromData(t *testing.T) {
	for _, m := range Metrics {
		if _, ok := metricByName[m]; !ok {
			t.Errorf("metric %q of pkg/reproduce has no measurement here", m)
		}
	}
	cs, err := claimsFrom(Papers())
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 11 || cs[0].metric.name != mOOO.name || !cs[0].match("prs-loss-3") {
		t.Errorf("%d claims, first %+v", len(cs), cs[0])
	}
}

func TestClaimsFromRefusesUnknownScheduler(t *testing.T) {
	cs, err := Parse([]byte(`{"claims": [{"paper": "p", "id": "a", "source": "s", "text": "t", "scheduler": "minrtt", "baselines": ["blest", "nosuch"], "metric": "fct", "scenarios": ["hetero-2path"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claimsFrom(cs); err == nil || !strings.Contains(err.Error(), "claims[0] (a).baselines[1]") {
		t.Errorf("error %v, want it to name claims[0] (a).baselines[1]", err)
	}
}
