package cross

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// link is a 10 Mbit/s link with 20 ms one-way delay and a 1.5 BDP queue.
var link = emu.LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond}

// flows runs the specs for d of virtual time, every flow crossing path 0's
// link of a one-path topology (or the shared link of a two-path shared
// topology, if shared), and returns their goodput series and the link's
// Down counters.
func flows(t *testing.T, d time.Duration, specs ...Spec) ([]Goodput, emu.LinkStats) {
	t.Helper()
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: link, Down: link})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	var fs []*Flow
	for i, s := range specs {
		c, srv, err := topo.AddFlow(emu.PathSpec{}, topo.Links[0])
		if err != nil {
			t.Fatal(err)
		}
		f, err := Start(topo.Net, c, srv, s, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	time.Sleep(d)
	var out []Goodput
	for i, f := range fs {
		if err := f.Stop(); err != nil {
			t.Errorf("flow %d: %v", i, err)
		}
		out = append(out, f.Goodput())
	}
	_, down := topo.Links[0].Stats()
	return out, down
}

// A bulk quic-go flow alone fills a 10 Mbit/s link (>= 85% of it after its
// first second), and sends nothing before its Start.
func TestBulkFillsLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, _ := flows(t, 6*time.Second, Spec{Kind: Bulk, Start: time.Second})
		if got := g[0].MeanBps(0, time.Second); got != 0 {
			t.Errorf("goodput before Start = %v bit/s, want 0", got)
		}
		got := g[0].MeanBps(2*time.Second, 6*time.Second)
		if got < 0.85*10e6 || got > 10e6 {
			t.Errorf("bulk goodput %v bit/s, want in [8.5e6, 1e7]", got)
		}
		if len(g[0].T) != 60 || g[0].T[0] != 0.1 {
			t.Errorf("series of %d samples starting at %v s, want 60 from 0.1 s", len(g[0].T), g[0].T[0])
		}
	})
}

// Two bulk flows through one link share it: together at most its rate, and
// each gets more than a quarter.
func TestBulkFlowsShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, down := flows(t, 20*time.Second, Spec{Kind: Bulk}, Spec{Kind: Bulk, Start: 2 * time.Second})
		a, b := g[0].MeanBps(5*time.Second, 20*time.Second), g[1].MeanBps(5*time.Second, 20*time.Second)
		t.Logf("flow 1 %.2f Mbit/s, flow 2 %.2f Mbit/s, queue drops %d", a/1e6, b/1e6, down.DroppedQueue)
		if a < 2.5e6 || b < 2.5e6 || a+b > 10e6 || a+b < 8.5e6 {
			t.Errorf("flows got %v and %v bit/s; want each > 2.5e6 and together in [8.5e6, 1e7]", a, b)
		}
		if down.DroppedQueue == 0 {
			t.Error("no queue drops: the flows never filled the shared queue")
		}
	})
}

// An on/off CBR source sends at its rate while on and nothing while off; the
// on fraction over 120 s is near MeanOn/(MeanOn+MeanOff) = 1/3; the seed
// decides when, so the same seed repeats the series and another differs.
func TestOnOffCBR(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := Spec{Kind: OnOff, MeanOn: time.Second, MeanOff: 2 * time.Second, CBRRateBps: 4e6}
		run := func() []Goodput {
			g, _ := flows(t, 120*time.Second, spec, spec)
			return g
		}
		g := run()
		wire := 4e6 * CBRPayload / (CBRPayload + emu.Overhead) // payload share of the CBR rate
		frac := g[0].MeanBps(0, 120*time.Second) / wire
		if frac < 0.2 || frac > 0.45 {
			t.Errorf("on fraction %.2f, want in [0.2, 0.45] (1/3 expected)", frac)
		}
		full := 0
		for _, b := range g[0].Bytes {
			bps := float64(b) * 8 / g[0].StepSec
			if bps > 1.1*wire {
				t.Errorf("an interval carried %v bit/s, above the CBR rate", bps)
				break
			}
			if bps > 0.95*wire {
				full++
			}
		}
		if full < 200 {
			t.Errorf("%d intervals at the full CBR rate, want >= 200 of 1200", full)
		}
		if same(g[0].Bytes, g[1].Bytes) {
			t.Error("flows with different seeds have the same series")
		}
		again := run()
		if d := diff(g[0].Bytes, again[0].Bytes); d > 2 {
			t.Errorf("the same seed gave series differing in %d intervals", d)
		}
	})
}

