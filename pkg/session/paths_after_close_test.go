package session

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Issue 20, item 7: "Session.Paths() is empty once the peer has closed." A
// closed session keeps answering with the paths it had when it ended, on
// both ends, so an application can still say which paths carried it.
func TestPathsAfterPeerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
		spec := emu.PathSpec{Up: link, Down: link}
		tb := newTestbedOn(t, 1, nil, true, spec, spec)
		defer tb.close()
		before := tb.cli.Paths()
		if len(before) != 2 {
			t.Fatalf("client has %d paths before the close, want 2", len(before))
		}
		// The server learns of the join when the path's first record lands.
		for i := 0; len(tb.srv.Paths()) < 2 && i < 100; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		srvBefore := tb.srv.Paths()
		if len(srvBefore) != 2 {
			t.Fatalf("server has %d paths before the close, want 2", len(srvBefore))
		}
		if err := tb.srv.Close(); err != nil {
			t.Fatalf("server Close: %v", err)
		}
		select {
		case <-tb.cli.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the client's session did not end within 5 s of the server's close")
		}
		if got := tb.cli.Paths(); !slices.Equal(got, before) {
			t.Errorf("client Paths after the peer closed = %v, want %v", got, before)
		}
		if got := tb.srv.Paths(); !slices.Equal(got, srvBefore) {
			t.Errorf("server Paths after its own close = %v, want %v", got, srvBefore)
		}
	})
}

// Issue 29: "RemoteAddr and LocalAddr never return nil while anyone holds
// the session: keep the last path's addresses after close, as quic-go keeps
// a closed connection's." At a8db118 both returned nil on both ends once
// the session had ended, and an HTTP/3 handler's RemoteAddr().String()
// crashed the server.
func TestAddrsAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
		spec := emu.PathSpec{Up: link, Down: link}
		tb := newTestbedOn(t, 1, nil, true, spec, spec)
		defer tb.close()
		type pair struct{ local, remote string }
		addrs := func(s *Session) pair {
			l, r := s.LocalAddr(), s.RemoteAddr()
			if l == nil || r == nil {
				t.Fatalf("LocalAddr %v, RemoteAddr %v: want neither nil", l, r)
			}
			return pair{l.String(), r.String()}
		}
		cliBefore, srvBefore := addrs(tb.cli), addrs(tb.srv)
		if err := tb.srv.Close(); err != nil {
			t.Fatalf("server Close: %v", err)
		}
		select {
		case <-tb.cli.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the client's session did not end within 5 s of the server's close")
		}
		// The last path removed is one of the session's paths, so its
		// addresses are the session's, if not necessarily the first path's.
		for name, c := range map[string]struct {
			s      *Session
			before pair
		}{"client": {tb.cli, cliBefore}, "server": {tb.srv, srvBefore}} {
			got := addrs(c.s)
			if got.local == "" || got.remote == "" || got.local == "mpquic:unknown" {
				t.Errorf("%s after close: %+v, want the last path's addresses (before: %+v)", name, got, c.before)
			}
		}
	})
}
