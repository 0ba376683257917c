package attack

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
)

// capConn is a net.PacketConn that keeps what is written to it and never
// delivers anything: quic-go dials through it to make Initials.
type capConn struct {
	out  chan []byte
	done chan struct{}
	once sync.Once
}

func (c *capConn) ReadFrom([]byte) (int, net.Addr, error) {
	<-c.done
	return 0, nil, net.ErrClosed
}

func (c *capConn) WriteTo(p []byte, _ net.Addr) (int, error) {
	select {
	case c.out <- append([]byte(nil), p...):
	default: // retransmissions nobody waits for
	}
	return len(p), nil
}

func (c *capConn) Close() error                     { c.once.Do(func() { close(c.done) }); return nil }
func (c *capConn) LocalAddr() net.Addr              { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9} }
func (c *capConn) SetDeadline(time.Time) error      { return nil }
func (c *capConn) SetReadDeadline(time.Time) error  { return nil }
func (c *capConn) SetWriteDeadline(time.Time) error { return nil }

// CaptureInitials makes n genuine client Initial packets for o.Addr (each
// the first datagram of its own connection attempt, with its own
// connection ID and a full ClientHello), without sending any. Each attempt
// has a transport of its own, so that nothing one attempt sends later (a
// retransmission, its CONNECTION_CLOSE) is taken for another's Initial.
func CaptureInitials(ctx context.Context, o Options, n int) ([][]byte, error) {
	out := make([][]byte, 0, n)
	for len(out) < n {
		p, err := captureOne(ctx, o)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// captureOne makes one connection attempt into a capConn and returns its
// first datagram.
func captureOne(ctx context.Context, o Options) ([]byte, error) {
	c := &capConn{out: make(chan []byte, 1), done: make(chan struct{})}
	tr := &quic.Transport{Conn: c}
	defer func() { c.Close(); tr.Close() }() // the read loop ends first
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go tr.Dial(dctx, o.Addr, ClientTLS(o.TLS), &quic.Config{EnableDatagrams: true})
	select {
	case p := <-c.out:
		return p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Initials (issue 10 item 5) sends the given Initials, and as many garbage
// datagrams shaped like Initials (long header, random connection ID and
// bytes), to o.Addr from o.Sessions loopback sockets (distinct source
// ports, standing for spoofed sources), spread evenly over o.Duration.
// Frames counts the datagrams sent; nothing is answered.
func Initials(ctx context.Context, o Options, initials [][]byte, garbage int) (Result, error) {
	start := time.Now()
	var c counters
	if err := CheckLoopback(o.Addr); err != nil {
		return c.result("initials", 0), err
	}
	socks := make([]*net.UDPConn, max(o.Sessions, 1))
	for i := range socks {
		s, err := net.ListenUDP("udp", &net.UDPAddr{IP: o.Addr.IP})
		if err != nil {
			for _, s := range socks[:i] {
				s.Close()
			}
			return c.result("initials", 0), err
		}
		socks[i] = s
	}
	defer func() {
		for _, s := range socks {
			s.Close()
		}
	}()
	total := len(initials) + garbage
	if total == 0 {
		return c.result("initials", 0), errors.New("attack: nothing to send")
	}
	step := o.Duration / time.Duration(total)
	junk := make([]byte, 1200)
	ii, gi := 0, 0 // Initials and garbage sent: alternately while both last
	for i := 0; i < total && ctx.Err() == nil; i++ {
		var p []byte
		if ii < len(initials) && (ii <= gi || gi >= garbage) {
			p = initials[ii]
			ii++
		} else {
			gi++
			randomBytes(junk)
			junk[0] = 0xc0 | junk[0]&0x0f // long header, Initial
			copy(junk[1:5], []byte{0, 0, 0, 1})
			junk[5] = 8 // destination connection ID length
			p = junk
		}
		if _, err := socks[i%len(socks)].WriteToUDP(p, o.Addr); err == nil {
			c.frames.Add(1)
			c.bytes.Add(int64(len(p)))
		}
		if next := start.Add(time.Duration(i+1) * step); time.Until(next) > 0 {
			time.Sleep(time.Until(next))
		}
	}
	return c.result("initials", time.Since(start)), nil
}
