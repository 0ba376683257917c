// Package emu is an in-process network emulator for tests and experiments.
//
// A Network holds endpoints (Conn, a net.PacketConn with *net.UDPAddr
// addresses) joined by emulated Links. Each direction of a link has a rate,
// a propagation delay with optional jitter, a drop-tail queue measured in
// bytes, Bernoulli or Gilbert–Elliott loss, outage windows, a piecewise
// Schedule of changes, or a Mahimahi delivery Trace in place of the rate.
// A route between two addresses may cross several links in turn
// (Network.Route), and a link may lie on several routes, whose packets then
// share its queue and rate: NewSharedTopology puts client paths behind one
// bottleneck, and Topology.AddFlow adds cross-traffic endpoints on any links.
//
// The emulator uses only time, sync, channels and seeded math/rand, so the
// same code runs in real time and inside a testing/synctest bubble, where
// virtual time makes long transfers take milliseconds. Inside a bubble, create
// the Network in the bubble and Close it before the bubble's function returns.
//
// Costs: per packet, one pooled buffer copy and no goroutine. A link
// direction whose packets all end at one endpoint has no goroutine: the
// endpoint's reader collects its packets when they are due, waking on its
// own timer (inbox.go). A direction that forwards to a further link, or whose
// routes end at several endpoints, has one goroutine and one timer.
package emu

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Network is a set of endpoints and the links between them. All randomness
// comes from the seed given to New; each link direction draws from its own
// streams, derived from the seed and the link's creation order.
type Network struct {
	start time.Time
	seed  uint64
	done  chan struct{} // closed by Close; stops the link goroutines
	wg    sync.WaitGroup
	// closedAt is when Close was called, since start (-1 while open); the
	// inboxes deliver nothing due after it.
	closedAt atomic.Int64

	mu      sync.RWMutex
	closed  bool
	conns   map[netip.AddrPort]*Conn
	routes  map[route]*hopRoute
	inboxes map[netip.AddrPort]*inbox // receiving side of each address with a Conn or a route to it
	nlinks  uint64
}

// route is a (source, destination) address pair.
type route struct{ src, dst netip.AddrPort }

// hopRoute is the way from one address to another: the link directions a
// packet crosses, in order, and the source address its receiver sees.
type hopRoute struct {
	from  *net.UDPAddr   // source address reported to the receiver (shared, read-only)
	dst   netip.AddrPort // receiving endpoint
	inbox *inbox         // dst's inbox
	hops  []*dir         // link directions in the order the packet crosses them; at least one
}

// ErrClosed is returned by the methods of a closed Network.
var ErrClosed = errors.New("emu: network closed")

// New returns an empty Network whose start time is now.
func New(seed int64) *Network {
	n := &Network{
		start:   time.Now(),
		seed:    uint64(seed),
		done:    make(chan struct{}),
		conns:   make(map[netip.AddrPort]*Conn),
		routes:  make(map[route]*hopRoute),
		inboxes: make(map[netip.AddrPort]*inbox),
	}
	n.closedAt.Store(-1)
	return n
}

// now returns the time since the Network start.
func (n *Network) now() time.Duration { return time.Since(n.start) }

// Elapsed returns the time since the Network was created.
func (n *Network) Elapsed() time.Duration { return n.now() }

// Start returns the time the Network was created; Outages and Schedule times
// are relative to it.
func (n *Network) Start() time.Time { return n.start }

