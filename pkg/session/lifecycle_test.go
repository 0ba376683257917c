package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// trackedPC records whether a socket was closed.
type trackedPC struct {
	*emu.Conn
	closed atomic.Bool
}

func (c *trackedPC) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// Issue 19, finding 2: "Close while AddPath is joining leaks the path. The
// joining path's transport is added to the owned list after closeLocked
// has copied that list. It is never closed, and its socket stays in use.
// This happened in 5 of 21 close timings." Here the session closes at 21
// moments, from before the join's first packet to after it completed; each
// time the joining socket must be closed once the drain is over, AddPath
// must return, and the server's session must end with no path.
func TestCloseDuringAddPathClosesItsSocket(t *testing.T) {
	link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
	// Problems are collected, not reported inside the bubble: a failure
	// there ends the test (synctest.Test calls FailNow), and every timing
	// should run.
	var problems []string
	leaks := 0
	for i := range 21 {
		at := time.Duration(i) * 2 * time.Millisecond // the join takes about 20 ms (2 RTTs)
		synctest.Test(t, func(t *testing.T) {
			tb := newTestbed(t, 1, nil)
			defer tb.close()
			pc, _, err := tb.topo.AddPath(emu.PathSpec{Up: link, Down: link})
			if err != nil {
				t.Fatal(err)
			}
			tpc := &trackedPC{Conn: pc}
			joined := make(chan error, 1)
			go func() {
				_, err := tb.cli.AddPath(context.Background(), tpc, tb.topo.Server.LocalAddr(), PathOptions{})
				joined <- err
			}()
			time.Sleep(at)
			tb.cli.CloseWithError(0, "")
			select {
			case err := <-joined:
				if err != nil && !errors.Is(err, ErrClosed) {
					problems = append(problems, fmt.Sprintf("close at %v: AddPath: %v, want nil or ErrClosed", at, err))
				}
			case <-time.After(time.Second):
				problems = append(problems, fmt.Sprintf("close at %v: AddPath still joining 1 s after the session closed", at))
			}
			time.Sleep(maxDrain + time.Second)
			if !tpc.closed.Load() {
				leaks++
				problems = append(problems, fmt.Sprintf("close at %v: the joining path's socket is still open %v later", at, maxDrain+time.Second))
			}
			select {
			case <-tb.srv.Done():
			default:
				problems = append(problems, fmt.Sprintf("close at %v: the server's session did not end", at))
			}
			if n := livePaths(tb.srv); n != 0 {
				problems = append(problems, fmt.Sprintf("close at %v: the server's session holds %d paths", at, n))
			}
		})
	}
	if len(problems) > 0 {
		t.Errorf("%d of 21 close timings left the joining socket open:\n%s", leaks, strings.Join(problems, "\n"))
	}
}

// livePaths is how many paths s still holds (Paths lists the ones it had
// when it ended, once it has).
func livePaths(s *Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.npaths
}

// rejoining reports whether a path of s is joining again after an outage.
func rejoining(s *Session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.slots {
		if p != nil && p.probe.rejoining {
			return true
		}
	}
	return false
}

// startDownload has the client ask for size bytes ("GET" on a stream of
// its own) and read them into io.Discard, the server answering from a
// goroutine of its own.
func startDownload(t *testing.T, tb *testbed, size int) {
	t.Helper()
	st, _ := tb.cli.OpenStream()
	st.Write([]byte("GET"))
	st.Close()
	peer := accept(t, tb.srv, time.Second)
	readAll(t, peer, time.Second)
	go func() { peer.Write(make([]byte, size)); peer.Close() }()
	go io.Copy(io.Discard, st)
}

// darkDuringRejoin takes path 0's link down for 2 s, brings it back, waits
// (at most 5 s) until the client starts joining path 0 again, and takes the
// link down again at that moment: the rejoin dials into a black hole.
func darkDuringRejoin(t *testing.T, tb *testbed) {
	t.Helper()
	tb.topo.Links[0].SetDown(true)
	time.Sleep(2 * time.Second)
	tb.topo.Links[0].SetDown(false)
	deadline := time.Now().Add(5 * time.Second)
	for !rejoining(tb.cli) {
		if time.Now().After(deadline) {
			t.Fatal("the client did not start joining path 0 again within 5 s of its return")
		}
		time.Sleep(time.Millisecond)
	}
	tb.topo.Links[0].SetDown(true)
}

