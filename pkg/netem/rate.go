package netem

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// UDPWireOverhead is what a UDP payload grows by on a veth link: UDP 8 +
// IPv4 20 + Ethernet 14 bytes. tbf counts these L2 bytes.
const UDPWireOverhead = 42

// RateResult is what UDPRecv measured.
type RateResult struct {
	Packets   uint64  `json:"packets"`    // datagrams received
	Bytes     uint64  `json:"bytes"`      // UDP payload bytes received
	Lost      uint64  `json:"lost"`       // datagrams sent but not received (sequence gaps), including bottleneck drops
	Seconds   float64 `json:"seconds"`    // measurement window: the datagram at the skip mark to the last, s
	WireBps   float64 `json:"wire_bps"`   // L2 rate over the measurement window, bits/s
	PayloadSz int     `json:"payload_sz"` // UDP payload per datagram, bytes
}

// UDPSend sends UDP datagrams of size bytes from local (may be empty) to dst
// at rateBps (counted on L2 frames) for dur. Each datagram carries a 64-bit
// sequence number. It paces in 1 ms slices.
func UDPSend(local, dst string, rateBps float64, size int, dur time.Duration) error {
	if size < 16 || size > 65000 {
		return errors.New("netem: UDPSend: size out of range")
	}
	var la *net.UDPAddr
	if local != "" {
		la = &net.UDPAddr{IP: net.ParseIP(local)}
	}
	ra, err := net.ResolveUDPAddr("udp4", dst)
	if err != nil {
		return err
	}
	c, err := net.DialUDP("udp4", la, ra)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, size)
	start := time.Now()
	var seq uint64
	var sentWire float64
	for {
		el := time.Since(start)
		if el >= dur {
			return nil
		}
		for sentWire < rateBps/8*el.Seconds() {
			binary.BigEndian.PutUint64(buf, seq)
			seq++
			if _, err := c.Write(buf); err != nil {
				// ENOBUFS or ECONNREFUSED from an ICMP error: keep pacing.
				_ = err
			}
			sentWire += float64(size + UDPWireOverhead)
		}
		time.Sleep(time.Millisecond)
	}
}

// UDPRecv listens on addr, writes one line "ready\n" to ready once bound,
// then counts datagrams until idle has passed without one (after the first)
// or max has passed in total. The rate is measured from the first datagram
// that arrives skip after the first one, so that the bottleneck's initial
// burst allowance does not inflate it.
func UDPRecv(addr string, idle, max, skip time.Duration, ready io.Writer) (RateResult, error) {
	la, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return RateResult{}, err
	}
	c, err := net.ListenUDP("udp4", la)
	if err != nil {
		return RateResult{}, err
	}
	defer c.Close()
	_ = c.SetReadBuffer(4 << 20)
	if ready != nil {
		fmt.Fprintln(ready, "ready")
	}
	var res RateResult
	buf := make([]byte, 65536)
	end := time.Now().Add(max)
	var first, last, mark time.Time
	var markBytes, markPkts uint64
	var maxSeq uint64
	for {
		dl := end
		if !first.IsZero() && last.Add(idle).Before(dl) {
			dl = last.Add(idle)
		}
		_ = c.SetReadDeadline(dl)
		n, err := c.Read(buf)
		if err != nil {
			break
		}
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		last = now
		res.Packets++
		res.Bytes += uint64(n)
		if mark.IsZero() && now.Sub(first) >= skip {
			mark, markBytes, markPkts = now, res.Bytes, res.Packets
		}
		res.PayloadSz = n
		if n >= 8 {
			if s := binary.BigEndian.Uint64(buf); s+1 > maxSeq {
				maxSeq = s + 1
			}
		}
	}
	if mark.IsZero() || res.Packets-markPkts < 2 {
		return res, fmt.Errorf("netem: UDPRecv on %s: %d datagrams received, too few after the first %v", addr, res.Packets, skip)
	}
	res.Lost = maxSeq - res.Packets
	res.Seconds = last.Sub(mark).Seconds()
	// The datagram at the mark starts the clock; count what arrived after it.
	wire := float64(res.Bytes-markBytes) + float64(res.Packets-markPkts)*UDPWireOverhead
	res.WireBps = wire * 8 / res.Seconds
	return res, nil
}

// WriteJSON writes v as one JSON line.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
