package session

import (
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// The client's probing of a silent path, step by step with an injected
// clock: silent after max(100 ms, 3 RTT) while another path receives; a
// ping every max(2 min RTTs, 50 ms), with a silence report at most every
// 200 ms; an answer after a silence of 1 s or more joins the path again,
// an answer after a short one only ends the probing.
func TestProbeSilentPath(t *testing.T) {
	c, _ := (&Config{}).withDefaults()
	s, err := newSession(c, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	mk := func(slot int) *path {
		p := &path{id: 0, slot: slot, tr: &tracer{srtt: 10 * time.Millisecond, lastRecv: t0}, qtr: nil}
		s.slots[slot] = p
		return p
	}
	a, b := mk(0), mk(1)
	b.id = 1
	a.qtr, b.qtr = newTransportStub(), newTransportStub()
	recv := func(p *path, at time.Duration) { p.tr.lastRecv, p.tr.lastData = t0.Add(at), t0.Add(at) }
	type step struct {
		at         time.Duration
		aRecv      time.Duration // if non-zero, a packet on a at this time
		wantPing   bool
		wantReport bool
		wantRejoin bool
	}
	steps := []step{
		{at: 50 * time.Millisecond},                                    // not silent yet
		{at: 100 * time.Millisecond, wantPing: true, wantReport: true}, // silent for 100 ms: first ping
		{at: 120 * time.Millisecond},                                   // next ping 50 ms after the first
		{at: 150 * time.Millisecond, wantPing: true},                   // the report waits for 200 ms
		{at: 200 * time.Millisecond, wantPing: true},
		{at: 300 * time.Millisecond, wantPing: true, wantReport: true},
		{at: 350 * time.Millisecond, aRecv: 340 * time.Millisecond}, // answered after 340 ms: no rejoin
		{at: 2 * time.Second, wantPing: true, wantReport: true},     // silent again
		{at: 2050 * time.Millisecond, wantPing: true},
		{at: 3500 * time.Millisecond, aRecv: 3490 * time.Millisecond, wantRejoin: true}, // answered after 1.5 s of silence
	}
	for _, st := range steps {
		recv(b, st.at) // the other path keeps receiving
		if st.aRecv != 0 {
			recv(a, st.aRecv)
		}
		ping, rejoin, _ := s.probeLocked(t0.Add(st.at), nil, nil)
		if a.probe.report != st.wantReport {
			t.Errorf("at %v: silence report %v, want %v", st.at, a.probe.report, st.wantReport)
		}
		a.probe.report = false // reportSilence sent it
		gotPing := len(ping) == 1 && ping[0] == a
		gotRejoin := len(rejoin) == 1 && rejoin[0] == a
		if len(ping) > 1 || len(ping) == 1 && ping[0] != a {
			t.Fatalf("at %v: pinged %d paths", st.at, len(ping))
		}
		if gotPing != st.wantPing || gotRejoin != st.wantRejoin {
			t.Errorf("at %v: ping %v rejoin %v, want %v %v", st.at, gotPing, gotRejoin, st.wantPing, st.wantRejoin)
		}
	}
	// The interval follows the minimum RTT, not a smoothed RTT that the
	// outage inflated: a path of 10 ms minimum RTT whose smoothed RTT rose
	// to 300 ms is pinged every 50 ms once silent (after 3 smoothed RTTs).
	a.tr.srtt, a.tr.minRTT = 300*time.Millisecond, 10*time.Millisecond
	a.probe = probeState{}
	recv(a, 4*time.Second)
	var pings []time.Duration
	for at := 4 * time.Second; at <= 5200*time.Millisecond; at += 10 * time.Millisecond {
		recv(b, at)
		if ping, _, _ := s.probeLocked(t0.Add(at), nil, nil); len(ping) == 1 {
			pings = append(pings, at-4*time.Second)
		}
	}
	if len(pings) != 7 || pings[0] != 900*time.Millisecond || pings[1] != 950*time.Millisecond {
		t.Errorf("pings at %v after the last packet, want 7 from 900 ms, 50 ms apart", pings)
	}
	// A path the server does not use is not silent while nothing else
	// arrives either: no ping when every path is quiet.
	c2, _ := (&Config{}).withDefaults()
	s2, _ := newSession(c2, true, nil)
	q := &path{tr: &tracer{srtt: 10 * time.Millisecond, lastRecv: t0}, qtr: newTransportStub()}
	s2.slots[0] = q
	if ping, _, _ := s2.probeLocked(t0.Add(5*time.Second), nil, nil); len(ping) != 0 {
		t.Errorf("pinged a quiet path while nothing else arrived")
	}
}

// newTransportStub is a non-nil transport for paths that probeLocked may
// consider rejoining (it never dials in these tests).
func newTransportStub() *quic.Transport { return &quic.Transport{} }

// sooner picks the earlier deadline; the zero time is no deadline.
func TestSooner(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	for _, tc := range []struct{ a, b, want time.Time }{
		{time.Time{}, time.Time{}, time.Time{}},
		{time.Time{}, t1, t1},
		{t1, time.Time{}, t1},
		{t0, t1, t0},
		{t1, t0, t0},
	} {
		if got := sooner(tc.a, tc.b); !got.Equal(tc.want) {
			t.Errorf("sooner(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