// Issue 19, finding 6: "Close can hang. rejoinPath dials with
// context.Background(), so Close can wait up to 10 s for a rejoin." Path 0
// comes back after a 2 s outage, the client starts joining it again, and
// the link goes dark at that moment: the rejoin dials into a black hole.
// Close must not wait for that dial (it has nothing of its own
// unacknowledged, so it has nothing to wait for).
func TestCloseCancelsRejoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		startDownload(t, tb, 40<<20)
		time.Sleep(500 * time.Millisecond)
		darkDuringRejoin(t, tb)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- tb.cli.Close() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("Close did not return within a minute")
		}
		el := time.Since(start)
		t.Logf("Close returned %v after it was called, a rejoin dialling", el)
		if el > 50*time.Millisecond {
			t.Errorf("Close took %v while a rejoin was dialling, want ≤ 50 ms", el)
		}
	})
}

// Issue 19, finding 3: "After the peer closes gracefully, Close() and Err()
// return nil, though only 28,800 of 819,200 bytes that Write accepted were
// acknowledged. Close's doc says otherwise." The client writes 819,200
// bytes; the server accepts the stream, reads nothing and closes: the
// client's blocked Write, its stream Close, Err and Close must all fail and
// say how much was not acknowledged.
func TestPeerCloseReportsUnacknowledgedData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbedCfgs(t, 1, nil, &Config{SendBuffer: 128 << 10}, false,
			emu.PathSpec{Up: emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}, Down: emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}})
		defer tb.close()
		st, err := tb.cli.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		wrote := make(chan error, 1)
		go func() {
			_, err := st.Write(make([]byte, 819_200))
			wrote <- err
		}()
		accept(t, tb.srv, time.Second)
		time.Sleep(50 * time.Millisecond) // some data arrives, most waits on the unread stream's window
		if err := tb.srv.Close(); err != nil {
			t.Fatalf("server Close: %v", err)
		}
		var werr error
		select {
		case werr = <-wrote:
		case <-time.After(5 * time.Second):
			t.Fatal("the blocked Write did not return within 5 s of the peer's close")
		}
		if !errors.Is(werr, ErrUnacknowledged) {
			t.Errorf("blocked Write: %v, want ErrUnacknowledged", werr)
		}
		if err := st.Close(); !errors.Is(err, ErrUnacknowledged) {
			t.Errorf("stream Close: %v, want ErrUnacknowledged", err)
		}
		if err := tb.cli.Err(); !errors.Is(err, ErrUnacknowledged) {
			t.Errorf("Err: %v, want ErrUnacknowledged", err)
		}
		err = tb.cli.Close()
		if !errors.Is(err, ErrUnacknowledged) {
			t.Fatalf("Close: %v, want ErrUnacknowledged", err)
		}
		// The count covers at least the 819,200 − 512 KiB (the stream's
		// window) the server could not have taken, and at most what was
		// written plus framing.
		if n := unackedCount(t, err); n < 819_200-512<<10 || n > 819_200+819_200/100 {
			t.Errorf("Close reports %d bytes unacknowledged, want in [%d, %d]", n, 819_200-512<<10, 819_200+819_200/100)
		}
		if c := context.Cause(tb.cli.Context()); !errors.Is(c, ErrUnacknowledged) {
			t.Errorf("Context cause %v, want ErrUnacknowledged", c)
		}
	})
}

// unackedCount extracts N from "... N bytes this end wrote were never
// acknowledged".
func unackedCount(t *testing.T, err error) int {
	t.Helper()
	msg := err.Error()
	i := strings.Index(msg, " bytes this end wrote")
	j := strings.LastIndex(msg[:max(i, 0)], " ")
	if i < 0 || j < 0 {
		t.Fatalf("no byte count in %q", msg)
	}
	var n int
	for _, c := range msg[j+1 : i] {
		n = 10*n + int(c-'0')
	}
	return n
}

