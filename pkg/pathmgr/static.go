package pathmgr

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// This file: the fixed paths of mpquic-client's -paths list, the
// alternative to the Manager: bind a socket per listed address or
// interface (ListenPaths), dial the session on the first, and join the
// others (JoinPaths).

// ResolvePath turns one -paths item into a local UDP address to bind:
// an IP address ("10.0.0.2", "::1"), an interface name ("wlan0", standing
// for its first IPv4 address), either with a port ("127.0.0.1:25001",
// "[::1]:25001", "wlan0:25001"), or without one (port 0: any free port).
func ResolvePath(item string) (*net.UDPAddr, error) {
	item = strings.TrimSpace(item)
	host, port := item, 0
	if h, p, err := net.SplitHostPort(item); err == nil {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("path %q: bad port %q", item, p)
		}
		host, port = h, n
	}
	if ip := net.ParseIP(host); ip != nil {
		return &net.UDPAddr{IP: ip, Port: port}, nil
	}
	ifc, err := net.InterfaceByName(host)
	if err != nil {
		return nil, fmt.Errorf("path %q is not a local IP address, IP:port or interface name (interfaces here: %s)", item, interfaceNames())
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", host, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return &net.UDPAddr{IP: n.IP.To4(), Port: port}, nil
		}
	}
	return nil, fmt.Errorf("interface %s has no IPv4 address", host)
}

// interfaceNames lists this host's network interfaces for error messages.
func interfaceNames() string {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return "none found"
	}
	names := make([]string, len(ifs))
	for i, f := range ifs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// ListenPaths binds one UDP socket per item of list (comma-separated local
// addresses or interface names, with or without a port, see ResolvePath).
// An empty list gives one unbound socket. On error no socket stays open.
func ListenPaths(list string, remote *net.UDPAddr) ([]*net.UDPConn, error) {
	network := "udp4"
	if remote != nil && remote.IP.To4() == nil {
		network = "udp6"
	}
	var items []string
	for _, it := range strings.Split(list, ",") {
		if strings.TrimSpace(it) != "" {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		c, err := net.ListenUDP(network, nil)
		if err != nil {
			return nil, err
		}
		return []*net.UDPConn{c}, nil
	}
	var out []*net.UDPConn
	for _, it := range items {
		la, err := ResolvePath(it)
		if err == nil {
			var c *net.UDPConn
			if c, err = net.ListenUDP(network, la); err == nil {
				out = append(out, c)
				continue
			}
			err = fmt.Errorf("path %q: %w", strings.TrimSpace(it), err)
		}
		for _, c := range out {
			c.Close()
		}
		return nil, err
	}
	return out, nil
}

// JoinPaths adds conns as further paths of s, in order (backup[i] marks
// conns[i] as a backup), each within timeout. A path that fails to join is
// reported through logf and skipped, so a dead interface does not stop a
// download; a path that joins is reported too. Paths are numbered from 1,
// the first (dialled) path's being 1, so conns[i] is path i+2, as
// mpquic-client's -paths and -backup count. It returns how many paths
// joined. The client runs it while the download already goes over the
// first path, as MPTCP joins subflows.
func JoinPaths(ctx context.Context, s *session.Session, conns []net.PacketConn, remote net.Addr, backup []bool, timeout time.Duration, logf func(string, ...any)) int {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	n := 0
	for i, pc := range conns {
		if ctx.Err() != nil {
			break
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		id, err := s.AddPath(actx, pc, remote, session.PathOptions{Backup: i < len(backup) && backup[i]})
		cancel()
		if err != nil {
			logf("path %d (from %v): not joined: %v", i+2, pc.LocalAddr(), err)
			continue
		}
		logf("path %d (from %v): joined (session path %d)", i+2, pc.LocalAddr(), id)
		n++
	}
	return n
}
