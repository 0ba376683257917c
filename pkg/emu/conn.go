package emu

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// RecvQueueLen is the capacity of a Conn's receive queue, packets; packets
// arriving at a full queue are dropped (LinkStats.DroppedRecv).
const RecvQueueLen = 1024

// maxPayload is the largest UDP payload over IPv4, bytes.
const maxPayload = 65507

var errTooLong = errors.New("emu: payload larger than 65507 bytes")

// Conn is an emulated UDP endpoint. It implements net.PacketConn; its
// addresses are *net.UDPAddr. WriteTo never blocks: it hands a copy of the
// payload to the link towards the destination (or drops it silently if no link
// leads there). ReadFrom blocks until a packet arrives, the read deadline
// passes or the Conn is closed.
type Conn struct {
	net   *Network
	addr  netip.AddrPort
	laddr *net.UDPAddr

	inbox  *inbox        // the receiving side of addr
	notify chan struct{} // wakes a blocked reader; capacity 1
	done   chan struct{} // closed by Close

	mu       sync.Mutex
	closed   bool
	rx       [RecvQueueLen]packet         // receive ring
	head, n  int                          // ring start and length
	rdl, wdl time.Time                    // read and write deadlines; zero = none
	rdlTimer *time.Timer                  // wakes readers at the read deadline
	wake     *time.Timer                  // wakes readers when the inbox's next packet is due; made by the first read
	wakeAt   time.Duration                // when wake fires, since Network start; never if stopped
	waiters  int                          // readers blocked in ReadFrom
	routes   map[netip.AddrPort]*hopRoute // routes from addr already used by WriteTo (a route never changes once made)
}

// packet is a received datagram waiting in a Conn's queue.
type packet struct {
	buf  *[]byte
	n    int
	from *net.UDPAddr
}

var _ net.PacketConn = (*Conn)(nil)

func newConn(n *Network, addr netip.AddrPort, s *inbox) *Conn {
	return &Conn{
		net:    n,
		addr:   addr,
		laddr:  net.UDPAddrFromAddrPort(addr),
		inbox:  s,
		wakeAt: never,
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
}

// signal wakes one blocked reader, without blocking.
func (c *Conn) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// enqueue adds a received packet, waking a blocked reader if signal; it
// reports false if the Conn is closed or its queue is full (the caller keeps
// ownership of buf then).
func (c *Conn) enqueue(buf *[]byte, n int, from *net.UDPAddr, signal bool) bool {
	c.mu.Lock()
	if c.closed || c.n == len(c.rx) {
		c.mu.Unlock()
		return false
	}
	c.rx[(c.head+c.n)%len(c.rx)] = packet{buf, n, from}
	c.n++
	c.mu.Unlock()
	if signal {
		c.signal()
	}
	return true
}

// poke tells a reader asleep until after at that a packet is due at at
// (times since Network start; now is the current one).
func (c *Conn) poke(at, now time.Duration) {
	c.mu.Lock()
	if at < c.wakeAt {
		c.wakeAt = at
		switch {
		case c.waiters == 0:
		case at <= now:
			c.signal() // due already: no zero-length timer
		default:
			c.wake.Reset(at - now)
		}
	}
	c.mu.Unlock()
}

// ReadFrom reads one packet into p (truncating it if p is too short) and
// returns the number of bytes copied and the sender's address. The address is
// shared by all packets of a link direction: do not modify it.
func (c *Conn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		// c.wakeAt is never here (or lowered by a sender's poke since), so
		// a packet sent after settle looked is not missed.
		next := c.inbox.settle(c.net, c.net.now(), c)
		c.mu.Lock()
		if c.n > 0 {
			pk := c.rx[c.head]
			c.rx[c.head] = packet{}
			c.head = (c.head + 1) % len(c.rx)
			c.n--
			more := c.n > 0
			c.wakeAt = never
			c.mu.Unlock()
			if more {
				c.signal() // another reader may be waiting
			}
			nn := copy(p, (*pk.buf)[:pk.n])
			putBuf(pk.buf)
			return nn, pk.from, nil
		}
		if c.closed {
			c.mu.Unlock()
			return 0, nil, c.opError("read", net.ErrClosed)
		}
		if !c.rdl.IsZero() && !time.Now().Before(c.rdl) {
			c.mu.Unlock()
			c.signal() // let other readers see the deadline too
			return 0, nil, c.opError("read", os.ErrDeadlineExceeded)
		}
		// Sleep until a packet lands, the inbox's next packet is due, a
		// sender pokes an earlier one, or the deadline or Close.
		c.wakeAt = min(c.wakeAt, next)
		if c.wake == nil {
			c.wake = time.NewTimer(time.Hour)
			c.wake.Stop()
		}
		if c.wakeAt == never {
			c.wake.Stop()
		} else if d := c.wakeAt - c.net.now(); d > 0 {
			c.wake.Reset(d)
		} else { // due already: settle again
			c.wakeAt = never
			c.mu.Unlock()
			continue
		}
		c.waiters++
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-c.wake.C:
		case <-c.done:
		}
		c.mu.Lock()
		c.waiters--
		c.wakeAt = never
		c.mu.Unlock()
	}
}

