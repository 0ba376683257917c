package emu

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sink reads every packet arriving at one Conn and sorts them by sender.
type sink struct {
	c  *Conn
	n  *Network
	wg sync.WaitGroup

	mu   sync.Mutex
	recv map[netip.AddrPort][]arrival
}

func newSink(n *Network, c *Conn) *sink {
	s := &sink{c: c, n: n, recv: map[netip.AddrPort][]arrival{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		buf := make([]byte, 65536)
		for {
			k, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			a := from.(*net.UDPAddr).AddrPort()
			s.mu.Lock()
			s.recv[a] = append(s.recv[a], arrival{
				seq:    binary.BigEndian.Uint32(buf),
				sentAt: time.Duration(binary.BigEndian.Uint64(buf[4:])),
				at:     n.Elapsed(),
				size:   k,
			})
			s.mu.Unlock()
		}
	}()
	return s
}

// from returns what arrived from addr; call it after the Network closed and
// wait returned.
func (s *sink) from(addr netip.AddrPort) []arrival { return s.recv[addr] }

func (s *sink) wait() { s.wg.Wait() }

// cbr sends count packets of size bytes from c to dst at rateBps (wire bits),
// each stamped with its sequence number and send time, on its own goroutine.
func cbr(n *Network, c *Conn, dst netip.AddrPort, rateBps float64, size, count int, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		gap := time.Duration(float64((size+Overhead)*8) / rateBps * 1e9)
		to := net.UDPAddrFromAddrPort(dst)
		for i := range count {
			buf := make([]byte, size)
			binary.BigEndian.PutUint32(buf, uint32(i))
			binary.BigEndian.PutUint64(buf[4:], uint64(n.Elapsed()))
			c.WriteTo(buf, to)
			time.Sleep(gap)
		}
	}()
}

// Two flows offering 8 Mbit/s each into one shared 10 Mbit/s link get at
// most 10 Mbit/s together, and its one drop-tail queue drops packets of both.
func TestSharedBottleneckRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bott := LinkConfig{RateBps: 10e6, Delay: 10 * time.Millisecond, QueueBytes: 30_000}
		topo, err := NewSharedTopology(1, []PathSpec{{}, {}}, []SharedLink{{Up: bott, Down: bott, Paths: []int{0, 1}}})
		if err != nil {
			t.Fatal(err)
		}
		s := newSink(topo.Net, topo.Server)
		var wg sync.WaitGroup
		const count = 4000 // 4 s at 8 Mbit/s with 1000-byte wire packets
		for _, c := range topo.Clients {
			cbr(topo.Net, c, topo.ServerAddr, 8e6, 972, count, &wg)
		}
		wg.Wait()
		time.Sleep(time.Second)
		topo.Close()
		s.wait()

		var sum float64
		for i, c := range topo.Clients {
			recv := s.from(c.AddrPort())
			r := wireRate(recv, time.Second, 3*time.Second)
			sum += r
			// FIFO drop-tail serves each flow in proportion to what it offers.
			within(t, "flow rate through the shared link (bit/s)", r, 3.5e6, 6.5e6)
			if lost := count - len(recv); lost < count/10 {
				t.Errorf("flow %d lost %d of %d packets, want >= 10%% (the queue is shared and over-full)", i, lost, count)
			}
			if up, _ := topo.Links[i].Stats(); up.DroppedQueue != 0 {
				t.Errorf("access link %d dropped %d packets, want 0", i, up.DroppedQueue)
			}
		}
		within(t, "sum of both flows (bit/s)", sum, 9.5e6, 10e6)
		up, _ := topo.Shared[0].Stats()
		if got, want := up.DroppedQueue, uint64(2*count)-uint64(len(s.from(topo.Clients[0].AddrPort()))+len(s.from(topo.Clients[1].AddrPort()))); got != want {
			t.Errorf("shared link DroppedQueue = %d, want every lost packet (%d)", got, want)
		}
	})
}

// Alone, one 8 Mbit/s flow through the same shared link loses nothing: the
// losses above come from sharing.
func TestSharedBottleneckOneFlowNoLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bott := LinkConfig{RateBps: 10e6, Delay: 10 * time.Millisecond, QueueBytes: 30_000}
		topo, err := NewSharedTopology(1, []PathSpec{{}, {}}, []SharedLink{{Up: bott, Down: bott, Paths: []int{0, 1}}})
		if err != nil {
			t.Fatal(err)
		}
		s := newSink(topo.Net, topo.Server)
		var wg sync.WaitGroup
		cbr(topo.Net, topo.Clients[0], topo.ServerAddr, 8e6, 972, 1000, &wg)
		wg.Wait()
		time.Sleep(time.Second)
		topo.Close()
		s.wait()
		if got := len(s.from(topo.Clients[0].AddrPort())); got != 1000 {
			t.Errorf("received %d of 1000 packets", got)
		}
	})
}

