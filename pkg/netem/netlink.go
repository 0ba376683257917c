package netem

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// nlink sets links, addresses, routes and rules up over netlink, with one
// handle per named namespace (opened on first use, closed by close), so
// that no `ip` process runs per change. Each change is logged as the `ip`
// command it stands for.
type nlink struct {
	log io.Writer // nil: silent
	h   map[string]*netlink.Handle
	fd  map[string]netns.NsHandle
}

func newNlink(log io.Writer) *nlink {
	return &nlink{log: log, h: map[string]*netlink.Handle{}, fd: map[string]netns.NsHandle{}}
}

// handle returns the netlink handle of namespace ns and the namespace's fd.
func (n *nlink) handle(ns string) (*netlink.Handle, netns.NsHandle, error) {
	if h, ok := n.h[ns]; ok {
		return h, n.fd[ns], nil
	}
	fd, err := netns.GetFromName(ns)
	if err != nil {
		return nil, 0, fmt.Errorf("netem: namespace %s: %w", ns, err)
	}
	h, err := netlink.NewHandleAt(fd)
	if err != nil {
		_ = fd.Close()
		return nil, 0, fmt.Errorf("netem: netlink in namespace %s: %w", ns, err)
	}
	n.h[ns], n.fd[ns] = h, fd
	return h, fd, nil
}

// close closes every handle and namespace fd.
func (n *nlink) close() {
	for ns, h := range n.h {
		h.Close()
		fd := n.fd[ns]
		_ = fd.Close()
	}
	clear(n.h)
	clear(n.fd)
}

// do logs what stands for argv, runs fn on namespace ns's handle and
// quotes argv in its error.
func (n *nlink) do(ns string, fn func(h *netlink.Handle) error, argv ...string) error {
	cmd := strings.Join(append([]string{"ip", "-n", ns}, argv...), " ")
	if n.log != nil {
		fmt.Fprintf(n.log, "+ %s (netlink)\n", cmd)
	}
	h, _, err := n.handle(ns)
	if err != nil {
		return err
	}
	if err := fn(h); err != nil {
		return fmt.Errorf("%s (netlink): %w", cmd, err)
	}
	return nil
}

// veth creates the pair dev (in namespace ns) and peer (in peerNS).
func (n *nlink) veth(ns, dev, peerNS, peer string) error {
	_, peerFd, err := n.handle(peerNS)
	if err != nil {
		return err
	}
	return n.do(ns, func(h *netlink.Handle) error {
		return h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: dev}, PeerName: peer,
			PeerNamespace: netlink.NsFd(peerFd)})
	}, "link", "add", "name", dev, "type", "veth", "peer", "name", peer, "netns", peerNS)
}

// setLink brings dev in namespace ns up or down.
func (n *nlink) setLink(ns, dev string, up bool) error {
	state := map[bool]string{true: "up", false: "down"}[up]
	return n.do(ns, func(h *netlink.Handle) error {
		l, err := h.LinkByName(dev)
		if err != nil {
			return err
		}
		if up {
			return h.LinkSetUp(l)
		}
		return h.LinkSetDown(l)
	}, "link", "set", "dev", dev, state)
}

// addAddr adds cidr (such as "10.10.1.2/24") to dev in namespace ns.
func (n *nlink) addAddr(ns, cidr, dev string) error {
	return n.do(ns, func(h *netlink.Handle) error {
		a, err := netlink.ParseAddr(cidr)
		if err != nil {
			return err
		}
		l, err := h.LinkByName(dev)
		if err != nil {
			return err
		}
		return h.AddrAdd(l, a)
	}, "addr", "add", cidr, "dev", dev)
}

// route adds (or, with replace, replaces) the route to dst ("default" or
// a CIDR) via gw in table (0: main), on dev if dev is not empty.
func (n *nlink) route(ns string, replace bool, dst, gw, dev string, table int) error {
	argv := []string{"route", map[bool]string{true: "replace", false: "add"}[replace], dst, "via", gw}
	if dev != "" {
		argv = append(argv, "dev", dev)
	}
	if table != 0 {
		argv = append(argv, "table", fmt.Sprint(table))
	}
	return n.do(ns, func(h *netlink.Handle) error {
		r := &netlink.Route{Gw: net.ParseIP(gw), Table: table}
		if r.Gw == nil {
			return fmt.Errorf("bad gateway %q", gw)
		}
		if dst != "default" {
			_, ipn, err := net.ParseCIDR(dst)
			if err != nil {
				return err
			}
			r.Dst = ipn
		}
		if dev != "" {
			l, err := h.LinkByName(dev)
			if err != nil {
				return err
			}
			r.LinkIndex = l.Attrs().Index
		}
		if replace {
			return h.RouteReplace(r)
		}
		return h.RouteAdd(r)
	}, argv...)
}

// ruleFrom adds the rule "from src lookup table" with priority table.
func (n *nlink) ruleFrom(ns, src string, table int) error {
	return n.do(ns, func(h *netlink.Handle) error {
		ip := net.ParseIP(src).To4()
		if ip == nil {
			return fmt.Errorf("bad IPv4 address %q", src)
		}
		r := netlink.NewRule()
		r.Src = &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}
		r.Table, r.Priority = table, table
		return h.RuleAdd(r)
	}, "rule", "add", "from", src, "table", fmt.Sprint(table), "priority", fmt.Sprint(table))
}
