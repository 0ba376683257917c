package bench

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// outage2s is a 10 s timed run over a fast path (20 Mbit/s, 20 ms RTT) that
// is out in both directions from 3 s to 5 s and a slow one (5 Mbit/s,
// 60 ms RTT).
func outage2s() scenario.Scenario {
	l := func(mbps, delayMs float64) scenario.Link {
		return scenario.Link{RateBps: mbps * scenario.Mbps, Delay: scenario.Duration(delayMs * float64(time.Millisecond))}
	}
	fast := scenario.PathSpec{Name: "fast", Up: l(20, 10), Down: l(20, 10)}
	out := []scenario.Window{{Start: scenario.Duration(3 * time.Second), End: scenario.Duration(5 * time.Second)}}
	fast.Up.Outages, fast.Down.Outages = out, out
	return scenario.Scenario{
		Name:     "outage-2s-test",
		Paths:    []scenario.PathSpec{fast, {Name: "slow", Up: l(5, 30), Down: l(5, 30)}},
		Bytes:    40 * scenario.MB, // more than 10 s of both paths
		Duration: scenario.Duration(10 * time.Second),
		Timed:    true,
	}
}

// One 2 s outage of the faster path under minRTT, in virtual time. The
// ranges come from the setup, not from a run:
//   - the longest stall is at least one RTT of the slow path (60 ms: data
//     lost on the fast path must cross the slow one again) and shorter than
//     the outage (2 s): a session that only waited for the fast path to come
//     back would stall the whole outage;
//   - the failover gap is the same kind of wait, bounded the same way, and
//     never longer than the longest stall;
//   - the fast path's pre-event rate is above half its 20 Mbit/s (minRTT
//     fills it first) and at most its rate;
//   - the fast path recovers half that rate within 2.3 s of its return:
//     quic-go's probe timeout doubles from about 50 ms during the outage, so
//     the probe due after the return comes at most about the outage's length
//     later; a slow start from a small window to 10 Mbit/s at 20 ms RTT adds
//     about 0.1 s, the 200 ms window up to 0.2 s.
func TestHandoffMetricsOutage(t *testing.T) {
	res, _ := runScenario(t, outage2s(), "minrtt", 1, nil)
	if res.MaxStallSec < 0.06 || res.MaxStallSec >= 2 {
		t.Errorf("max_stall_s = %.3f, want in [0.06, 2)", res.MaxStallSec)
	}
	if len(res.HandoffEvents) != 1 {
		t.Fatalf("%d events, want the one outage: %+v", len(res.HandoffEvents), res.HandoffEvents)
	}
	ev := res.HandoffEvents[0]
	if ev.Path != 0 || ev.Kind != "outage" || ev.StartSec != 3 || ev.EndSec != 5 {
		t.Errorf("event %+v, want path 0's outage 3-5 s", ev)
	}
	if ev.PreRateBps <= 10e6 || ev.PreRateBps > 20e6 {
		t.Errorf("pre_rate_bps = %.0f, want in (10e6, 20e6]", ev.PreRateBps)
	}
	if ev.RecoverySec == nil {
		t.Fatalf("no recovery: %s", ev.NoRecovery)
	}
	t.Logf("max stall %.3f s, failover gap %.3f s, recovery %.3f s", res.MaxStallSec, ev.FailoverGapSec, *ev.RecoverySec)
	if r := *ev.RecoverySec; r < 0 || r > 2.3 {
		t.Errorf("recovery_s = %.3f, want in [0, 2.3]", r)
	}
	if ev.FailoverGapSec < 0.06 || ev.FailoverGapSec >= 2 || ev.FailoverGapSec > res.MaxStallSec {
		t.Errorf("failover_gap_s = %.3f, want in [0.06, 2) and at most max_stall_s %.3f", ev.FailoverGapSec, res.MaxStallSec)
	}
}

// Without any event, a plain download records its longest stall (at least
// the request's round trip, 20 ms on the fast path) and no events.
func TestHandoffMetricsNoEvents(t *testing.T) {
	s := outage2s()
	s.Paths[0].Up.Outages, s.Paths[0].Down.Outages = nil, nil
	s.Timed, s.Bytes = false, 2*scenario.MB
	res, _ := runScenario(t, s, "minrtt", 1, nil)
	t.Logf("max stall %.3f s", res.MaxStallSec)
	if res.MaxStallSec < 0.02 || res.MaxStallSec > 1 {
		t.Errorf("max_stall_s = %.3f, want in [0.02, 1]", res.MaxStallSec)
	}
	if len(res.HandoffEvents) != 0 {
		t.Errorf("events %+v, want none", res.HandoffEvents)
	}
}