// The other half of finding 3: when everything written was read and
// acknowledged, the peer's clean close is a clean end. (On the harness: the
// peer checks it got every byte and the FIN, and closes as a server
// would.)
func TestPeerCloseAfterFullTransferIsClean(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			st.Write(make([]byte, 819_200))
			st.Close()
		}()
		// The peer reads every byte and the FIN, acknowledging as they
		// arrive, then closes cleanly saying it received every segment.
		var got, fins int
		for range 300 {
			for _, f := range tc.collect(10 * time.Millisecond)[0] {
				switch f := f.(type) {
				case dataFrame:
					got += len(f.Data)
				case finFrame:
					fins++
				}
			}
			tc.ackAll(0)
			if fins > 0 && got >= 819_200 {
				break
			}
		}
		if got != 819_200 || fins != 1 {
			t.Fatalf("the peer got %d bytes and %d FINs, want 819,200 and one", got, fins)
		}
		tc.advance(50 * time.Millisecond) // the last Ack arrives
		tc.mu.Lock()
		n := tc.nextSeg
		tc.mu.Unlock()
		tc.paths[0].conn.CloseWithError(quic.ApplicationErrorCode(codeNoError), cleanCloseReason(n))
		select {
		case <-tc.s.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the session did not end within 5 s of the peer's close")
		}
		if err := tc.s.Err(); err != nil {
			t.Errorf("Err: %v, want nil", err)
		}
		if err := tc.s.Close(); err != nil {
			t.Errorf("Close: %v, want nil", err)
		}
		if c := context.Cause(tc.s.Context()); c != ErrClosed {
			t.Errorf("Context cause %v, want ErrClosed", c)
		}
	})
	// The closing end: a server that read everything closes cleanly, and
	// its close tells the peer how many segments it received.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		const n = 400_000 // within the server's stream window (the peer does not wait for credit)
		tc.writeFrames(0, dataFrame{ID: 0, Data: strings.Repeat("u", n)}, finFrame{ID: 0})
		peer := accept(t, tc.s, time.Second)
		if got := len(readAll(t, peer, 10*time.Second)); got != n {
			t.Fatalf("server read %d bytes, want %d", got, n)
		}
		tc.mu.Lock()
		segs := tc.codec.(*wireV4).seq
		tc.mu.Unlock()
		if err := tc.s.Close(); err != nil {
			t.Fatalf("server Close: %v", err)
		}
		if c := tc.wantClose("the clean close", 0, uint64(codeNoError)); c.Reason != cleanCloseReason(segs) {
			t.Errorf("the close says %q, want %q", c.Reason, cleanCloseReason(segs))
		}
	})
}

// CloseWithError's code and reason reach the peer as an *ApplicationError
// with Remote set (RFC 9000 §10.2: "an endpoint ... sends a
// CONNECTION_CLOSE frame ... the application error code"), on every path,
// and the session's own errors never look like one. (On the harness, each
// end in turn: the close on the wire is checked too.)
func TestCloseWithErrorCodeReachesPeer(t *testing.T) {
	const code = ApplicationErrorCode(1<<62 - 1)
	reason := "going away: " + strings.Repeat("é", 400) // cut to maxCloseReason bytes on the wire
	// The closing end: every path carries the application's close.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, harnessLink(5*time.Millisecond), harnessLink(5*time.Millisecond))
		tc.s.CloseWithError(code, reason)
		for p := range 2 {
			c := tc.wantClose("the application's close on every path", p, uint64(codeApplication))
			var ae *ApplicationError
			if err := parseAppClose(c.Reason); !errors.As(err, &ae) || ae.Code != code || !strings.HasPrefix(reason, ae.Reason) || len(ae.Reason) < maxCloseReason-1 || len(ae.Reason) > maxCloseReason {
				t.Errorf("path %d: the close carries %v, want code %#x and the reason's first %d bytes", p, err, uint64(code), maxCloseReason)
			}
		}
		var ae *ApplicationError
		if err := tc.s.Err(); !errors.As(err, &ae) || ae.Remote || ae.Code != code || ae.Reason != reason {
			t.Errorf("client Err: %v, want its own *ApplicationError", err)
		}
	})
	// The end that receives it: an *ApplicationError with Remote set, in
	// Err, in a stream's Read and in the Context's cause.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil, harnessLink(5*time.Millisecond), harnessLink(5*time.Millisecond))
		tc.writeFrames(0, dataFrame{ID: 0, Data: "x"})
		peer := accept(t, tc.s, time.Second)
		wire := appCloseReason(&ApplicationError{Code: code, Reason: reason})
		for _, pp := range tc.paths {
			pp.conn.CloseWithError(quic.ApplicationErrorCode(codeApplication), wire)
		}
		select {
		case <-tc.s.Done():
		case <-time.After(time.Second):
			t.Fatal("the server's session did not end within 1 s")
		}
		var ae *ApplicationError
		if err := tc.s.Err(); !errors.As(err, &ae) {
			t.Fatalf("server Err: %v, want an *ApplicationError", err)
		}
		if !ae.Remote || ae.Code != code || !strings.HasPrefix(reason, ae.Reason) || len(ae.Reason) < maxCloseReason-1 || len(ae.Reason) > maxCloseReason {
			t.Errorf("server sees %+v (reason %d bytes), want Remote, code %#x, the reason's first %d bytes", *ae, len(ae.Reason), uint64(code), maxCloseReason)
		}
		if !errors.Is(tc.s.Err(), &ApplicationError{Code: code, Remote: true}) {
			t.Errorf("errors.Is(%v, remote code) = false", tc.s.Err())
		}
		if _, err := io.ReadAll(peer); !errors.As(err, &ae) || !ae.Remote {
			t.Errorf("server stream Read: %v, want the peer's *ApplicationError", err)
		}
		if c := context.Cause(tc.s.Context()); !errors.As(c, &ae) || !ae.Remote {
			t.Errorf("server Context cause %v, want the peer's *ApplicationError", c)
		}
	})
	// The session's own errors keep their identity: a protocol violation
	// is ErrProtocol here and codeProtocol on the wire, never an
	// application's close.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		tc.s.fail(errors.Join(ErrProtocol, errors.New("test")))
		<-tc.s.Done()
		if !errors.Is(tc.s.Err(), ErrProtocol) {
			t.Errorf("client Err: %v, want ErrProtocol", tc.s.Err())
		}
		tc.wantClose("an internal close carries the session's code", 0, uint64(codeProtocol))
	})
}