// Listen opens an endpoint at addr. Port 0 picks a free port from 49152 up.
func (n *Network) Listen(addr netip.AddrPort) (*Conn, error) {
	if !addr.Addr().IsValid() {
		return nil, fmt.Errorf("emu: Listen %v: invalid address", addr)
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	if addr.Port() == 0 {
		for p := uint16(49152); p != 0; p++ {
			if a := netip.AddrPortFrom(addr.Addr(), p); n.conns[a] == nil {
				addr = a
				break
			}
		}
		if addr.Port() == 0 {
			return nil, fmt.Errorf("emu: Listen %v: no free port", addr.Addr())
		}
	}
	if n.conns[addr] != nil {
		return nil, fmt.Errorf("emu: Listen %v: address in use", addr)
	}
	c := newConn(n, addr, n.inboxLocked(addr))
	n.conns[addr] = c
	c.inbox.conn.Store(c)
	return c, nil
}

// Connect joins addresses a and b with a Link: packets from a to b follow
// ab, packets from b to a follow ba. The endpoints need not exist yet.
// Packets between addresses with no Link are silently dropped. It is
// NewLink followed by Route(a, b, link).
func (n *Network) Connect(a, b netip.AddrPort, ab, ba LinkConfig) (*Link, error) {
	l, err := n.NewLink(ab, ba)
	if err != nil {
		return nil, err
	}
	if err := n.Route(a, b, l); err != nil {
		l.SetDown(true)
		return nil, err
	}
	return l, nil
}

// NewLink creates a Link that no route uses yet; Route puts it on the way
// between addresses. Its a side faces the client (the first address given
// to Route), its b side the server. A link on several routes is shared: the
// packets of all of them queue in one drop-tail queue per direction and
// leave it in arrival order at the link's rate.
func (n *Network) NewLink(ab, ba LinkConfig) (*Link, error) {
	if err := ab.Validate(); err != nil {
		return nil, fmt.Errorf("a→b: %w", err)
	}
	if err := ba.Validate(); err != nil {
		return nil, fmt.Errorf("b→a: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	i := n.nlinks
	n.nlinks++
	l := &Link{
		ab: newDir(n, ab, n.seed, 2*i),
		ba: newDir(n, ba, n.seed, 2*i+1),
	}
	return l, nil
}

// Route sends the packets from a to b across links[0], links[1], ... in
// that order (each in its a→b direction), and the packets from b to a back
// across the same links in reverse order (each in its b→a direction). A
// packet enters the next link when it would have reached the receiver of the
// previous one: after its serialization, propagation delay and jitter there.
// Each address pair has at most one route; the endpoints need not exist yet.
func (n *Network) Route(a, b netip.AddrPort, links ...*Link) error {
	a = netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
	b = netip.AddrPortFrom(b.Addr().Unmap(), b.Port())
	switch {
	case a == b:
		return fmt.Errorf("emu: Route %v to itself", a)
	case len(links) == 0:
		return fmt.Errorf("emu: Route %v to %v: no links", a, b)
	}
	up := &hopRoute{from: net.UDPAddrFromAddrPort(a), dst: b}
	down := &hopRoute{from: net.UDPAddrFromAddrPort(b), dst: a}
	for i, l := range links {
		if l == nil || l.ab.net != n {
			return fmt.Errorf("emu: Route %v to %v: links[%d] is not a link of this Network", a, b, i)
		}
		up.hops = append(up.hops, l.ab)
		down.hops = append(down.hops, links[len(links)-1-i].ba)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	if n.routes[route{a, b}] != nil || n.routes[route{b, a}] != nil {
		return fmt.Errorf("emu: Connect: %v and %v are already linked", a, b)
	}
	up.inbox, down.inbox = n.inboxLocked(b), n.inboxLocked(a)
	n.routes[route{a, b}] = up
	n.routes[route{b, a}] = down
	n.routedLocked(up.hops, up.inbox)
	n.routedLocked(down.hops, down.inbox)
	return nil
}

// route returns the way from src to dst, or nil.
func (n *Network) route(src, dst netip.AddrPort) *hopRoute {
	n.mu.RLock()
	r := n.routes[route{src, dst}]
	n.mu.RUnlock()
	return r
}

// conn returns the open endpoint at addr, or nil.
func (n *Network) conn(addr netip.AddrPort) *Conn {
	n.mu.RLock()
	c := n.conns[addr]
	n.mu.RUnlock()
	return c
}

// forget removes a closed Conn from the address table.
func (n *Network) forget(c *Conn) {
	n.mu.Lock()
	if n.conns[c.addr] == c {
		delete(n.conns, c.addr)
		c.inbox.conn.CompareAndSwap(c, nil)
	}
	n.mu.Unlock()
}

// Close stops every link goroutine and timer and closes every Conn. It waits
// for the goroutines to exit. Packets in flight are discarded.
func (n *Network) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return ErrClosed
	}
	n.closed = true
	n.closedAt.Store(int64(n.now()))
	conns := make([]*Conn, 0, len(n.conns))
	for _, c := range n.conns {
		conns = append(conns, c)
	}
	n.mu.Unlock()
	close(n.done)
	n.wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	return nil
}
