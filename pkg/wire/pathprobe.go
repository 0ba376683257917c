package wire

import "fmt"

// Path probes: plain UDP datagrams on a path's socket, outside every QUIC
// connection (pkg/session probe_udp.go).
//
// The client probes a silent path with its QUIC connection's DATAGRAM
// pings, but after an outage that connection's congestion window may be
// full of packets sent into the dark: quic-go then sends nothing more
// until its backed-off probe timer fires, hundreds of milliseconds after
// the link returned. A path probe goes out on the path's socket at once,
// and the server's listener answers it at once, so an answer shows that
// the link carries packets both ways again, and the client joins the path
// again with a fresh connection.
//
// Both kinds have the first two bits of the first byte clear, so that
// quic-go hands them to the application (quic.Transport's
// ReadNonQUICPacket) instead of treating them as QUIC packets. Each is
// authenticated with the session's join key (the MAC), and an answer
// echoes the probe's nonce, so only the session's two ends can make one,
// and an answer answers one probe.
const (
	TypePathProbe       byte = 0x0d // client → server, on the path's socket: is this path's link back?
	TypePathProbeAnswer byte = 0x0e // server → client: it is (the probe's nonce, the server's MAC)
)

// PathProbeLen is the length of a path probe and of its answer, bytes: the
// type, the session ID, a nonce and a MAC truncated to PathProbeMACLen.
const PathProbeLen = 1 + SessionIDLen + PathProbeNonceLen + PathProbeMACLen

// Lengths of a path probe's fields, bytes.
const (
	PathProbeNonceLen = 8
	PathProbeMACLen   = 16
)

// PathProbe is a path probe or its answer.
type PathProbe struct {
	Answer    bool                    // TypePathProbeAnswer, else TypePathProbe
	SessionID [SessionIDLen]byte      // the session whose path is probed
	Nonce     [PathProbeNonceLen]byte // random in a probe; an answer echoes its probe's
	MAC       [PathProbeMACLen]byte   // the sender's MAC over the type, the session ID and the nonce
}

// Type is the probe's first byte.
func (p *PathProbe) Type() byte {
	if p.Answer {
		return TypePathProbeAnswer
	}
	return TypePathProbe
}

// AppendPathProbe appends p's encoding (PathProbeLen bytes) to b.
func AppendPathProbe(b []byte, p *PathProbe) []byte {
	b = append(b, p.Type())
	b = append(b, p.SessionID[:]...)
	b = append(b, p.Nonce[:]...)
	return append(b, p.MAC[:]...)
}

// IsPathProbe reports whether datagram b is a path probe or an answer by
// its first byte (ParsePathProbe checks the rest).
func IsPathProbe(b []byte) bool {
	return len(b) > 0 && (b[0] == TypePathProbe || b[0] == TypePathProbeAnswer)
}

// ParsePathProbe decodes datagram b into p. A datagram of another length
// or type is malformed.
func ParsePathProbe(b []byte, p *PathProbe) error {
	if len(b) != PathProbeLen || !IsPathProbe(b) {
		return fmt.Errorf("%w: path probe of %d bytes", ErrMalformed, len(b))
	}
	p.Answer = b[0] == TypePathProbeAnswer
	b = b[1:]
	b = b[copy(p.SessionID[:], b):]
	b = b[copy(p.Nonce[:], b):]
	copy(p.MAC[:], b)
	return nil
}
