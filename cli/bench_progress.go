package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// benchProgress prints one line per finished run on stderr, with an ETA.
type benchProgress struct {
	total, n int
	start    time.Time
	quiet    bool
	w        io.Writer // where the lines go (stderr)
}

func newBenchProgress(total int, quiet bool, w io.Writer) *benchProgress {
	return &benchProgress{total: total, start: time.Now(), quiet: quiet, w: w}
}

func (p *benchProgress) done(j job, r metrics.Result) {
	p.n++
	if p.quiet {
		return
	}
	el := time.Since(p.start)
	eta := time.Duration(float64(el) / float64(p.n) * float64(p.total-p.n)).Round(time.Second)
	status := fmt.Sprintf("%6.2f Mbit/s (%.2f of capacity), FCT %.2f s", r.GoodputBps/1e6, r.GoodputBps/max(r.CapacityBps, 1), r.FCTSeconds)
	if r.Error != "" {
		status = "FAILED: " + r.Error
	} else if !r.SHA256OK {
		status += ", DATA MISMATCH"
	}
	fmt.Fprintf(p.w, "[%*d/%d] %-10s %-28s seed %-3d %s  (ETA %v)\n", len(fmt.Sprint(p.total)), p.n, p.total, j.Scheduler, j.Scenario.Name, j.Seed, status, eta)
}