// On/off quic-go transfers: data in on periods, long silent stretches, less
// in total than a bulk flow would move.
func TestOnOffQUIC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, _ := flows(t, 60*time.Second, Spec{Kind: OnOff, MeanOn: 2 * time.Second, MeanOff: 4 * time.Second})
		mean := g[0].MeanBps(0, 60*time.Second)
		if mean < 0.5e6 || mean > 0.8*10e6 {
			t.Errorf("on/off goodput %v bit/s, want in [0.5e6, 8e6]", mean)
		}
		silent, longest := 0, 0
		for _, b := range g[0].Bytes {
			if b == 0 {
				silent++
				longest = max(longest, silent)
			} else {
				silent = 0
			}
		}
		if longest < 10 {
			t.Errorf("longest silence %d intervals, want >= 10 (1 s)", longest)
		}
	})
}

// Stop times end a flow early: nothing after Spec.Stop (plus one RTT of
// data in flight).
func TestStopTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, _ := flows(t, 6*time.Second, Spec{Kind: Bulk, Stop: 3 * time.Second})
		if got := g[0].MeanBps(3500*time.Millisecond, 6*time.Second); got != 0 {
			t.Errorf("goodput after Stop %v bit/s, want 0", got)
		}
		if got := g[0].MeanBps(time.Second, 3*time.Second); got < 5e6 {
			t.Errorf("goodput before Stop %v bit/s, want > 5e6", got)
		}
	})
}

func TestValidateNamesField(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: "tcp"}, "Kind"},
		{Spec{Kind: Bulk, Start: -1}, "Start"},
		{Spec{Kind: Bulk, Start: 2, Stop: 1}, "Stop"},
		{Spec{Kind: Bulk, MeanOn: 1}, "Kind"},
		{Spec{Kind: OnOff, MeanOff: 1}, "MeanOn"},
		{Spec{Kind: OnOff, MeanOn: 1}, "MeanOff"},
		{Spec{Kind: OnOff, MeanOn: 1, MeanOff: 1, CBRRateBps: -1}, "CBRRateBps"},
		{Spec{Kind: Bulk, Step: -1}, "Step"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), "Spec."+c.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c.s, err, c.want)
		}
	}
	if _, err := Start(nil, nil, nil, Spec{Kind: Bulk}, 1); err == nil {
		t.Error("Start without endpoints: no error")
	}
}

func same(a, b []int64) bool { return diff(a, b) == 0 && len(a) == len(b) }

func diff(a, b []int64) int {
	n := max(len(a), len(b)) - min(len(a), len(b))
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// On the wall clock too: a bulk flow over a 10 Mbit/s, 5 ms link for one
// second delivers data (loosely bounded: the machine is shared).
func TestBulkRealTime(t *testing.T) {
	l := emu.LinkConfig{RateBps: 10e6, Delay: 5 * time.Millisecond}
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: l, Down: l})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	c, s, err := topo.AddFlow(emu.PathSpec{}, topo.Links[0])
	if err != nil {
		t.Fatal(err)
	}
	f, err := Start(topo.Net, c, s, Spec{Kind: Bulk}, 1)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // real time: this test is about the wall clock
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	g := f.Goodput()
	if got := float64(g.Total()) * 8; got < 1e6 || got > 10e6 {
		t.Errorf("%v bits in 1 s of real time, want in [1e6, 1e7]", got)
	}
}
