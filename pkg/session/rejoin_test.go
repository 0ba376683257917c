package session

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/wire"
)

// A path that is being joined again after an outage takes no segments
// (probe.go: the fresh connection replaces it, "its unacknowledged data
// already reinjected on the other paths"): its quic-go connection still
// waits out the probe timer it backed off through the outage (failure.go,
// graceUntil), so a segment handed to it waits there until the new
// connection replaces it or, if the link goes dark again, until the path
// fails anew. TestCloseCancelsRejoin found one: a window update
// (RecMaxData, 6 bytes) that the client's scheduler put on path 0 in the
// pass that saw its first packet after the outage, before the same pass
// marked it rejoining; the link went down again and Close waited
// 0.49-1.6 s for its acknowledgement.
//
// Here the client uploads over two paths; path 0 is down for 2 s, comes
// back, and goes dark again as the client starts joining it again. What
// the server reads must not stand still for longer than path 1 needs.
func TestRejoiningPathTakesNoSegments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		st, _ := tb.cli.OpenStream()
		go func() {
			buf := make([]byte, 64<<10)
			for {
				if _, err := st.Write(buf); err != nil {
					return
				}
			}
		}()
		peer := accept(t, tb.srv, time.Second)
		var read atomic.Int64
		go func() {
			buf := make([]byte, 64<<10)
			for {
				n, err := peer.Read(buf)
				read.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		time.Sleep(500 * time.Millisecond)
		darkDuringRejoin(t, tb)
		queued := func() uint64 {
			tb.cli.mu.Lock()
			defer tb.cli.mu.Unlock()
			for _, p := range tb.cli.slots {
				if p != nil && p.probe.rejoining {
					return p.queued()
				}
			}
			return 0
		}
		t.Logf("path 0 holds %d bytes of segments quic-go has not taken as the client starts joining it again", queued())
		last, lastMove := read.Load(), time.Now()
		var stall time.Duration
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
			if n := read.Load(); n != last {
				last, lastMove = n, time.Now()
			}
			stall = max(stall, time.Since(lastMove))
		}
		t.Logf("the server's reads stood still for at most %v in the 2 s after path 0 went dark again", stall)
		// Path 1 delivers within its RTT (30 ms) and a flight's
		// serialisation; 200 ms leaves room for quic-go's pacing and ACKs.
		if stall > 200*time.Millisecond {
			t.Errorf("the server's reads stood still for %v after path 0 went dark during its rejoin, want ≤ 200 ms: data waits on a path being replaced", stall)
		}
	})
}

// A path being joined again is held back only while another path can carry
// the data. The rejoin's dial may take up to Config.HandshakeTimeout (30 s
// by default: a busy server, a handshake limit reached); if the path is the
// session's only live one, holding it back stops everything, the window
// updates too, and the peer's writes time out. CI run of b2f15d2: one of
// TestLoadHostile's 200 downloads on 2 loopback paths was reset by the
// server's 30 s write timeout after 655,280 bytes (H3_INTERNAL_ERROR).
//
// Here the session has one path, marked as being joined again (as
// probeLocked does when its first packet after a long outage arrives) with
// no dial under way that would end it: a 1 MiB upload must still arrive.
func TestSoleRejoiningPathStillCarries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, false, emu.PathSpec{Up: a, Down: a})
		defer tb.close()
		st, _ := tb.cli.OpenStream()
		st.Write([]byte("x"))
		peer := accept(t, tb.srv, time.Second)
		tb.cli.mu.Lock()
		n := 0
		for _, p := range tb.cli.slots {
			if p != nil {
				p.probe.rejoining = true
				n++
			}
		}
		tb.cli.mu.Unlock()
		if n != 1 {
			t.Fatalf("the client has %d paths, want 1", n)
		}
		go func() { st.Write(make([]byte, 1<<20)); st.Close() }()
		start := time.Now()
		got := readAll(t, peer, 10*time.Second)
		if len(got) != 1+1<<20 {
			t.Fatalf("the server read %d bytes in %v, want %d: the only path, being joined again, carried nothing", len(got), time.Since(start), 1+1<<20)
		}
		// 1 MiB at 20 Mbit/s is about 0.42 s; 2 s leaves room for slow start.
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("1 MiB took %v over the only path, want ≤ 2 s", el)
		}
	})
}

// Acks go on the lowest-RTT live path (ackPathLocked), and a path being
// joined again is not live for them either while another path is: like a
// segment, an Ack sent on it waits behind quic-go's backed-off probe timer,
// or is lost if the link goes dark again, and the peer's sending waits for
// it. The client downloads over two paths; path 0 (the lower RTT) is down
// for 2 s, comes back, and goes dark again as the client starts joining it
// again: from 20 ms after that the client must send its Acks on path 1.
func TestRejoiningPathTakesNoAcks(t *testing.T) {
	var client atomic.Pointer[Session]
	var rejoinAt atomic.Int64 // unix ns when path 0 started rejoining (0: not yet)
	var onRejoining atomic.Int32
	sendTap = func(s *Session, p *path, kind sendKind, b []byte) {
		at := rejoinAt.Load()
		if s != client.Load() || kind != sentDatagram || len(b) == 0 || b[0] != wire.TypeAck || at == 0 {
			return
		}
		if p.slot == 0 && time.Now().UnixNano() > at+int64(20*time.Millisecond) {
			onRejoining.Add(1)
		}
	}
	defer func() { sendTap = nil }()
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
		b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
		defer tb.close()
		client.Store(tb.cli)
		startDownload(t, tb, 64<<20)
		time.Sleep(500 * time.Millisecond)
		darkDuringRejoin(t, tb)
		rejoinAt.Store(time.Now().UnixNano())
		time.Sleep(time.Second)
		if n := onRejoining.Load(); n != 0 {
			t.Errorf("the client sent %d Acks on path 0 in the second after it started joining it again, path 1 live, want 0", n)
		}
	})
}
