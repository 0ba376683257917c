package session

import (
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// idleLink is the path of the idle tests: 50 Mbit/s, 10 ms RTT.
var idleLink = emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}

// idleResult is what one end of an idle session did over the idle stretch.
type idleResult struct {
	sends   []sent
	counts  map[byte]int
	wakes   wakeCount
	pktsIn  uint64 // QUIC packets (UDP datagrams) this end received over the stretch, all paths
	pktsOut uint64 // QUIC packets this end sent
	rejoins uint64 // Stats().Rejoins at the end (the whole session)
	pings   uint64 // Stats().Pings at the end (the whole session)
}

// idlePair opens a session pair over npaths emulated paths (virtual time),
// runs one request/response on a stream it keeps open, waits settle for
// the acknowledgements to finish, then records for idle what each end sends
// and how often its loops wake. It returns the client's and the server's
// figures.
func idlePair(t *testing.T, c *capture, npaths int, cfg *Config, settle, idle time.Duration) (cli, srv idleResult) {
	synctest.Test(t, func(t *testing.T) {
		specs := make([]emu.PathSpec, npaths)
		for i := range specs {
			specs[i] = emu.PathSpec{Up: idleLink, Down: idleLink}
		}
		tb := newTestbedOn(t, 1, cfg, npaths > 1, specs...)
		defer tb.close()
		requestResponse(t, tb, 100, 1000)
		time.Sleep(settle)

		linkPkts := func() (up, down uint64) {
			for _, l := range tb.topo.Links {
				ab, ba := l.Stats()
				up += ab.DeliveredPkts
				down += ba.DeliveredPkts
			}
			return up, down
		}
		m := c.mark()
		up0, down0 := linkPkts()
		time.Sleep(idle)
		up1, down1 := linkPkts()
		for _, r := range []struct {
			res     *idleResult
			s       *Session
			in, out uint64
		}{{&cli, tb.cli, down1 - down0, up1 - up0}, {&srv, tb.srv, up1 - up0, down1 - down0}} {
			st := r.s.Stats()
			*r.res = idleResult{sends: c.since(m, r.s), counts: c.counts(m, r.s), wakes: c.wakeups(m, r.s), pktsIn: r.in, pktsOut: r.out,
				rejoins: st.Rejoins, pings: st.Pings}
		}
	})
	return cli, srv
}

// requestResponse sends a request of reqN bytes from the client on a new
// stream, which the server answers with respN bytes; the stream stays open.
func requestResponse(t *testing.T, tb *testbed, reqN, respN int) {
	t.Helper()
	st, err := tb.cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(make([]byte, reqN)); err != nil {
		t.Fatal(err)
	}
	peer := accept(t, tb.srv, 10*time.Second)
	if _, err := io.ReadFull(peer, make([]byte, reqN)); err != nil {
		t.Fatalf("server read: %v", err)
	}
	if _, err := peer.Write(make([]byte, respN)); err != nil {
		t.Fatal(err)
	}
	st.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(st, make([]byte, respN)); err != nil {
		t.Fatalf("client read: %v", err)
	}
	st.SetReadDeadline(time.Time{})
}

// Issue 19, finding 4: "Idle is not idle. ... When no other path is
// active, the probe deadline is already in the past, so the send pass
// re-arms a 1 ms timer about 1,000 times a second. An idle server session
// wakes 20 times a second", and What to build, item 5: "No timer fires
// while idle beyond what the user configured (keep-alive, path probing)."
//
// A session pair, 1 and 2 paths, after one request/response on a stream
// that stays open, is left alone for 10 virtual minutes: neither end sends
// a single session datagram or segment (quic-go's keep-alive PINGs, every
// 5 s per path, are QUIC's own and not seen here), and its loops do not
// wake, but for the server's IdleTimeout (5 minutes, re-armed while a
// stream is open).
func TestIdleSessionSendsNothing(t *testing.T) {
	const idle = 10 * time.Minute
	defer wantNoPastDeadlines(t, pastDeadlineCounts())
	for _, npaths := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dpaths", npaths), func(t *testing.T) { idleSendsNothing(t, npaths, nil, idle) })
	}
	// A scheduler that is not sched.Quick decides on the decider
	// (decider.go), which must sleep too.
	notQuick := &Config{NewScheduler: func() sched.Scheduler {
		m, _ := sched.New("minrtt")
		return struct{ sched.Scheduler }{m} // hides minRTT's Quick
	}}
	t.Run("2paths-not-quick", func(t *testing.T) { idleSendsNothing(t, 2, notQuick, idle) })
}

