package reproduce

import (
	"strings"
	"testing"
)

func TestPapersLoad(t *testing.T) {
	cs := Papers()
	if len(cs) != 11 {
		t.Fatalf("%d claims, want the papers' 11", len(cs))
	}
	c := cs[0]
	if c.ID != "prs-ooo-fig22" || c.Metric != "ooo" || !c.Match("prs-loss-0.5") || c.Match("prs-mixed-1-3") {
		t.Errorf("first claim %+v: want PRS's Fig. 22 claim on prs-loss-* only", c)
	}
	if v, ok := c.ClaimedChange(3); !ok || v != -0.44 {
		t.Errorf("claimed against minRTT = %v, %v; want −0.44", v, ok)
	}
	for _, c := range cs {
		if c.ID == "fprs-fct" {
			if _, ok := c.ClaimedChange(0); ok {
				t.Error("fprs-fct claims only a direction")
			}
		}
	}
}

// Each broken file is refused with an error naming the claim and field.
func TestParseNamesTheField(t *testing.T) {
	const ok = `"paper": "mine", "id": "x-fast", "source": "Me.", "text": "X is faster", "scheduler": "x", "baselines": ["minrtt", "blest"], "metric": "fct", "scenarios": ["hetero-2path"]`
	if _, err := Parse([]byte(`{"claims": [{` + ok + `}]}`)); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	for _, tc := range []struct{ file, want string }{
		{`{"claims": []}`, "claims: none"},
		{`{"claims": [{` + ok + `, "colour": 1}]}`, `unknown field "colour"`},
		{`{"claims": [{` + strings.Replace(ok, `"metric": "fct"`, `"metric": "speed"`, 1) + `}]}`, `claims[0] (x-fast).metric: "speed": want one of ooo, fct`},
		{`{"claims": [{` + strings.Replace(ok, `"id": "x-fast"`, `"id": "X fast"`, 1) + `}]}`, `claims[0] (X fast).id`},
		{`{"claims": [{` + ok + `}, {` + ok + `}]}`, `claims[1] (x-fast).id: "x-fast": used by an earlier claim`},
		{`{"claims": [{` + strings.Replace(ok, `"scheduler": "x"`, `"scheduler": ""`, 1) + `}]}`, `claims[0] (x-fast).scheduler: missing`},
		{`{"claims": [{` + strings.Replace(ok, `["minrtt", "blest"]`, `["minrtt", "minrtt"]`, 1) + `}]}`, `claims[0] (x-fast).baselines[1]: "minrtt" is listed twice`},
		{`{"claims": [{` + strings.Replace(ok, `["minrtt", "blest"]`, `["x"]`, 1) + `}]}`, `baselines[0]: "x" is the claim's own scheduler`},
		{`{"claims": [{` + ok + `, "claimed": [-0.2]}]}`, `claims[0] (x-fast).claimed: 1 values for 2 baselines`},
		{`{"claims": [{` + ok + `, "claimed": [-0.2, -1.5]}]}`, `claims[0] (x-fast).claimed[1]: -1.5`},
		{`{"claims": [{` + strings.Replace(ok, `["hetero-2path"]`, `["hetero-["]`, 1) + `}]}`, `claims[0] (x-fast).scenarios[0]: "hetero-[" is not a glob`},
		{`{"claims": [{` + strings.Replace(ok, `"paper": "mine", `, ``, 1) + `}]}`, `claims[0] (x-fast).paper: missing`},
	} {
		_, err := Parse([]byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s)\nerror %v\nwant it to contain %q", tc.file, err, tc.want)
		}
	}
}
