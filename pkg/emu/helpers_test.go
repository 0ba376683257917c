package emu

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

var (
	addrA = netip.MustParseAddrPort("10.1.0.1:1000")
	addrB = netip.MustParseAddrPort("10.2.0.1:2000")
)

// pair is two endpoints joined by one link, with a receiver on b that
// records every packet.
type pair struct {
	n    *Network
	a, b *Conn
	link *Link
	wg   sync.WaitGroup

	mu   sync.Mutex
	recv []arrival
}

// arrival is one packet received at b.
type arrival struct {
	seq    uint32
	sentAt time.Duration // from the payload, since Network start
	at     time.Duration // arrival, since Network start
	size   int           // payload bytes
}

// newPair builds the pair a→b (ab) and b→a (ba) and starts b's receiver.
func newPair(t *testing.T, seed int64, ab, ba LinkConfig) *pair {
	t.Helper()
	p := &pair{n: New(seed)}
	var err error
	if p.a, err = p.n.Listen(addrA); err != nil {
		t.Fatal(err)
	}
	if p.b, err = p.n.Listen(addrB); err != nil {
		t.Fatal(err)
	}
	if p.link, err = p.n.Connect(addrA, addrB, ab, ba); err != nil {
		t.Fatal(err)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		buf := make([]byte, 65536)
		for {
			k, _, err := p.b.ReadFrom(buf)
			if err != nil {
				return
			}
			p.mu.Lock()
			p.recv = append(p.recv, arrival{
				seq:    binary.BigEndian.Uint32(buf),
				sentAt: time.Duration(binary.BigEndian.Uint64(buf[4:])),
				at:     p.n.Elapsed(),
				size:   k,
			})
			p.mu.Unlock()
		}
	}()
	return p
}

// send writes one packet of size bytes (>= 12) from a to b carrying seq and
// the send time.
func (p *pair) send(seq uint32, size int) {
	buf := make([]byte, size)
	binary.BigEndian.PutUint32(buf, seq)
	binary.BigEndian.PutUint64(buf[4:], uint64(p.n.Elapsed()))
	p.a.WriteTo(buf, net.UDPAddrFromAddrPort(addrB))
}

// sendEvery sends count packets of size bytes, one every interval, in the
// calling goroutine, starting with sequence number first.
func (p *pair) sendEvery(first uint32, count int, size int, interval time.Duration) {
	for i := range count {
		p.send(first+uint32(i), size)
		time.Sleep(interval)
	}
}

// close waits long enough for packets in flight, closes the network and
// returns what b received.
func (p *pair) close(drain time.Duration) []arrival {
	time.Sleep(drain)
	p.n.Close()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.recv
}

// wireRate returns the rate, bits/s, of packets (payload + Overhead)
// arriving in [from, to).
func wireRate(recv []arrival, from, to time.Duration) float64 {
	bits := 0
	for _, r := range recv {
		if r.at >= from && r.at < to {
			bits += (r.size + Overhead) * 8
		}
	}
	return float64(bits) / (to - from).Seconds()
}

// within fails the test unless lo <= got <= hi.
func within(t *testing.T, what string, got, lo, hi float64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %v, want in [%v, %v]", what, got, lo, hi)
	}
}
