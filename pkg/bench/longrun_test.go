package bench

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// A run may last longer than the session accepts for its CloseTimeout (an
// hour): edar-setting-v runs up to 10,000 s. The run's timeout then bounds
// the server's linger only up to the session's cap, and the run goes ahead
// instead of failing the session's config check.
func TestRunLongerThanCloseTimeoutCap(t *testing.T) {
	s, err := scenario.Get("hetero-2path")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runScenario(t, s, "minrtt", 1, func(r *Run) {
		r.Bytes = 256 << 10
		r.Timeout = 3 * time.Hour
	})
	if res.Error != "" || res.Bytes < 256<<10 {
		t.Fatalf("run with a 3 h timeout: error %q, %d bytes", res.Error, res.Bytes)
	}
}
