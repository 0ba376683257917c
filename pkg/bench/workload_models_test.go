package bench

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// withWorkload returns library scenario name compressed to 15 s (Short:
// every event keeps its place in the timeline) with a workload of kind
// spread over it instead of its download, and the timed flag cleared.
func withWorkload(t *testing.T, name, kind string) scenario.Scenario {
	t.Helper()
	s, err := scenario.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	s = scenario.Short(s, 0, scenario.Duration(15*time.Second))
	s.Timed, s.Ranges = false, stripBytesRange(s.Ranges)
	d := s.Duration.D()
	var w *scenario.Workload
	switch kind {
	case scenario.WorkloadVideo:
		// 10 chunks of d/15 at 2 Mbit/s, over about two thirds of the run.
		w = &scenario.Workload{Kind: kind, ChunkDuration: scenario.Duration(d / 15), BitrateBps: 2e6, Chunks: 10}
	case scenario.WorkloadWeb:
		// webTest's 450 kB page, 4 loads d/8 apart.
		w = webTest().Workload
		w.Pages, w.ThinkTime = 4, scenario.Duration(d/8)
	case scenario.WorkloadRPC:
		// 40 requests over half the run, a 2 MB download from a quarter.
		w = &scenario.Workload{Kind: kind, RPC: &scenario.RPC{RateHz: 80 / d.Seconds(), Requests: 40, RequestBytes: 100, ResponseBytes: 2048,
			BulkBytes: 2_000_000, BulkStart: scenario.Duration(d / 4), Urgency: 1}}
	}
	s.Workload, s.Bytes = w, w.TotalBytes()
	s.Duration = scenario.Duration(3 * d) // room for the single paths' stalls
	if err := s.Validate(); err != nil {
		t.Fatalf("%s with %s: %v", name, kind, err)
	}
	return s
}

// seedWithEarlyOutage returns the first seed from 1 for which s's drawn
// outages (an outage process in Ranges) begin within the first ninth of
// its duration (a third of the 15 s the workload is spread over); 1 if s
// draws none.
func seedWithEarlyOutage(t *testing.T, s scenario.Scenario) int64 {
	if s.Ranges == nil {
		return 1
	}
	for seed := int64(1); seed <= 50; seed++ {
		rs, err := s.Resolve(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rs.Paths {
			if ws := p.Down.Outages; len(ws) > 0 && ws[0].Start < s.Duration/9 {
				return seed
			}
		}
	}
	t.Fatalf("%s: no seed in 1..50 draws an outage in the first ninth", s.Name)
	return 0
}

// stripBytesRange drops a Ranges' bytes range (a workload fixes the size)
// and keeps the rest (outage processes).
func stripBytesRange(r *scenario.Ranges) *scenario.Ranges {
	if r != nil {
		r.Bytes = nil
	}
	return r
}

// Issue 22: "Workloads combine with every existing path model (outages,
// traces, handoffs, shared bottlenecks, cross traffic)". Each workload kind
// on a library scenario of each model, compressed to 15 s, under minRTT:
// the run succeeds with every byte verified and the workload measured, and
// the model is there (its events recorded, its competitors measured):
//   - wifi-walk-dropout: a Wi-Fi outage after a fading schedule;
//   - wifi-lte-commuter: Poisson outages drawn per seed (Ranges) and
//     Gilbert-Elliott loss;
//   - wifi-lte-drive: the LTE drive trace;
//   - wifi-handoff: a Wi-Fi handoff;
//   - rfc6356-shared: a shared bottleneck with a competing bulk flow.
func TestWorkloadsOnEveryPathModel(t *testing.T) {
	models := []struct {
		name         string
		events, xfer bool // the result records handoff events / cross traffic
	}{
		{"wifi-walk-dropout", true, false},
		{"wifi-lte-commuter", true, false},
		{"wifi-lte-drive", false, false},
		{"wifi-handoff", true, false},
		{"rfc6356-shared", false, true},
	}
	for _, m := range models {
		for _, kind := range []string{scenario.WorkloadVideo, scenario.WorkloadWeb, scenario.WorkloadRPC} {
			t.Run(m.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				s := withWorkload(t, m.name, kind)
				res, _ := runScenario(t, s, "minrtt", seedWithEarlyOutage(t, s), nil)
				if !res.SHA256OK || res.Error != "" {
					t.Fatalf("sha %v, error %q", res.SHA256OK, res.Error)
				}
				switch kind {
				case scenario.WorkloadVideo:
					if res.Video == nil || res.Video.Chunks != 10 {
						t.Errorf("video %+v, want 10 chunks", res.Video)
					}
				case scenario.WorkloadWeb:
					if res.Web == nil || res.Web.Pages != 4 || res.Web.Objects != 60 {
						t.Errorf("web %+v, want 4 loads of 15 objects", res.Web)
					}
				case scenario.WorkloadRPC:
					if res.RPC == nil || res.RPC.Requests != 40 || res.RPC.BulkSec <= 0 {
						t.Errorf("rpc %+v, want 40 requests and the bulk", res.RPC)
					}
				}
				if m.events && len(res.HandoffEvents) == 0 {
					t.Errorf("no outage or handoff event during the run (windows %v, %v; FCT %.2f s)", res.Outages, res.Handoffs, res.FCTSeconds)
				}
				if m.xfer && (len(res.CrossGoodputBps) == 0 || res.CrossGoodputBps[0] <= 0) {
					t.Errorf("cross traffic %v, want the competitor measured", res.CrossGoodputBps)
				}
			})
		}
	}
}
