package stats

import (
	"math"
	"slices"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Eight values with mean 5: squared deviations 9+1+1+1+0+0+4+16 = 32, so the
// sample variance is 32/7 and s = 2.138090. t(0.975, 7) = 2.364624 (tables),
// so the 95% half-width is 2.364624 · 2.138090 / √8 = 1.787485.
func TestEight(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	s := Summarize(xs)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"mean", s.Mean, 5},
		{"sd", s.StdDev, 2.138090},
		{"ci95", s.CI95, 1.787485},
		{"median", s.Median, 4.5},
		{"min", s.Min, 2},
		{"max", s.Max, 9},
	} {
		if !near(c.got, c.want, 1e-5) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// Three values 1, 2, 3: s = 1, t(0.975, 2) = 4.302653, half-width 4.302653/√3
// = 2.484138. At 90%: t(0.95, 2) = 2.919986, half-width 1.685854.
func TestSmallN(t *testing.T) {
	xs := []float64{1, 2, 3}
	if got := CI95(xs); !near(got, 2.484138, 1e-5) {
		t.Errorf("CI95 = %v, want 2.484138", got)
	}
	if got := CI(xs, 0.90); !near(got, 1.685854, 1e-5) {
		t.Errorf("CI(0.90) = %v, want 1.685854", got)
	}
	// Ten runs, as PRS-MPTCP §5 uses: t(0.975, 9) = 2.262157.
	if got := TQuantile(0.975, 9); !near(got, 2.262157, 1e-5) {
		t.Errorf("t(0.975, 9) = %v", got)
	}
}

func TestDegenerate(t *testing.T) {
	if !math.IsNaN(Mean(nil)) || !math.IsNaN(StdDev([]float64{1})) || !math.IsNaN(CI95([]float64{1})) {
		t.Error("want NaN for too-small samples")
	}
	if s := Summarize([]float64{3}); s.Mean != 3 || s.Min != 3 || s.Max != 3 || s.N != 1 {
		t.Errorf("Summarize one value: %+v", s)
	}
	if got := CI95([]float64{4, 4, 4}); got != 0 {
		t.Errorf("CI95 of constant sample = %v, want 0", got)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{10, 1, 4, 7} // sorted 1 4 7 10
	for _, c := range []struct{ p, want float64 }{{0, 1}, {1, 10}, {0.5, 5.5}, {0.25, 3.25}} {
		if got := Quantile(xs, c.p); !near(got, c.want, 1e-12) {
			t.Errorf("Quantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if xs[0] != 10 {
		t.Error("Quantile sorted its input")
	}
}

func TestECDF(t *testing.T) {
	x, p := ECDF([]float64{3, 1, 2, 2})
	if !slices.Equal(x, []float64{1, 2, 3}) || !slices.Equal(p, []float64{0.25, 0.75, 1}) {
		t.Errorf("ECDF = %v, %v", x, p)
	}
	if got := CDFAt([]float64{3, 1, 2, 2}, 2); got != 0.75 {
		t.Errorf("CDFAt = %v", got)
	}
}

// One run gives a mean but no interval: "n/a", never "NaN".
func TestFormatOneSeed(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want string
	}{
		{nil, "n/a"},
		{[]float64{27.8e6}, "27.80 ± n/a"},
		// 10, 20, 30: mean 20, t(0.975, 2)·10/√3 = 24.84.
		{[]float64{10e6, 20e6, 30e6}, "20.00 ± 24.84"},
	} {
		if got := Summarize(c.xs).Format(1e-6, 2); got != c.want {
			t.Errorf("Format(%v) = %q, want %q", c.xs, got, c.want)
		}
	}
}
