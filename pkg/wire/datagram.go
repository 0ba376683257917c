package wire

import "github.com/quic-go/quic-go/quicvarint"

// TypeAppDatagram is the QUIC datagram that carries one application
// datagram (RFC 9221 semantics: unreliable, unordered, never retransmitted):
// the type byte, the sender's datagram sequence number (varint), then the
// payload up to the end of the QUIC datagram. A redundant scheduler sends
// copies with the same sequence number on several paths; the receiver
// delivers the first and discards the others.
const TypeAppDatagram byte = 0x30

// MaxAppDatagramHeaderLen bounds the header of an application datagram
// (type byte and an 8-byte varint), bytes. A payload of the QUIC datagram
// limit minus this many bytes always fits, whatever its sequence number.
const MaxAppDatagramHeaderLen = 1 + 8

// AppDatagramHeaderLen is the header length of application datagram seq,
// bytes.
func AppDatagramHeaderLen(seq uint64) int { return 1 + quicvarint.Len(seq) }

// AppendAppDatagram appends an application datagram with sequence number
// seq (< 2^62) and payload p.
func AppendAppDatagram(b []byte, seq uint64, p []byte) []byte {
	b = append(b, TypeAppDatagram)
	b = quicvarint.Append(b, seq)
	return append(b, p...)
}

// ParseAppDatagram decodes an application datagram (type byte included)
// without copying: the payload aliases b. An empty payload is valid, as an
// empty RFC 9221 DATAGRAM frame is.
func ParseAppDatagram(b []byte) (seq uint64, payload []byte, err error) {
	if len(b) == 0 || b[0] != TypeAppDatagram {
		return 0, nil, malformed("not an application datagram")
	}
	seq, n, err := quicvarint.Parse(b[1:])
	if err != nil {
		return 0, nil, malformed("truncated application datagram sequence number")
	}
	return seq, b[1+n:], nil
}
