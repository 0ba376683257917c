package session

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A client's interface going down takes its routes along: the next send on
// that path's socket fails with ENETUNREACH (or EHOSTUNREACH, ENETDOWN,
// EADDRNOTAVAIL once the address is gone), and quic-go ends a connection
// on any send error but a message-size one. For a multipath session that
// is an outage like any other: the socket below each path's quic-go
// connection reports such a send as done, so the packet counts as lost on
// the wire, the path fails and recovers as after a silent outage (probe.go),
// and it is not removed for good. Other errors pass through.
//
// Swallowed, the error would also hide the outage from the session: a
// server whose route to a client vanished still receives that client's
// packets on the path (its pings, its acknowledgements), which look like
// progress. So each swallowed error is noted by destination (sendErrs), and
// failure.go counts nothing received as progress on a path whose sends
// fail.
type unreachableTolerant struct {
	*net.UDPConn
	errs *sendErrs // where swallowed errors are noted; nil: nowhere
}

func (c unreachableTolerant) WriteTo(b []byte, a net.Addr) (int, error) {
	n, err := c.UDPConn.WriteTo(b, a)
	if transientSendErr(err) {
		c.errs.note(a)
		return len(b), nil
	}
	return n, err
}

func (c unreachableTolerant) WriteMsgUDP(b, oob []byte, a *net.UDPAddr) (int, int, error) {
	n, oobn, err := c.UDPConn.WriteMsgUDP(b, oob, a)
	if transientSendErr(err) {
		c.errs.note(a)
		return len(b), len(oob), nil
	}
	return n, oobn, err
}

// maxSendErrAddrs bounds the destinations a sendErrs remembers; beyond it
// it forgets them all (a path still failing is noted again at its next
// send).
const maxSendErrAddrs = 4096

// sendErrs notes when a send to each destination last failed for want of a
// route. Safe for concurrent use; a nil *sendErrs notes nothing.
type sendErrs struct {
	any  atomic.Bool // some send failed: lastAt's lock-free way out on every check of every path otherwise
	mu   sync.Mutex
	last map[netip.AddrPort]time.Time
}

// sendErrKey is a's map key (IPv4-mapped addresses unmapped); ok is false
// for an address that is not UDP.
func sendErrKey(a net.Addr) (k netip.AddrPort, ok bool) {
	u, ok := a.(*net.UDPAddr)
	if !ok || u == nil {
		return k, false
	}
	ap := u.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// note records a failed send to a, now.
func (e *sendErrs) note(a net.Addr) {
	k, ok := sendErrKey(a)
	if e == nil || !ok {
		return
	}
	now := time.Now()
	e.mu.Lock()
	if e.last == nil || len(e.last) >= maxSendErrAddrs {
		e.last = make(map[netip.AddrPort]time.Time)
	}
	e.last[k] = now
	e.mu.Unlock()
	e.any.Store(true)
}

// lastAt is when a send to a last failed for want of a route (zero: never,
// or forgotten).
func (e *sendErrs) lastAt(a net.Addr) time.Time {
	if e == nil || !e.any.Load() {
		return time.Time{}
	}
	k, ok := sendErrKey(a)
	if !ok {
		return time.Time{}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last[k]
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
	return tolerateUnreachableNoting(pc, nil)
}

// tolerateUnreachableNoting is tolerateUnreachable noting the swallowed
// errors in errs.
func tolerateUnreachableNoting(pc net.PacketConn, errs *sendErrs) net.PacketConn {
	if u, ok := pc.(*net.UDPConn); ok {
		return unreachableTolerant{UDPConn: u, errs: errs}
	}
	return pc
}