func idleSendsNothing(t *testing.T, npaths int, cfg *Config, idle time.Duration) {
	c := startCapture(t)
	cli, srv := idlePair(t, c, npaths, cfg, 5*time.Second, idle)
	for _, end := range []struct {
		name string
		r    idleResult
	}{{"client", cli}, {"server", srv}} {
		r := end.r
		t.Logf("%d paths, %s, %v idle: sent %s; %v; QUIC packets in %d, out %d",
			npaths, end.name, idle, formatCounts(r.counts), r.wakes, r.pktsIn, r.pktsOut)
		if len(r.sends) > 0 {
			t.Errorf("%d paths, %s: %d sends over %v idle, want none (%s); first ones:\n%s",
				npaths, end.name, len(r.sends), idle, formatCounts(r.counts), formatSends(r.sends, 8))
		}
		if r.rejoins > 0 || r.pings > 0 {
			t.Errorf("%d paths, %s: %d pings and %d rejoins over the session's life, want none", npaths, end.name, r.pings, r.rejoins)
		}
		// Nothing pokes an idle loop: not the ACKs of quic-go's
		// keep-alives (setRoomWakes), not its PINGs (no data).
		if got := r.wakes[loopSend][wokePoked]; got > 0 {
			t.Errorf("%d paths, %s: the send pass poked %d times in %v idle (%d QUIC packets in), want none", npaths, end.name, got, idle, r.pktsIn)
		}
		// Timer wake-ups: the server's IdleTimeout (DefaultIdleTimeout,
		// 5 min) at most once per 5 minutes, nothing else.
		if got := r.wakes[loopSend][wokeTimer]; got > int(idle/DefaultIdleTimeout)+1 {
			t.Errorf("%d paths, %s: the send pass's timer fired %d times in %v idle, want ≤ %d", npaths, end.name, got, idle, int(idle/DefaultIdleTimeout)+1)
		}
		if got := r.wakes[loopAck][wokePoked] + r.wakes[loopAck][wokeTimer]; got > 0 {
			t.Errorf("%d paths, %s: the ack pass woke %d times in %v idle, want none", npaths, end.name, got, idle)
		}
		if got := r.wakes[loopDecide][wokePoked] + r.wakes[loopDecide][wokeTimer]; got > 0 {
			t.Errorf("%d paths, %s: the decider woke %d times in %v idle, want none", npaths, end.name, got, idle)
		}
		// quic-go's keep-alives: the client's PING per defaultKeepAlive
		// (15 s) and its ACK, per path, give or take (a Listener sends none
		// of its own); the session adds none.
		if perPath := (r.pktsIn + r.pktsOut) / uint64(npaths); perPath > uint64(2*idle/defaultKeepAlive)+10 {
			t.Errorf("%d paths, %s: %d QUIC packets per path in %v idle, more than keep-alives need", npaths, end.name, perPath, idle)
		}
	}
}

// Issue 19, finding 5: "The first segment after idle also sends an
// AckReq, so every request/response exchange costs one datagram and one
// Ack more than needed." What to build, item 5: "A request after idle
// sends no AckReq it does not need."
//
// After a minute of idle, one request (100 bytes) and its response (1000
// bytes) cost each end one segment and one Ack, plus the receiver report
// of the interval in which the segment arrived; no AckReq (the Ack comes
// within one RTT and AckDelay, well before the persist timer's 50 ms), and,
// with 2 paths, no ping of the path that carried nothing.
func TestRequestAfterIdleNoExtraDatagram(t *testing.T) {
	defer wantNoPastDeadlines(t, pastDeadlineCounts())
	for _, npaths := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dpaths", npaths), func(t *testing.T) { requestAfterIdle(t, npaths) })
	}
}

func requestAfterIdle(t *testing.T, npaths int) {
	c := startCapture(t)
	synctest.Test(t, func(t *testing.T) {
		specs := make([]emu.PathSpec, npaths)
		for i := range specs {
			specs[i] = emu.PathSpec{Up: idleLink, Down: idleLink}
		}
		tb := newTestbedOn(t, 1, nil, npaths > 1, specs...)
		defer tb.close()
		requestResponse(t, tb, 100, 1000)
		time.Sleep(time.Minute)
		m := c.mark()
		requestResponse(t, tb, 100, 1000)
		time.Sleep(5 * time.Second)
		for _, end := range []struct {
			name string
			s    *Session
		}{{"client", tb.cli}, {"server", tb.srv}} {
			n := c.counts(m, end.s)
			t.Logf("%d paths, %s: %s\n%s", npaths, end.name, formatCounts(n), formatSends(c.since(m, end.s), 20))
			want := map[byte]int{wire.TypeSegment: 1, wire.TypeAck: 1, wire.TypeReport: 1}
			for typ, k := range n {
				if k > want[typ] {
					t.Errorf("%d paths, %s: sent %d %s for one request/response after idle, want ≤ %d (all: %s)",
						npaths, end.name, k, typeName(typ), want[typ], formatCounts(n))
				}
			}
			if st := end.s.Stats(); st.Rejoins > 0 {
				t.Errorf("%d paths, %s: %d paths joined again", npaths, end.name, st.Rejoins)
			}
		}
	})
}

// The loops' timer functions never return a deadline at or before their
// now (deadline.go: the loop would spin on it; issue 19, finding 4: "the
// probe deadline is already in the past"), through a 2-path download with
// a 5 s outage of one path, its recovery, and the idle time after it.
func TestNoPastDeadlines(t *testing.T) {
	before := pastDeadlineCounts()
	handoffRun(t, 2*time.Second, 7*time.Second)
	wantNoPastDeadlines(t, before)
}

// Issue 19, finding 4, at the probe's timer function: "When no other path
// is active, the probe deadline is already in the past". Two quiet paths
// of a client: one receives a keep-alive (a packet without data). The
// probe neither pings the other path nor returns a deadline at or before
// now, at any time over the next minute: only data can make a quiet path
// silent.
func TestProbeQuietPathsNoDeadline(t *testing.T) {
	c, _ := (&Config{}).withDefaults()
	s, err := newSession(c, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for slot := range 2 {
		s.slots[slot] = &path{slot: slot, tr: &tracer{srtt: 10 * time.Millisecond, lastRecv: t0}, qtr: newTransportStub()}
	}
	s.slots[1].tr.lastRecv = t0.Add(5 * time.Second) // a keep-alive on path 1, 5 s later
	for at := 5 * time.Second; at < time.Minute; at += 10 * time.Millisecond {
		now := t0.Add(at)
		ping, rejoin, next := s.probeLocked(now, nil, nil)
		if len(ping) > 0 || len(rejoin) > 0 {
			t.Fatalf("at %v: pinged %d and rejoined %d quiet paths", at, len(ping), len(rejoin))
		}
		if !next.IsZero() && !next.After(now) {
			t.Fatalf("at %v: deadline %v is not after now", at, next.Sub(t0))
		}
	}
}