// A malformed application close is a protocol error, not a panic or a
// made-up code.
func TestParseAppClose(t *testing.T) {
	for _, tc := range []struct {
		reason string
		code   ApplicationErrorCode
		text   string
		ok     bool
	}{
		{"0 ", 0, "", true},
		{"42 bye", 42, "bye", true},
		{"18446744073709551615 max", 1<<64 - 1, "max", true},
		{"", 0, "", false},
		{"x y", 0, "", false},
		{"-1 y", 0, "", false},
		{"18446744073709551616 overflow", 0, "", false},
	} {
		err := parseAppClose(tc.reason)
		var ae *ApplicationError
		if got := errors.As(err, &ae); got != tc.ok {
			t.Errorf("parseAppClose(%q) = %v, want an *ApplicationError: %v", tc.reason, err, tc.ok)
			continue
		}
		if !tc.ok {
			if !errors.Is(err, ErrProtocol) {
				t.Errorf("parseAppClose(%q) = %v, want ErrProtocol", tc.reason, err)
			}
			continue
		}
		if ae.Code != tc.code || ae.Reason != tc.text || !ae.Remote {
			t.Errorf("parseAppClose(%q) = %+v, want code %d reason %q remote", tc.reason, *ae, tc.code, tc.text)
		}
		if back := appCloseReason(&ApplicationError{Code: tc.code, Reason: tc.text}); back != tc.reason {
			t.Errorf("appCloseReason round trip: %q, want %q", back, tc.reason)
		}
	}
}

