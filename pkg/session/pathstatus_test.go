package session

import (
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/sched"
)

// sentOn is what the server sent on path id so far, bytes.
func sentOn(s *Session, id sched.PathID) uint64 {
	for _, p := range s.Stats().Paths {
		if p.ID == id {
			return p.BytesSent
		}
	}
	return 0
}

// RFC 10069: "PATH_STATUS_BACKUP ... indicates that the path should only be
// used for sending when no other path with the status 'available' is
// usable". The client's SetPathStatus reaches the server's scheduler, and
// minRTT stops sending new data on the path while the other has room; set
// available again, the path carries data again. A status with an older
// sequence number changes nothing.
func TestPeerPathStatusReachesSender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
		b := emu.LinkConfig{RateBps: 20e6, Delay: 6 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		st, _ := tb.cli.OpenStream()
		st.Write([]byte("GET"))
		st.Close()
		peer := accept(t, tb.srv, time.Second)
		readAll(t, peer, time.Second)
		go func() { peer.Write(make([]byte, 40<<20)); peer.Close() }()
		go io.Copy(io.Discard, st)

		time.Sleep(time.Second)
		if sentOn(tb.srv, 1) == 0 {
			t.Fatal("path 1 carried nothing before the status change")
		}
		if err := tb.cli.SetPathStatus(1, PathBackup); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // the status arrives; queued segments drain
		before, other := sentOn(tb.srv, 1), sentOn(tb.srv, 0)
		time.Sleep(2 * time.Second)
		got, gotOther := sentOn(tb.srv, 1)-before, sentOn(tb.srv, 0)-other
		t.Logf("in 2 s as a backup: path 1 sent %d bytes, path 0 %d", got, gotOther)
		if got > 64<<10 || gotOther < 4e6 {
			t.Errorf("backup path 1 sent %d bytes in 2 s (path 0 %d): want (almost) nothing while path 0 has room", got, gotOther)
		}
		// A late status with an older sequence number is ignored.
		tb.srv.mu.Lock()
		for _, p := range tb.srv.slots {
			if p != nil && p.id == 1 {
				(*frameSink)(tb.srv).PathStatus(1, 0, false)
				if !p.peerBackup {
					t.Error("an older status overwrote a newer one")
				}
			}
		}
		tb.srv.mu.Unlock()
		if err := tb.cli.SetPathStatus(1, PathAvailable); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		before = sentOn(tb.srv, 1)
		time.Sleep(time.Second)
		if got := sentOn(tb.srv, 1) - before; got < 1e6 {
			t.Errorf("available again, path 1 sent only %d bytes in 1 s", got)
		}
		for _, p := range tb.srv.Stats().Paths {
			if p.Backup {
				t.Errorf("server still counts path %d as a backup", p.ID)
			}
		}
		if err := tb.cli.SetPathStatus(7, PathBackup); err != ErrNoSuchPath {
			t.Errorf("status of a path that does not exist: %v", err)
		}
	})
}

// The first path can be a backup from the start (DialPath), and the server
// learns it: the client sends one PATH_STATUS for its path 0, marked a
// backup, as it opens or with its first records. (On the harness, each end
// in turn.)
func TestFirstPathBackup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClientPath(t, nil, peerParams, PathOptions{Backup: true})
		st, _ := tc.s.OpenStream()
		st.Write([]byte("x")) // the status travels with the first records
		var status []pathStatusFrame
		fs := without(tc.collect(100 * time.Millisecond)[0])
		for _, pf := range tc.opening { // it may go before any record
			fs = append(fs, pf.f)
		}
		for _, f := range fs {
			if s, ok := f.(pathStatusFrame); ok {
				status = append(status, s)
			}
		}
		if len(status) != 1 || status[0].Path != uint64(tc.paths[0].id) || !status[0].Backup {
			t.Errorf("the client sent %v, want one PATH_STATUS marking path %d a backup", status, tc.paths[0].id)
		}
		if ps := tc.s.Stats().Paths; len(ps) != 1 || !ps[0].Backup {
			t.Errorf("client's view of the first path: %+v, want a backup", ps)
		}
	})
	// The server learns it from that frame.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, pathStatusFrame{Path: uint64(tc.paths[0].id), Seq: 0, Backup: true}, dataFrame{ID: 0, Data: "x"})
		tc.wantAck("the peer's first records", 0, 1)
		if ps := tc.s.Stats().Paths; len(ps) != 1 || !ps[0].Backup {
			t.Errorf("server's view of the first path: %+v, want a backup", ps)
		}
	})
}
