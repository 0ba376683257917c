package emu

import (
	"net/netip"
	"sync"
)

// PathSpec describes one client–server path.
type PathSpec struct {
	Up   LinkConfig // client → server
	Down LinkConfig // server → client
}

// ServerAddr is the server's address in a Topology.
var ServerAddr = netip.MustParseAddrPort("10.0.0.1:4433")

// ClientAddr returns the address of client path i in a Topology:
// 10.0.(i+1).2, port 5000+i. These addresses exist only in memory.
func ClientAddr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i + 1), 2}), uint16(5000+i))
}

// Topology is a server reachable from one client endpoint per path, each
// joined to the server by its own Link: the usual multipath test bed.
type Topology struct {
	Net        *Network
	Server     *Conn          // the server endpoint, at ServerAddr
	ServerAddr netip.AddrPort // ServerAddr
	Clients    []*Conn        // client endpoint of path i, at ClientAddr(i)
	Links      []*Link        // link of path i; a = client, b = server (in a shared topology, path i's access link)
	Shared     []*Link        // the shared links of NewSharedTopology, in the order given; a = client side
	PathLinks  [][]*Link      // the links path i crosses, client side first: Links[i], then its shared links

	mu    sync.Mutex // guards Clients, Links, PathLinks and flows in AddPath and AddFlow
	flows int        // flows added by AddFlow
}

// NewTopology builds a Network from seed with a server and one client
// endpoint per path.
func NewTopology(seed int64, paths ...PathSpec) (*Topology, error) {
	t, err := newServerOnly(seed)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		if _, _, err := t.AddPath(p); err != nil {
			t.Net.Close()
			return nil, err
		}
	}
	return t, nil
}

// newServerOnly builds a Network from seed with the server listening at
// ServerAddr and no client yet.
func newServerOnly(seed int64) (*Topology, error) {
	n := New(seed)
	srv, err := n.Listen(ServerAddr)
	if err != nil {
		n.Close()
		return nil, err
	}
	return &Topology{Net: n, Server: srv, ServerAddr: ServerAddr}, nil
}

// AddPath adds a client endpoint at ClientAddr(len(Clients)) and its link to
// the server, e.g. an interface appearing at run time.
func (t *Topology) AddPath(p PathSpec) (*Conn, *Link, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	addr := ClientAddr(len(t.Clients))
	l, err := t.Net.Connect(addr, t.ServerAddr, p.Up, p.Down)
	if err != nil {
		return nil, nil, err
	}
	c, err := t.Net.Listen(addr)
	if err != nil {
		l.SetDown(true)
		return nil, nil, err
	}
	t.Clients = append(t.Clients, c)
	t.Links = append(t.Links, l)
	t.PathLinks = append(t.PathLinks, []*Link{l})
	return c, l, nil
}

// Close closes the Network and every endpoint.
func (t *Topology) Close() error { return t.Net.Close() }