// A path's delay is the sum of its links' delays, in both directions, and
// the receiver sees the client's own address; a path not listed in the
// shared link keeps only its access link.
func TestSharedTopologyChains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		acc := func(d time.Duration) PathSpec {
			return PathSpec{Up: LinkConfig{Delay: d}, Down: LinkConfig{Delay: d}}
		}
		bott := LinkConfig{Delay: 20 * time.Millisecond}
		topo, err := NewSharedTopology(1, []PathSpec{acc(10 * time.Millisecond), acc(5 * time.Millisecond), acc(7 * time.Millisecond)},
			[]SharedLink{{Up: bott, Down: bott, Paths: []int{1, 0}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(topo.PathLinks[0]) != 2 || len(topo.PathLinks[2]) != 1 {
			t.Errorf("PathLinks lengths %d, %d, want 2 and 1", len(topo.PathLinks[0]), len(topo.PathLinks[2]))
		}
		buf := make([]byte, 16)
		for i, want := range []time.Duration{30, 25, 7} {
			start := time.Now()
			topo.Clients[i].WriteTo([]byte("ping"), net.UDPAddrFromAddrPort(topo.ServerAddr))
			_, from, err := topo.Server.ReadFrom(buf)
			if err != nil {
				t.Fatal(err)
			}
			if from.String() != topo.Clients[i].LocalAddr().String() || time.Since(start) != want*time.Millisecond {
				t.Errorf("up %d: from %v after %v, want from %v after %vms", i, from, time.Since(start), topo.Clients[i].LocalAddr(), want)
			}
			start = time.Now()
			topo.Server.WriteTo([]byte("pong"), from)
			_, from, err = topo.Clients[i].ReadFrom(buf)
			if err != nil {
				t.Fatal(err)
			}
			if from.String() != topo.Server.LocalAddr().String() || time.Since(start) != want*time.Millisecond {
				t.Errorf("down %d: from %v after %v, want from the server after %vms", i, from, time.Since(start), want)
			}
		}
		up, down := topo.Shared[0].Stats()
		if up.DeliveredPkts != 2 || down.DeliveredPkts != 2 {
			t.Errorf("shared link carried %d up and %d down, want 2 and 2", up.DeliveredPkts, down.DeliveredPkts)
		}
		topo.Close()
	})
}

// A flow added with AddFlow over path 0's link competes with path 0 in that
// link's queue and reaches its own server from its own address.
func TestAddFlowCompetes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := LinkConfig{RateBps: 10e6, Delay: 5 * time.Millisecond}
		topo, err := NewTopology(1, PathSpec{Up: l, Down: l})
		if err != nil {
			t.Fatal(err)
		}
		fc, fs, err := topo.AddFlow(PathSpec{Up: LinkConfig{Delay: 3 * time.Millisecond}}, topo.Links[0])
		if err != nil {
			t.Fatal(err)
		}
		if fc.AddrPort() != FlowClientAddr(0) || fs.AddrPort() != FlowServerAddr(0) {
			t.Errorf("flow endpoints %v, %v", fc.AddrPort(), fs.AddrPort())
		}
		srv, flow := newSink(topo.Net, topo.Server), newSink(topo.Net, fs)
		var wg sync.WaitGroup
		cbr(topo.Net, topo.Clients[0], topo.ServerAddr, 8e6, 972, 2000, &wg) // 2 s
		cbr(topo.Net, fc, fs.AddrPort(), 8e6, 972, 2000, &wg)
		wg.Wait()
		time.Sleep(time.Second)
		topo.Close()
		srv.wait()
		flow.wait()
		a := wireRate(srv.from(topo.Clients[0].AddrPort()), 500*time.Millisecond, 1500*time.Millisecond)
		b := wireRate(flow.from(fc.AddrPort()), 500*time.Millisecond, 1500*time.Millisecond)
		within(t, "path 0 rate (bit/s)", a, 3.5e6, 6.5e6)
		within(t, "cross flow rate (bit/s)", b, 3.5e6, 6.5e6)
		within(t, "together (bit/s)", a+b, 9.5e6, 10e6)
		// 3 ms access + 5 ms link + 0.8 ms serialization, plus at most one
		// path-0 packet (0.8 ms) ahead of it in the queue.
		if got := flow.from(fc.AddrPort()); len(got) == 0 {
			t.Error("no cross packet arrived")
		} else {
			within(t, "first cross packet's one-way time (ms)", (got[0].at-got[0].sentAt).Seconds()*1e3, 8.8, 9.6)
		}
	})
}

// Bad shared-link specifications fail with the field named, and build no
// goroutines that outlive the error.
func TestSharedTopologyErrors(t *testing.T) {
	for _, c := range []struct {
		shared []SharedLink
		want   string
	}{
		{[]SharedLink{{Paths: []int{2}}}, "shared[0].Paths[0] = 2"},
		{[]SharedLink{{Paths: []int{0, 0}}}, "listed twice"},
		{[]SharedLink{{Up: LinkConfig{Loss: 2}, Paths: []int{0}}}, "shared[0]"},
	} {
		topo, err := NewSharedTopology(1, []PathSpec{{}, {}}, c.shared)
		if err == nil {
			topo.Close()
			t.Errorf("%+v: no error", c.shared)
			continue
		}
		if !contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want it to name %q", c.shared, err, c.want)
		}
	}
}

// The chain works on the wall clock too: a packet crosses 2 ms + 3 ms of
// links in about 5 ms.
func TestSharedTopologyRealTime(t *testing.T) {
	d := func(ms int) LinkConfig { return LinkConfig{Delay: time.Duration(ms) * time.Millisecond} }
	topo, err := NewSharedTopology(1, []PathSpec{{Up: d(2), Down: d(2)}}, []SharedLink{{Up: d(3), Down: d(3), Paths: []int{0}}})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	start := time.Now()
	topo.Clients[0].WriteTo([]byte("ping"), net.UDPAddrFromAddrPort(topo.ServerAddr))
	topo.Server.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	if _, _, err := topo.Server.ReadFrom(buf); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 5*time.Millisecond || el > time.Second {
		t.Errorf("one-way time %v, want >= 5 ms (and well under 1 s)", el)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
