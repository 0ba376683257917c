package emu

import (
	"fmt"
	"net/netip"
	"slices"
)

// SharedLink is a link that several client paths of a Topology cross after
// their own access links, on the way to the server: a bottleneck they share
// (two Wi-Fi SSIDs on one DSL line, two interfaces behind one NAT). Up is
// its client→server direction, Down its server→client direction.
type SharedLink struct {
	Up    LinkConfig // client → server direction
	Down  LinkConfig // server → client direction
	Paths []int      // indexes of the client paths that cross it; each at most once
}

// NewSharedTopology builds a Topology whose paths may share links. Client
// path i reaches the server across its own access link (paths[i], in
// Topology.Links[i]) and then every SharedLink that lists i, in the order of
// shared; packets from the server cross the same links in reverse. The
// packets of all paths through a shared link share its drop-tail queue and
// its rate, in each direction. With no shared links it is NewTopology.
//
// A path that crosses a shared link usually has an ideal access link
// (PathSpec{}: unlimited rate, no delay) or one that only adds delay, so
// that the shared link is the bottleneck.
func NewSharedTopology(seed int64, paths []PathSpec, shared []SharedLink) (*Topology, error) {
	for k, sl := range shared {
		for j, i := range sl.Paths {
			switch {
			case i < 0 || i >= len(paths):
				return nil, fmt.Errorf("emu: shared[%d].Paths[%d] = %d: not a path index (0..%d)", k, j, i, len(paths)-1)
			case slices.Contains(sl.Paths[:j], i):
				return nil, fmt.Errorf("emu: shared[%d].Paths[%d] = %d: listed twice", k, j, i)
			}
		}
	}
	t, err := newServerOnly(seed)
	if err != nil {
		return nil, err
	}
	n := t.Net
	fail := func(err error) (*Topology, error) {
		n.Close()
		return nil, err
	}
	for k, sl := range shared {
		l, err := n.NewLink(sl.Up, sl.Down)
		if err != nil {
			return fail(fmt.Errorf("emu: shared[%d]: %w", k, err))
		}
		t.Shared = append(t.Shared, l)
	}
	for i, p := range paths {
		access, err := n.NewLink(p.Up, p.Down)
		if err != nil {
			return fail(fmt.Errorf("emu: paths[%d]: %w", i, err))
		}
		chain := []*Link{access}
		for k, sl := range shared {
			if slices.Contains(sl.Paths, i) {
				chain = append(chain, t.Shared[k])
			}
		}
		addr := ClientAddr(i)
		if err := n.Route(addr, ServerAddr, chain...); err != nil {
			return fail(err)
		}
		c, err := n.Listen(addr)
		if err != nil {
			return fail(err)
		}
		t.Clients = append(t.Clients, c)
		t.Links = append(t.Links, access)
		t.PathLinks = append(t.PathLinks, chain)
	}
	return t, nil
}

// FlowClientAddr returns the client address of the k-th flow added by
// Topology.AddFlow: 10.100.(k/250).(k%250+2), port 7000. These addresses
// exist only in memory.
func FlowClientAddr(k int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 100, byte(k / 250), byte(k%250 + 2)}), 7000)
}

// FlowServerAddr returns the server address of the k-th flow added by
// Topology.AddFlow: 10.200.(k/250).(k%250+2), port 443.
func FlowServerAddr(k int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 200, byte(k / 250), byte(k%250 + 2)}), 443)
}

// MaxFlows is the most flows one Topology can add with AddFlow.
const MaxFlows = 250 * 250

// AddFlow adds a pair of endpoints for traffic that competes with the
// topology's paths (cross traffic): a client at FlowClientAddr(k) and a
// server at FlowServerAddr(k), k counting the flows added so far. Packets
// from the client cross a new access link (access; PathSpec{} is ideal),
// then the links via in order (each client→server); packets from the server
// come back the same way. via may hold any of the topology's links, such as
// Links[i] (path i's own or access link), Shared[k], or all of PathLinks[i]
// to follow path i end to end.
func (t *Topology) AddFlow(access PathSpec, via ...*Link) (client, server *Conn, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.flows >= MaxFlows {
		return nil, nil, fmt.Errorf("emu: AddFlow: more than %d flows", MaxFlows)
	}
	k := t.flows
	t.flows++ // a failed flow's addresses are not reused
	l, err := t.Net.NewLink(access.Up, access.Down)
	if err != nil {
		return nil, nil, fmt.Errorf("emu: AddFlow: access: %w", err)
	}
	ca, sa := FlowClientAddr(k), FlowServerAddr(k)
	if err := t.Net.Route(ca, sa, append([]*Link{l}, via...)...); err != nil {
		l.SetDown(true)
		return nil, nil, err
	}
	if client, err = t.Net.Listen(ca); err != nil {
		return nil, nil, err
	}
	if server, err = t.Net.Listen(sa); err != nil {
		client.Close()
		return nil, nil, err
	}
	return client, server, nil
}