// Issue 19, finding 7: "Config.Logf is called with s.mu or the listener's
// lock held, so a Logf that calls Stats() or Refused() deadlocks." Here
// Logf calls both sessions' Stats and the listener's Refused on every
// message, and the sessions log (a close with an error, a rejected join).
// A deadlock on a mutex stops a synctest bubble's clock, so the watchdog
// runs outside the bubble, in real time.
func TestLogfMayCallIntoTheSession(t *testing.T) {
	var cli, srv atomic.Pointer[Session]
	var ln atomic.Pointer[Listener]
	var calls atomic.Int64
	logf := func(string, ...any) {
		calls.Add(1)
		if s := cli.Load(); s != nil {
			s.Stats()
		}
		if s := srv.Load(); s != nil {
			s.Stats()
		}
		if l := ln.Load(); l != nil {
			l.Refused()
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		synctest.Test(t, func(t *testing.T) {
			cfg := &Config{Logf: logf}
			tb := newTestbed(t, 1, cfg)
			defer tb.close()
			cli.Store(tb.cli)
			srv.Store(tb.srv)
			ln.Store(tb.ln)
			tb.cli.fail(errors.Join(ErrProtocol, errors.New("test"))) // logs "closing" under s.mu at both ends
			<-tb.srv.Done()
			tb.cli.Close()
			tb.srv.Close()
		})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("deadlock: a Logf that calls Stats and Refused did not return within 30 s (real time)")
	}
	if calls.Load() == 0 {
		t.Error("Logf was never called: the test proves nothing")
	}
}

// Path events under an outage (issue 19, finding 10: "path events
// (joined, failed, recovered, removed, status changed) without polling
// Stats()"): the client uploads over two paths and path 0 goes dark for
// 600 ms, shorter than a rejoin's threshold. The client sees path 1 join,
// path 0 fail within 1 s of the outage's start and recover within 1 s of
// its end, path 1 turn backup, then every path removed and the channel
// closed.
func TestPathEventsOnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const outStart, outEnd = 1 * time.Second, 1600 * time.Millisecond
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond, Outages: []emu.Window{{Start: outStart, End: outEnd}}}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, false, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		start := tb.topo.Net.Start()
		evs := tb.cli.PathEvents()
		if tb.cli.PathEvents() != evs {
			t.Error("PathEvents returned two channels")
		}
		got := make(chan []PathEvent, 1)
		go func() {
			var all []PathEvent
			for e := range evs {
				all = append(all, e)
			}
			got <- all
		}()
		id1, err := tb.cli.AddPath(context.Background(), tb.topo.Clients[1], tb.topo.Server.LocalAddr(), PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		id0 := tb.cli.Paths()[0]
		st, _ := tb.cli.OpenStream()
		go func() { st.Write(make([]byte, 8<<20)); st.Close() }()
		peer := accept(t, tb.srv, time.Second)
		readAll(t, peer, time.Minute)
		if err := tb.cli.SetPathStatus(id1, PathBackup); err != nil {
			t.Fatal(err)
		}
		tb.cli.Close()
		var all []PathEvent
		select {
		case all = <-got:
		case <-time.After(time.Second):
			t.Fatal("the events channel was not closed within 1 s of Close")
		}
		want := []struct {
			kind     PathEventKind
			id       any
			from, to time.Duration // when, from the network's start
		}{
			{PathJoined, id1, 0, outStart},
			{PathFailed, id0, outStart, outStart + time.Second},
			{PathRecovered, id0, outEnd, outEnd + time.Second},
			{PathStatusChanged, id1, outEnd, time.Hour},
			{PathRemoved, nil, outEnd, time.Hour},
			{PathRemoved, nil, outEnd, time.Hour},
		}
		if len(all) != len(want) {
			t.Fatalf("got %d events %v, want %d", len(all), all, len(want))
		}
		for i, w := range want {
			e := all[i]
			at := e.Time.Sub(start)
			if e.Kind != w.kind || (w.id != nil && e.Path != w.id) || at < w.from || at > w.to || e.Dropped != 0 {
				t.Errorf("event %d: %v on path %d at %v (dropped %d), want %v on path %v within [%v, %v]", i, e.Kind, e.Path, at, e.Dropped, w.kind, w.id, w.from, w.to)
			}
			if e.Local == nil || e.Remote == nil {
				t.Errorf("event %d: addresses %v, %v", i, e.Local, e.Remote)
			}
		}
		if !all[3].Backup {
			t.Error("status change: Backup false, want true")
		}
	})
}

// A full channel loses its oldest events, never blocks the session, and
// counts what it dropped.
func TestPathEventsDropOldest(t *testing.T) {
	s := &Session{now: time.Now}
	s.events.ch = make(chan PathEvent, maxPathEvents)
	p := &path{id: 3}
	for range maxPathEvents + 10 {
		s.pathEventLocked(p, PathFailed)
	}
	if n := len(s.events.ch); n != maxPathEvents {
		t.Fatalf("%d events queued, want %d", n, maxPathEvents)
	}
	var dropped int
	for range maxPathEvents {
		dropped += (<-s.events.ch).Dropped
	}
	if dropped != 10 {
		t.Errorf("events count %d drops, want 10", dropped)
	}
}
