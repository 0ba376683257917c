package report

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// Five schedulers: a grid of two rows of four panels, the last three
// blank, on one y axis that holds the capacity (135 Mbit/s) with room; the
// legend lives in the header, outside every panel, and names the capacity
// and the outage.
func TestGoodputPanels(t *testing.T) {
	var rs []metrics.Result
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		rs = append(rs, fromFile(s, 1, 0.63))
	}
	f, _, ok := goodputOverTime("my-three-paths", rs, nil)
	if !ok {
		t.Fatal("no figure")
	}
	if len(f.grid) != 2 || f.grid[1][0] == nil || f.grid[1][1] != nil {
		t.Fatalf("grid of %d rows (second %v), want 2 rows, one panel in the second", len(f.grid), f.grid[1])
	}
	for i, p := range append(f.grid[0], f.grid[1][0]) {
		if p.Y.Max != f.grid[0][0].Y.Max || p.Y.Max < 135 {
			t.Errorf("panel %d: y up to %v, want one axis above the capacity 135", i, p.Y.Max)
		}
	}
	var names []string
	for _, e := range f.legend {
		names = append(names, e.name)
	}
	if got := strings.Join(names, "; "); !strings.Contains(got, "capacity") || !strings.Contains(got, "outage") {
		t.Errorf("legend %q lacks the capacity or the outage", got)
	}
	file := filepath.Join(t.TempDir(), "g.png")
	if err := f.Save(0, 0, file); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cfg, err := png.DecodeConfig(r)
	if err != nil {
		t.Fatal(err)
	}
	got, want := float64(cfg.Width)/float64(cfg.Height), float64(panelW*panelCols/(headerH+2*panelH))
	if math.Abs(got/want-1) > 0.02 {
		t.Errorf("PNG %d×%d px, aspect %.3f; want %.3f: %d panels across, 2 rows and the header", cfg.Width, cfg.Height, got, want, panelCols)
	}
}
