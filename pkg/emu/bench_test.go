package emu

import (
	"net"
	"syscall"
	"testing"
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
