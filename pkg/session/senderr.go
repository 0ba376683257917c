package session

import (
	"errors"
	"net"
	"syscall"
)

// A client's interface going down takes its routes along: the next send on
// that path's socket fails with ENETUNREACH (or EHOSTUNREACH, ENETDOWN,
// EADDRNOTAVAIL once the address is gone), and quic-go ends a connection
// on any send error but a message-size one. For a multipath session that
// is an outage like any other: the socket below each path's quic-go
// connection reports such a send as done, so the packet counts as lost on
// the wire, the path fails and recovers as after a silent outage (probe.go),
// and it is not removed for good. Other errors pass through.
type unreachableTolerant struct{ *net.UDPConn }

func (c unreachableTolerant) WriteTo(b []byte, a net.Addr) (int, error) {
	n, err := c.UDPConn.WriteTo(b, a)
	if transientSendErr(err) {
		return len(b), nil
	}
	return n, err
}

func (c unreachableTolerant) WriteMsgUDP(b, oob []byte, a *net.UDPAddr) (int, int, error) {
	n, oobn, err := c.UDPConn.WriteMsgUDP(b, oob, a)
	if transientSendErr(err) {
		return len(b), len(oob), nil
	}
	return n, oobn, err
}

// transientSendErr reports whether a send failed only because the local
// interface, its address or its route is gone for now.
func transientSendErr(err error) bool {
	return errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETDOWN) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

// tolerateUnreachable wraps a UDP socket so (see unreachableTolerant);
// other PacketConns (the emulator's) are returned as they are.
func tolerateUnreachable(pc net.PacketConn) net.PacketConn {
	if u, ok := pc.(*net.UDPConn); ok {
		return unreachableTolerant{u}
	}
	return pc
}
