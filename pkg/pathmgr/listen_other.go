//go:build !linux

package pathmgr

import (
	"net"
	"net/netip"
)

// Listen opens the UDP socket of a path over ep, bound to ep's address
// (port chosen by the kernel). Binding to the interface is Linux only.
func Listen(ep Endpoint, remote net.Addr) (net.PacketConn, error) {
	network := "udp6"
	if ep.IP.Is4() {
		network = "udp4"
	}
	return net.ListenPacket(network, netip.AddrPortFrom(ep.IP, 0).String())
}