// WriteTo sends a copy of p to addr, which must be a *net.UDPAddr (or any
// net.Addr whose String is an IP:port). It returns len(p) even if the link
// drops the packet.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	var dst netip.AddrPort
	switch a := addr.(type) {
	case *net.UDPAddr:
		dst = a.AddrPort()
	default:
		var err error
		if dst, err = netip.ParseAddrPort(addr.String()); err != nil {
			return 0, c.opError("write", err)
		}
	}
	dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	c.mu.Lock()
	closed, wdl, r := c.closed, c.wdl, c.routes[dst]
	c.mu.Unlock()
	switch {
	case closed:
		return 0, c.opError("write", net.ErrClosed)
	case !wdl.IsZero() && !time.Now().Before(wdl):
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	case len(p) > maxPayload:
		return 0, c.opError("write", errTooLong)
	}
	if r == nil {
		if r = c.net.route(c.addr, dst); r == nil {
			return len(p), nil
		}
		c.mu.Lock()
		if c.routes == nil {
			c.routes = make(map[netip.AddrPort]*hopRoute)
		}
		c.routes[dst] = r
		c.mu.Unlock()
	}
	r.hops[0].send(r, 0, p, nil)
	return len(p), nil
}

// Close closes the Conn and frees its address; blocked reads return
// net.ErrClosed. Queued packets are discarded.
func (c *Conn) Close() error {
	c.inbox.settle(c.net, c.net.now(), c)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	if c.rdlTimer != nil {
		c.rdlTimer.Stop()
	}
	if c.wake != nil {
		c.wake.Stop()
	}
	for c.n > 0 {
		putBuf(c.rx[c.head].buf)
		c.rx[c.head] = packet{}
		c.head = (c.head + 1) % len(c.rx)
		c.n--
	}
	close(c.done)
	c.mu.Unlock()
	c.net.forget(c)
	return nil
}

// LocalAddr returns the Conn's address, a *net.UDPAddr.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// AddrPort returns the Conn's address.
func (c *Conn) AddrPort() netip.AddrPort { return c.addr }

// SetDeadline sets both the read and the write deadline.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the time after which ReadFrom fails with an error
// wrapping os.ErrDeadlineExceeded; it also wakes reads already blocked. The
// zero time means no deadline.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("set", net.ErrClosed)
	}
	c.rdl = t
	if c.rdlTimer != nil {
		c.rdlTimer.Stop()
	}
	if !t.IsZero() {
		if d := time.Until(t); d > 0 {
			if c.rdlTimer == nil {
				c.rdlTimer = time.AfterFunc(d, c.signal)
			} else {
				c.rdlTimer.Reset(d)
			}
		}
	}
	c.mu.Unlock()
	c.signal()
	return nil
}

// SetWriteDeadline sets the time after which WriteTo fails with an error
// wrapping os.ErrDeadlineExceeded. WriteTo never blocks, so the deadline only
// matters once it has passed. The zero time means no deadline.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("set", net.ErrClosed)
	}
	c.wdl = t
	return nil
}

// SetReadBuffer is accepted and ignored (the receive queue holds
// RecvQueueLen packets); it exists so that quic-go does not warn.
func (c *Conn) SetReadBuffer(bytes int) error { return nil }

// SetWriteBuffer is accepted and ignored; it exists so that quic-go does not
// warn.
func (c *Conn) SetWriteBuffer(bytes int) error { return nil }

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "udp", Source: c.laddr, Err: err}
}
