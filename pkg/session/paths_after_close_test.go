package session

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"
)

// Issue 20, item 7: "Session.Paths() is empty once the peer has closed." A
// closed session keeps answering with the paths it had when it ended, on
// both ends, so an application can still say which paths carried it. (On
// the harness, each end in turn: what it sends as it ends is checked too.)
func TestPathsAfterPeerClose(t *testing.T) {
	// The end that closes: its clean close goes out on both paths, and its
	// Paths stay.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil, harnessLink(5*time.Millisecond), harnessLink(5*time.Millisecond))
		before := tc.s.Paths()
		if len(before) != 2 {
			t.Fatalf("server has %d paths before the close, want 2", len(before))
		}
		if err := tc.s.Close(); err != nil {
			t.Fatalf("server Close: %v", err)
		}
		for p := range 2 {
			tc.wantClose("the clean close on each path", p, uint64(codeNoError))
		}
		if got := tc.s.Paths(); !slices.Equal(got, before) {
			t.Errorf("server Paths after its own close = %v, want %v", got, before)
		}
	})
	// The end the peer closes: its Paths stay, and (RFC 9000 §10.2.2: "An
	// endpoint that is in the draining state MUST NOT send any packets"; it
	// "MAY send a single packet containing a CONNECTION_CLOSE frame before
	// entering the draining state") at most one packet per path follows,
	// and one more where the session closed the path first: the peer's two
	// closes are processed one after the other, so the session may end on
	// the first and close the other path itself, which is then in the
	// closing state when the peer's close on it arrives (§10.2.1: "An
	// endpoint in the closing state sends a packet containing a
	// CONNECTION_CLOSE frame in response to any incoming packet that it
	// attributes to the connection"). That happened in about 1 run in 15.
	// A path that kept sending (a timer left running) would send many.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, harnessLink(5*time.Millisecond), harnessLink(5*time.Millisecond))
		before := tc.s.Paths()
		if len(before) != 2 {
			t.Fatalf("client has %d paths before the close, want 2", len(before))
		}
		for _, pp := range tc.paths {
			pp.conn.CloseWithError(quic.ApplicationErrorCode(codeNoError), cleanCloseReason(0))
		}
		select {
		case <-tc.s.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the client's session did not end within 5 s of the server's close")
		}
		// What the session sent before the closes reached it has arrived
		// two one-way delays after them.
		tc.advance(11 * time.Millisecond)
		sent := []uint64{tc.packetsFromSession(0), tc.packetsFromSession(1)}
		tc.advance(time.Second)
		for p := range 2 {
			if n := tc.packetsFromSession(p) - sent[p]; n > 2 {
				t.Errorf("path %d: %d packets while closing and draining, want at most 2", p, n)
			}
		}
		if got := tc.s.Paths(); !slices.Equal(got, before) {
			t.Errorf("client Paths after the peer closed = %v, want %v", got, before)
		}
	})
}

// Issue 29: "RemoteAddr and LocalAddr never return nil while anyone holds
// the session: keep the last path's addresses after close, as quic-go keeps
// a closed connection's." At a8db118 both returned nil on both ends once
// the session had ended, and an HTTP/3 handler's RemoteAddr().String()
// crashed the server. (On the harness, each end in turn.)
func TestAddrsAfterClose(t *testing.T) {
	type pair struct{ local, remote string }
	addrs := func(t *testing.T, s *Session) pair {
		l, r := s.LocalAddr(), s.RemoteAddr()
		if l == nil || r == nil {
			t.Fatalf("LocalAddr %v, RemoteAddr %v: want neither nil", l, r)
		}
		return pair{l.String(), r.String()}
	}
	// The last path removed is one of the session's paths, so its
	// addresses are the session's, if not necessarily the first path's.
	check := func(t *testing.T, name string, s *Session, before pair) {
		got := addrs(t, s)
		if got.local == "" || got.remote == "" || got.local == "mpquic:unknown" {
			t.Errorf("%s after close: %+v, want the last path's addresses (before: %+v)", name, got, before)
		}
	}
	// The server closes: the peer gets its clean close on both paths.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil, harnessLink(5*time.Millisecond), harnessLink(5*time.Millisecond))
		before := addrs(t, tc.s)
		if err := tc.s.Close(); err != nil {
			t.Fatalf("server Close: %v", err)
		}
		for p := range 2 {
			tc.wantClose("the clean close on each path", p, uint64(codeNoError))
		}
		check(t, "server", tc.s, before)
	})
	// The client, closed by its peer.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, harnessLink(5*time.Millisecond), harnessLink(5*time.Millisecond))
		before := addrs(t, tc.s)
		for _, pp := range tc.paths {
			pp.conn.CloseWithError(quic.ApplicationErrorCode(codeNoError), cleanCloseReason(0))
		}
		select {
		case <-tc.s.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the client's session did not end within 5 s of the server's close")
		}
		check(t, "client", tc.s, before)
	})
}
