package reproduce

import (
	"math"
	"testing"
)

// TestJudgeTies checks the verdict rule's tie: "In a scenario the CIs
// *separate* when |X − B| is larger than the sum of the two half-widths and
// at least 1% of B". The first case is the one that flipped FPRS's download
// time verdict between two builds of the same code: 0.2091 s against
// 0.2087 s with CIs a few tenths of a millisecond wide.
func TestJudgeTies(t *testing.T) {
	c := claim{sched: "x", baselines: []string{"b"}, metric: mFCT, match: matchAny("s1", "s2", "s3")}
	scens := []string{"s1", "s2", "s3"}
	near := func(m float64) []float64 { return []float64{m - 0.00001, m, m + 0.00001} }
	cases := []struct {
		name     string
		x, b     [3]float64 // per scenario, the means
		pro, con int
		verdict  string
	}{
		{"a 0.2% loss is a tie", [3]float64{0.80, 0.80, 0.2091}, [3]float64{0.90, 0.90, 0.2087}, 2, 0, "agree"},
		{"a 2% loss counts", [3]float64{0.80, 0.80, 0.2130}, [3]float64{0.90, 0.90, 0.2087}, 2, 1, "partly"},
		{"0.5% wins are ties", [3]float64{0.995, 0.995, 0.995}, [3]float64{1, 1, 1}, 0, 0, "disagree"},
		{"1.5% wins count", [3]float64{0.985, 0.985, 0.985}, [3]float64{1, 1, 1}, 3, 0, "agree"},
	}
	for _, tc := range cases {
		vals := map[[2]string][]float64{}
		for i, s := range scens {
			vals[[2]string{s, "x"}] = near(tc.x[i])
			vals[[2]string{s, "b"}] = near(tc.b[i])
		}
		v := judge(c, "b", math.NaN(), vals, scens)
		if v.pro != tc.pro || v.con != tc.con || v.verdict != tc.verdict {
			t.Errorf("%s: %d for / %d against, %s; want %d / %d, %s", tc.name, v.pro, v.con, v.verdict, tc.pro, tc.con, tc.verdict)
		}
	}
}
