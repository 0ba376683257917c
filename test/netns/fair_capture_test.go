package netns

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The matrix's packet capture: tcpdump in the bottleneck namespace, every
// packet that enters it (-i any -Q in): the servers' packets before the
// queue, as the senders sent them, and the clients' ACKs. Only headers
// are kept (-s 96). From it come each flow's bursts (pacing) within the
// measurement window.

// capture is a running tcpdump.
type capture struct {
	cmd  *exec.Cmd
	file string
	errb *syncBuffer
}

// startCapture starts tcpdump in ns writing to file and waits until it
// listens.
func startCapture(ns, file string) (*capture, error) {
	c := &capture{file: file, errb: &syncBuffer{}}
	c.cmd = exec.Command("ip", "netns", "exec", ns, "tcpdump", "-i", "any", "-Q", "in", "-s", "96", "-n",
		"--time-stamp-precision=nano", "-w", file)
	c.cmd.Stderr = c.errb
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(c.errb.String(), "listening on"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
			return nil, fmt.Errorf("tcpdump did not start: %s", c.errb.String())
		}
	}
	return c, nil
}

// stop ends the capture (SIGINT flushes the file) and reads it.
func (c *capture) stop() ([]capPacket, error) {
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	f, err := os.Open(c.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer os.Remove(c.file)
	return readPcap(bufio.NewReaderSize(f, 1<<16))
}

// capPacket is one captured IPv4 packet's header fields.
type capPacket struct {
	t        time.Time
	src, dst [4]byte
	proto    uint8 // 6 TCP, 17 UDP
	payload  int   // transport payload bytes (TCP: after the header; UDP: after the 8-byte header)
}

// Link types of a capture on "any".
const (
	linkSLL  = 113 // Linux cooked capture v1: 16-byte header, protocol at 14
	linkSLL2 = 276 // v2: 20-byte header, protocol at 0
)

// readPcap reads a classic pcap stream (micro- or nanosecond, either byte
// order) of cooked ("any") frames and returns its IPv4 TCP and UDP packets.
func readPcap(r io.Reader) ([]capPacket, error) {
	var gh [24]byte
	if _, err := io.ReadFull(r, gh[:]); err != nil {
		return nil, fmt.Errorf("pcap header: %w", err)
	}
	var bo binary.ByteOrder = binary.LittleEndian
	nano := false
	switch binary.LittleEndian.Uint32(gh[:4]) {
	case 0xa1b2c3d4:
	case 0xa1b23c4d:
		nano = true
	case 0xd4c3b2a1:
		bo = binary.BigEndian
	case 0x4d3cb2a1:
		bo, nano = binary.BigEndian, true
	default:
		return nil, fmt.Errorf("pcap: bad magic %x", gh[:4])
	}
	link := bo.Uint32(gh[20:24])
	hdr, protoAt := 0, 0
	switch link {
	case linkSLL:
		hdr, protoAt = 16, 14
	case linkSLL2:
		hdr, protoAt = 20, 0
	default:
		return nil, fmt.Errorf("pcap: link type %d, want %d or %d (capture on any)", link, linkSLL, linkSLL2)
	}
	var out []capPacket
	var rh [16]byte
	buf := make([]byte, 0, 256)
	for {
		if _, err := io.ReadFull(r, rh[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return out, nil // a capture cut short ends at its last whole record
			}
			return out, err
		}
		sec, frac, incl := bo.Uint32(rh[0:4]), bo.Uint32(rh[4:8]), bo.Uint32(rh[8:12])
		if incl > 1<<16 {
			return out, fmt.Errorf("pcap: record of %d bytes", incl)
		}
		buf = buf[:incl]
		if _, err := io.ReadFull(r, buf); err != nil {
			return out, nil
		}
		ns := int64(frac)
		if !nano {
			ns *= 1000
		}
		if p, ok := parseCooked(buf, hdr, protoAt); ok {
			p.t = time.Unix(int64(sec), ns)
			out = append(out, p)
		}
	}
}

// parseCooked decodes an IPv4 TCP or UDP packet behind a cooked header.
func parseCooked(b []byte, hdr, protoAt int) (capPacket, bool) {
	var p capPacket
	if len(b) < hdr+20 || binary.BigEndian.Uint16(b[protoAt:]) != 0x0800 {
		return p, false
	}
	ip := b[hdr:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ihl < 20 || len(ip) < ihl {
		return p, false
	}
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	p.proto = ip[9]
	copy(p.src[:], ip[12:16])
	copy(p.dst[:], ip[16:20])
	l4 := ip[ihl:]
	switch p.proto {
	case 6:
		if len(l4) < 13 {
			return p, false
		}
		p.payload = total - ihl - int(l4[12]>>4)*4
	case 17:
		p.payload = total - ihl - 8
	default:
		return p, false
	}
	if p.payload < 0 {
		p.payload = 0
	}
	return p, true
}

// burstGap is the largest gap between two packets of one sender that
// counts as back to back: a 1514-byte frame takes 606 µs at the
// bottleneck's 20 Mbit/s and a few µs on the veth before it, so an
// unpaced sender's bursts show gaps of microseconds and a paced one's
// gaps near the bottleneck's rate.
const burstGap = 100 * time.Microsecond

// burstStats are one sender's bursts of data packets in a window.
type burstStats struct {
	packets int     // data packets
	bursts  int     // runs of packets no more than burstGap apart
	mean    float64 // packets per burst as a packet sees it: Σ len² / Σ len
	max     int     // the longest burst
	in5     float64 // fraction of the packets in bursts of 5 or more
}

// bursts measures the data packets (payload > 100 bytes) that servers sent
// to the client subnet 10.10.path.0/24 in [from, to). Packets are in
// capture order.
func bursts(ps []capPacket, path int, from, to time.Time) burstStats {
	var s burstStats
	var lens []int
	var last time.Time
	run := 0
	for _, p := range ps {
		if p.t.Before(from) || !p.t.Before(to) || p.payload <= 100 || p.dst[0] != 10 || p.dst[1] != 10 || int(p.dst[2]) != path {
			continue
		}
		s.packets++
		if run > 0 && p.t.Sub(last) <= burstGap {
			run++
		} else {
			if run > 0 {
				lens = append(lens, run)
			}
			run = 1
		}
		last = p.t
	}
	if run > 0 {
		lens = append(lens, run)
	}
	s.bursts = len(lens)
	var sq, n5 int
	for _, l := range lens {
		sq += l * l
		s.max = max(s.max, l)
		if l >= 5 {
			n5 += l
		}
	}
	if s.packets > 0 {
		s.mean = float64(sq) / float64(s.packets)
		s.in5 = float64(n5) / float64(s.packets)
	}
	return s
}

// captureFile is the capture's file for run n in dir.
func captureFile(dir string, n int) string { return filepath.Join(dir, fmt.Sprintf("run%03d.pcap", n)) }

// startCaptureT is startCapture that fails the test on error.
func startCaptureT(t *testing.T, dir string, n int) *capture {
	t.Helper()
	c, err := startCapture(fairBn, captureFile(dir, n))
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return c
}
