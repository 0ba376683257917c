package pathmgr

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// Listen opens the UDP socket of a path over ep: bound to ep's address
// (port chosen by the kernel) and, when the kernel allows it, to ep's
// interface (SO_BINDTOIFINDEX, or SO_BINDTODEVICE by name on kernels before
// 5.0), so that its packets leave through that interface whatever the
// routing table prefers. Without the privilege for that (kernels before
// 5.7 need CAP_NET_RAW) it is bound to the address only.
func Listen(ep Endpoint, remote net.Addr) (net.PacketConn, error) {
	pc, err := listen(ep, true)
	if errors.Is(err, unix.EPERM) {
		return listen(ep, false)
	}
	return pc, err
}

func listen(ep Endpoint, toDevice bool) (net.PacketConn, error) {
	network := "udp6"
	if ep.IP.Is4() {
		network = "udp4"
	}
	lc := net.ListenConfig{}
	if toDevice {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BINDTOIFINDEX, ep.Index)
				if errors.Is(serr, unix.ENOPROTOOPT) {
					serr = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, ep.Name)
				}
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	return lc.ListenPacket(context.Background(), network, netip.AddrPortFrom(ep.IP, 0).String())
}
