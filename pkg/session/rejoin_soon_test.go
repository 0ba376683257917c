package session

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Issue 30, must show: "wifi-handoff recovery: at most 0.03 s" (the
// fast path carrying half its rate again, over 200 ms, that long after the
// link returns). A Wi-Fi-like path (20 Mbit/s, 10 ms RTT) is handed off
// as in wifi-handoff (emu.Handoff: it degrades, then is dark for about
// 1.5 s) beside a slower one while a download runs, and comes back. The
// time from its return until it carries data again is the silent path's
// next ping, the client noticing the answer, and a rejoin's handshake.
// Before, the first took up to 200 ms (the ping interval then) and the
// second up to the answer's due time from a smoothed RTT that the outage
// had inflated (110 ms and more), so the path came back 100–300 ms after
// its link. Each outage ends at another phase of the ping timer.
//
// The worst case: with the pings alone, in about one run in four one of
// the 12 paths took 200–700 ms, because the client's quic-go connection on
// it had its congestion window full of packets sent into the fade and the
// outage, and sent the queued pings only when its backed-off probe timer
// fired. The path probe outside QUIC (probe_udp.go) goes out at once.
func TestPathBackSoonAfterOutage(t *testing.T) {
	const (
		runs = 12
		// The median: half a ping interval (50 ms), the answer (10 ms), a
		// handshake and 10 segments, with room to spare. Before, it was
		// about 180 ms; with the pings alone sped up, about 95.
		medianLimit = 80 * time.Millisecond
		// The worst: a whole ping interval, the answer, a handshake and 10
		// segments (at most 85 ms in 240 outages).
		worstLimit = 110 * time.Millisecond
	)
	var took []time.Duration
	for k := range runs {
		synctest.Test(t, func(t *testing.T) {
			el, st := pathBackAfterHandoff(t, int64(1+k), 4*time.Second+time.Duration(k)*23*time.Millisecond)
			took = append(took, el)
			t.Logf("outage %d: path 0 carried data again %v after the link came back (%d rejoins, %d pings, %d probes answered)", k, el, st.Rejoins, st.Pings, st.ProbeAnswers)
		})
	}
	slices.Sort(took)
	if med := (took[runs/2-1] + took[runs/2]) / 2; med > medianLimit {
		t.Errorf("a path came back %v after its link (median of %d), want ≤ %v", med, runs, medianLimit)
	}
	if worst := took[runs-1]; worst > worstLimit {
		t.Errorf("a path came back %v after its link at worst, want ≤ %v", worst, worstLimit)
	}
}

// The path probe alone brings a path back: the same handoff with every
// QUIC-level ping dropped before quic-go sees it, as when the path's
// connection can send nothing. Without the probe the path waited for
// quic-go's own backed-off probe timer.
func TestPathProbeBringsPathBack(t *testing.T) {
	wrapDatagram = func(s *Session, send func([]byte) error) func([]byte) error {
		return func(b []byte) error {
			if len(b) == 1 && b[0] == wire.TypePing {
				return nil
			}
			return send(b)
		}
	}
	defer func() { wrapDatagram = nil }()
	const limit = 110 * time.Millisecond // as TestPathBackSoonAfterOutage's worst
	var answered uint64
	for k := range 4 {
		synctest.Test(t, func(t *testing.T) {
			el, st := pathBackAfterHandoff(t, int64(1+k), 4*time.Second+time.Duration(k)*37*time.Millisecond)
			t.Logf("outage %d: path 0 carried data again %v after the link came back (%d rejoins, %d probes answered)", k, el, st.Rejoins, st.ProbeAnswers)
			answered += st.ProbeAnswers
			if el > limit {
				t.Errorf("path 0 carried data again %v after its link, want ≤ %v", el, limit)
			}
		})
	}
	// A packet of the server's quic-go (its own probe timer) may bring the
	// path back first now and then, even on its old connection without a
	// rejoin; the probes' answers must have done it in some of the outages.
	if answered == 0 {
		t.Errorf("no path probe was answered in 4 outages")
	}
}

// pathBackAfterHandoff runs a download over a Wi-Fi-like path 0 handed
// off from 1 s to back (emu.Handoff, as wifi-handoff) and a 10 Mbit/s, 60
// ms RTT path 1, and returns how long after back path 0's socket received
// 10 more full segments, and the client's stats then. In a synctest bubble.
func pathBackAfterHandoff(t *testing.T, seed int64, back time.Duration) (time.Duration, Stats) {
	start := time.Now()
	a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
	a.Schedule = emu.Handoff(time.Second, back, a, (back-time.Second)/2) // it degrades, then is dark
	b := emu.LinkConfig{RateBps: 10e6, Delay: 30 * time.Millisecond}
	tb := newTestbedOn(t, seed, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
	defer tb.close()
	startDownload(t, tb, 200<<20)
	time.Sleep(time.Until(start.Add(back)))
	el := untilPath0Carries(t, tb, 10*time.Second)
	return el, tb.cli.Stats()
}

// untilPath0Carries waits (at most limit) until path 0's socket, on its
// old connection or a new one, received 10 more full segments, and
// returns how long that took.
func untilPath0Carries(t *testing.T, tb *testbed, limit time.Duration) time.Duration {
	t.Helper()
	from := time.Now()
	local := tb.topo.Clients[0].LocalAddr().String()
	received := func() (n uint64) {
		for _, p := range tb.cli.Stats().Paths {
			if p.LocalAddr != nil && p.LocalAddr.String() == local {
				n += p.BytesReceived
			}
		}
		return n
	}
	base := received()
	for received() < base+12000 {
		if time.Since(from) > limit {
			t.Fatalf("path 0 carried no data within %v", limit)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(from)
}
