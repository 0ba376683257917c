package emu

import (
	"net"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// benchLink measures WriteTo plus delivery to a reading Conn, per packet,
// in real time: the writer keeps at most 512 packets outstanding so that the
// receive queue never overflows.
func benchLink(b *testing.B, cfg LinkConfig) {
	n := New(1)
	defer n.Close()
	a, _ := n.Listen(addrA)
	c, _ := n.Listen(addrB)
	if _, err := n.Connect(addrA, addrB, cfg, LinkConfig{}); err != nil {
		b.Fatal(err)
	}
	credit := make(chan struct{}, 512) // packets written and not yet read
	all := make(chan struct{})         // closed when b.N packets are read
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for got := 0; ; got++ {
			if got == b.N {
				close(all)
			}
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			<-credit
		}
	}()
	payload := make([]byte, 1200)
	dst := net.UDPAddrFromAddrPort(addrB)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		credit <- struct{}{}
		a.WriteTo(payload, dst)
	}
	<-all
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/pkt")
	c.Close()
	<-done
}

// cpuTime returns the process's user+system CPU time: with a paced link the
// wall time per packet measures the pacing, the CPU time the cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriteDeliver is the per-packet cost of WriteTo, the link and
// ReadFrom on an ideal link. cpu-ns/pkt counts all goroutines.
func BenchmarkWriteDeliver(b *testing.B) { benchLink(b, LinkConfig{}) }

// BenchmarkWriteDeliverShaped adds a 10 Gbit/s rate, 1 ms of delay with
// 100 µs of jitter.
func BenchmarkWriteDeliverShaped(b *testing.B) {
	benchLink(b, LinkConfig{RateBps: 10e9, Delay: time.Millisecond, Jitter: 100 * time.Microsecond, QueueBytes: 4 << 20})
}

// BenchmarkWriteToLost is the send path alone: every packet is lost after
// the queue, so nothing is copied or delivered.
func BenchmarkWriteToLost(b *testing.B) {
	n := New(1)
	defer n.Close()
	a, _ := n.Listen(addrA)
	if _, err := n.Connect(addrA, addrB, LinkConfig{Loss: 1}, LinkConfig{}); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 1200)
	dst := net.UDPAddrFromAddrPort(addrB)
	b.ReportAllocs()
	for b.Loop() {
		a.WriteTo(payload, dst)
	}
}

// benchVirtual sends b.N packets of 1200 bytes in a synctest bubble, burst
// back to back every gap of virtual time, over a link a→b of the given configuration, to
// a reader on b, and acknowledges every second packet back over b→a, as a
// QUIC receiver would. It reports the process's CPU time per data packet
// (cpu-ns/pkt, all goroutines: writer, link, reader and synctest's
// scheduling), and the wall time per packet as ns/op.
func benchVirtual(b *testing.B, cfg LinkConfig, gap time.Duration, burst int) {
	b.ReportAllocs()
	got := 0
	var err error
	b.ResetTimer()
	cpu0 := cpuTime()
	runBubble(func() {
		n := New(1)
		a, _ := n.Listen(addrA)
		c, _ := n.Listen(addrB)
		if _, err = n.Connect(addrA, addrB, cfg, cfg); err != nil {
			return
		}
		all := make(chan struct{}) // closed when b.N packets are read
		go func() {                // b: reads data, acknowledges every second packet
			buf := make([]byte, 2048)
			ack := make([]byte, 40)
			src := net.UDPAddrFromAddrPort(addrA)
			for {
				if _, _, err := c.ReadFrom(buf); err != nil {
					return
				}
				if got++; got%2 == 0 {
					c.WriteTo(ack, src)
				}
				if got == b.N {
					close(all)
				}
			}
		}()
		go func() { // a: drains the acknowledgements
			buf := make([]byte, 2048)
			for {
				if _, _, err := a.ReadFrom(buf); err != nil {
					return
				}
			}
		}()
		payload := make([]byte, 1200)
		dst := net.UDPAddrFromAddrPort(addrB)
		for i := range b.N {
			a.WriteTo(payload, dst)
			if (i+1)%burst == 0 {
				time.Sleep(gap)
			}
		}
		select {
		case <-all:
		case <-time.After(time.Hour):
		}
		n.Close()
	})
	b.StopTimer()
	cpu := cpuTime() - cpu0
	if err != nil || got != b.N {
		b.Fatalf("received %d of %d packets (%v)", got, b.N, err)
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/pkt")
}

// runBubble runs f in a synctest bubble; a benchmark has no *testing.T for
// synctest.Test, so testing.RunTests makes one.
func runBubble(f func()) {
	testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: "bubble",
		F:    func(t *testing.T) { synctest.Test(t, func(*testing.T) { f() }) },
	}})
}

// BenchmarkVirtualPaced is a paced 20 Mbit/s flow (one 1200-byte packet
// every 500 µs) over a 25 Mbit/s link with 5 ms of delay, in virtual time:
// the emulator's share of a virtual-time QUIC transfer.
func BenchmarkVirtualPaced(b *testing.B) {
	benchVirtual(b, LinkConfig{RateBps: 25e6, Delay: 5 * time.Millisecond}, 500*time.Microsecond, 1)
}

// BenchmarkVirtualBurst writes bursts of 10 packets of 1200 bytes back to
// back every 5 ms (20 Mbit/s, as quic-go's pacer releases them) into a
// 25 Mbit/s link with 5 ms of delay, in virtual time.
func BenchmarkVirtualBurst(b *testing.B) {
	benchVirtual(b, LinkConfig{RateBps: 25e6, Delay: 5 * time.Millisecond}, 5*time.Millisecond, 10)
}
