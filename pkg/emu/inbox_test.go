package emu

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"
)

// A reader that comes late gets the packets of all its links in delivery
// order, not link by link: here path 1's packets (10 ms one way) interleave
// with path 0's (5 ms, sent later).
func TestInboxLateReaderMergesLinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		topo, err := NewTopology(1,
			PathSpec{Up: LinkConfig{Delay: 5 * time.Millisecond}},
			PathSpec{Up: LinkConfig{Delay: 10 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		srv := net.UDPAddrFromAddrPort(topo.ServerAddr)
		// Arrivals: p1#0 at 10, p0#1 at 11, p1#2 at 12, p0#3 at 13 ms.
		topo.Clients[1].WriteTo([]byte{0}, srv)
		time.Sleep(2 * time.Millisecond)
		topo.Clients[1].WriteTo([]byte{2}, srv)
		time.Sleep(4 * time.Millisecond)
		topo.Clients[0].WriteTo([]byte{1}, srv)
		time.Sleep(2 * time.Millisecond)
		topo.Clients[0].WriteTo([]byte{3}, srv)
		time.Sleep(50 * time.Millisecond) // all four are due; nobody has read
		buf := make([]byte, 4)
		for want := byte(0); want < 4; want++ {
			if _, _, err := topo.Server.ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
			if buf[0] != want {
				t.Errorf("read packet %d, want %d (delivery order)", buf[0], want)
			}
		}
	})
}

// Stats count a packet as delivered at its delivery time even if nobody
// reads: 5 packets due by 25 ms of the 10 sent, one every 5 ms, over 5 ms.
func TestInboxStatsWithoutReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(1)
		defer n.Close()
		a, _ := n.Listen(addrA)
		if _, err := n.Listen(addrB); err != nil {
			t.Fatal(err)
		}
		l, err := n.Connect(addrA, addrB, LinkConfig{Delay: 5 * time.Millisecond}, LinkConfig{})
		if err != nil {
			t.Fatal(err)
		}
		dst := net.UDPAddrFromAddrPort(addrB)
		for range 10 {
			a.WriteTo(make([]byte, 100), dst)
			time.Sleep(5 * time.Millisecond)
		}
		// Now 50 ms: packets sent at 0..45 ms arrive at 5..50 ms.
		ab, _ := l.Stats()
		if ab.DeliveredPkts != 10 || ab.OfferedPkts != 10 {
			t.Errorf("at 50 ms: delivered %d of %d offered, want 10 of 10", ab.DeliveredPkts, ab.OfferedPkts)
		}
		a.WriteTo(make([]byte, 100), dst)
		time.Sleep(4 * time.Millisecond)
		if ab, _ = l.Stats(); ab.DeliveredPkts != 10 {
			t.Errorf("1 ms before the 11th packet is due: delivered %d, want 10", ab.DeliveredPkts)
		}
		time.Sleep(time.Millisecond)
		if ab, _ = l.Stats(); ab.DeliveredPkts != 11 {
			t.Errorf("when the 11th packet is due: delivered %d, want 11", ab.DeliveredPkts)
		}
	})
}

// A reader asleep with nothing in flight wakes when a packet sent later is
// due, to the nanosecond in virtual time; and when a sender adds a packet
// due earlier than the one it sleeps for.
func TestInboxReaderWakesOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		topo, err := NewTopology(1,
			PathSpec{Up: LinkConfig{Delay: 30 * time.Millisecond}},
			PathSpec{Up: LinkConfig{Delay: 3 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		start := time.Now()
		got := make(chan time.Duration, 2)
		go func() {
			buf := make([]byte, 8)
			for range 2 {
				if _, _, err := topo.Server.ReadFrom(buf); err != nil {
					return
				}
				got <- time.Since(start)
			}
		}()
		srv := net.UDPAddrFromAddrPort(topo.ServerAddr)
		time.Sleep(7 * time.Millisecond)
		topo.Clients[0].WriteTo([]byte{0}, srv) // due at 37 ms
		time.Sleep(time.Millisecond)
		topo.Clients[1].WriteTo([]byte{1}, srv) // due at 11 ms, before the reader's wake-up
		for _, want := range []time.Duration{11 * time.Millisecond, 37 * time.Millisecond} {
			if at := <-got; at != want {
				t.Errorf("read at %v, want %v", at, want)
			}
		}
	})
}

// A route added later that forwards through a link whose packets were
// collected by their receiver hands that link to a goroutine: packets
// queued before keep their order and times, and forwarded ones arrive.
func TestInboxTurnsEager(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		topo, err := NewTopology(1, PathSpec{Down: LinkConfig{Delay: 10 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		start := time.Now()
		cli := net.UDPAddrFromAddrPort(ClientAddr(0))
		for i := range 3 {
			topo.Server.WriteTo(binary.BigEndian.AppendUint32(nil, uint32(i)), cli)
			time.Sleep(4 * time.Millisecond)
		}
		// 12 ms: packet 0 is due, 1 and 2 are in flight. A flow now
		// follows path 0's link to its client side, then a 5 ms hop.
		far, err := topo.Net.NewLink(LinkConfig{}, LinkConfig{Delay: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		fa := netip.MustParseAddrPort("10.9.0.2:9")
		if err := topo.Net.Route(fa, ServerAddr, far, topo.Links[0]); err != nil {
			t.Fatal(err)
		}
		fc, err := topo.Net.Listen(fa)
		if err != nil {
			t.Fatal(err)
		}
		topo.Server.WriteTo([]byte{9, 9, 9, 9}, net.UDPAddrFromAddrPort(fa)) // due at 12+10+5 ms
		buf := make([]byte, 8)
		for i, want := range []time.Duration{10, 14, 18} {
			if _, _, err := topo.Clients[0].ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
			if seq, at := binary.BigEndian.Uint32(buf), time.Since(start); seq != uint32(i) || at < want*time.Millisecond {
				t.Errorf("read packet %d at %v, want %d not before %v ms", seq, at, i, want)
			}
		}
		if _, _, err := fc.ReadFrom(buf); err != nil {
			t.Fatal(err)
		}
		if at := time.Since(start); at != 27*time.Millisecond {
			t.Errorf("forwarded packet read at %v, want 27ms", at)
		}
	})
}

// Packets towards an address where nobody reads do not pile up: a sender
// that finds lazyBacklog packets due hands them over (here: dropped, since
// no Conn listens there), whether they were lost on the way or not.
func TestInboxBacklogBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(1)
		defer n.Close()
		a, _ := n.Listen(addrA)
		l, err := n.Connect(addrA, addrB, LinkConfig{Loss: 0.5}, LinkConfig{})
		if err != nil {
			t.Fatal(err)
		}
		dst := net.UDPAddrFromAddrPort(addrB)
		for range 3 * lazyBacklog {
			a.WriteTo(make([]byte, 100), dst)
		}
		l.ab.mu.Lock()
		held := l.ab.n
		l.ab.mu.Unlock()
		if held > lazyBacklog+1 {
			t.Errorf("link holds %d packets, want at most %d", held, lazyBacklog+1)
		}
		ab, _ := l.Stats()
		if got := ab.DroppedRecv + ab.DroppedLoss; got != 3*lazyBacklog {
			t.Errorf("dropped %d at the receiver + %d lost, want %d in all", ab.DroppedRecv, ab.DroppedLoss, 3*lazyBacklog)
		}
	})
}
