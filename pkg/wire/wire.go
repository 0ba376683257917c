// Package wire encodes and decodes the frames of the mpqsched multipath
// session. Three places carry frames:
//
//   - the per-path data stream (one unidirectional QUIC stream per path and
//     direction): a handshake frame (Hello, Join or Accept) first, then
//     Segment frames;
//   - QUIC datagrams on any path: Ack and Report frames, and application
//     datagrams (datagram.go);
//   - a segment's payload: whole stream and control frames (frame.go),
//     each of which the receiver processes on arrival, in any order.
//
// Every decoder returns an error on malformed input and never panics; the
// session turns such an error into a connection error.
package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/quic-go/quic-go/quicvarint"
)

// Frame types on a path's data stream.
const (
	TypeHello     byte = 0x01 // client → server: open a new session on this path
	TypeJoin      byte = 0x02 // client → server: attach this path to an existing session
	TypeAccept    byte = 0x03 // server → client: the session ID and the path's ID
	TypeJoinEarly byte = 0x04 // client → server: a Join that may travel as TLS 0-RTT data (Join.Early)
	TypeSegment   byte = 0x10 // either way: one connection-level segment
)

// Frame types carried in QUIC datagrams.
const (
	TypeAck    byte = 0x20 // connection-level acknowledgement and window
	TypeReport byte = 0x21 // receiver measurements for learning schedulers
	TypeAckReq byte = 0x22 // sender → receiver: send an Ack now (the last one may be lost)
	TypePing   byte = 0x23 // either way: a probe of a silent path (ack-eliciting at the QUIC level; no payload, nothing to do)
	TypeSilent byte = 0x24 // receiver → sender: nothing arrived on a path for a while (path ID, varint)
)

// Magic opens every path's data stream: "MPQ" and the protocol version 5.
//
// Version 5 (issue 30) changed, from version 4: the connection's flow
// control is RFC 9000 §4.1's. The credit counts stream bytes, each
// stream's highest offset received (or its final size), not segment
// offsets. Params carry a fourth varint, MaxData (initial_max_data); an
// Ack's second field, which was Limit (a segment offset), is MaxData (RFC
// 9000's MAX_DATA), raised as the receiving application reads. A
// MAX_DATA frame in a segment raises it too. A segment's offset is left to
// the sender, which bounds what it holds unacknowledged itself.
//
// Version 4 (issue 30) changed, from version 3: a segment's payload is a
// sequence of whole frames (frame.go: STREAM with its stream offset, and
// RFC 9000's control frames), not a slice of one connection-level byte
// stream of records; the receiver processes each segment as it arrives, so
// a segment late on one path delays only the streams whose bytes it
// carries. The segment's sequence number is for acknowledgement, loss
// detection and reinjection only; its offset counts the frame bytes sent
// before it, which the connection window (Ack.Limit) bounded until version
// 5. RESET_STREAM carries the stream's final size (RFC 9000 §19.4).
//
// Version 3 (issue 19) changed, from version 2:
//   - stream IDs follow RFC 9000 §2.1: index<<2 | unidirectional<<1 |
//     server-initiated (bidirectional IDs were index<<1 | server);
//   - Params (in Hello and Accept) gained a third varint, MaxUniStreams, and
//     MAX_STREAMS for unidirectional streams raises that credit;
//   - a Join may be sent as TLS 0-RTT data (Join.Early, frame type 0x04),
//     authenticated without the connection binding and refused if replayed;
//   - QUIC datagrams may carry application datagrams (TypeAppDatagram);
//   - a path's CONNECTION_CLOSE carries the application's close code and
//     reason (pkg/session closeerr.go).
//
// Versions do not interoperate: a peer that opens with another version is
// refused.
var Magic = [4]byte{'M', 'P', 'Q', 5}

// Size limits that the decoders enforce.
const (
	SessionIDLen      = 16       // bytes
	NonceLen          = 16       // bytes
	MACLen            = 32       // bytes (HMAC-SHA256)
	MaxSegmentPayload = 16 << 10 // largest segment payload accepted, bytes
	MaxAckRanges      = 32       // largest number of SACK ranges in one Ack
)

// ErrMalformed wraps every decoding error.
var ErrMalformed = errors.New("wire: malformed frame")

func malformed(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
}

// Params are the stream limits an endpoint grants its peer when the session
// opens (the stream-layer part of QUIC's transport parameters). They are
// raised later with MAX_STREAMS, MAX_STREAM_DATA and MAX_DATA frames
// (frame.go). On the wire: four varints in field order.
type Params struct {
	MaxStreams    uint64 // bidirectional streams the peer may open before the first MAX_STREAMS
	StreamWindow  uint64 // bytes the peer may send on each stream before its first MAX_STREAM_DATA
	MaxUniStreams uint64 // unidirectional streams the peer may open before the first MAX_STREAMS (unidirectional)
	MaxData       uint64 // stream bytes the peer may send on all streams together before the first MAX_DATA (RFC 9000's initial_max_data)
}

// Hello opens a new session.
type Hello struct {
	Params Params // the client's grants to the server
}

// Join attaches a path to session SessionID. MAC authenticates the join with
// the key both ends derived from the session's first path (see session).
// Early selects TypeJoinEarly: the same fields, with a MAC that does not
// depend on the joining connection, so that the client can send it as TLS
// 0-RTT data; its Nonce then begins with a counter (see session).
type Join struct {
	SessionID [SessionIDLen]byte // the session to join
	Nonce     [NonceLen]byte     // fresh per join; an early Join's begins with the session's join counter
	MAC       [MACLen]byte       // HMAC-SHA256 with the session's join key (session)
	Early     bool               // sent as 0-RTT data (frame type 0x04), not bound to the connection
}

// Accept answers a Hello or a valid Join.
type Accept struct {
	SessionID [SessionIDLen]byte // the session the path belongs to
	PathID    uint32             // the path's ID, assigned by the server
	Params    Params             // the server's grants to the client
}

// Segment is one slice of the connection-level byte stream.
type Segment struct {
	Seq     uint64 // connection-level sequence number
	Offset  uint64 // frame bytes the sender sent in earlier segments (the connection window bounds Offset+len(Payload)), bytes
	Payload []byte // at most MaxSegmentPayload bytes
}

// AppendHandshake appends the stream magic and a Hello, Join or Accept.
func AppendHandshake(b []byte, f any) []byte {
	b = append(b, Magic[:]...)
	switch f := f.(type) {
	case Hello:
		b = append(b, TypeHello)
		b = appendParams(b, f.Params)
	case *Join:
		if f.Early {
			b = append(b, TypeJoinEarly)
		} else {
			b = append(b, TypeJoin)
		}
		b = append(b, f.SessionID[:]...)
		b = append(b, f.Nonce[:]...)
		b = append(b, f.MAC[:]...)
	case *Accept:
		b = append(b, TypeAccept)
		b = append(b, f.SessionID[:]...)
		b = quicvarint.Append(b, uint64(f.PathID))
		b = appendParams(b, f.Params)
	default:
		panic(fmt.Sprintf("wire: not a handshake frame: %T", f))
	}
	return b
}

// ReadHandshake reads the stream magic and one handshake frame: Hello, *Join
// or *Accept.
func ReadHandshake(r *bufio.Reader) (any, error) {
	var m [4]byte
	if _, err := io.ReadFull(r, m[:]); err != nil {
		return nil, readErr(err)
	}
	if m != Magic {
		return nil, malformed("bad magic %x", m)
	}
	t, err := r.ReadByte()
	if err != nil {
		return nil, readErr(err)
	}
	switch t {
	case TypeHello:
		var h Hello
		if err := readParams(r, &h.Params); err != nil {
			return nil, err
		}
		return h, nil
	case TypeJoin, TypeJoinEarly:
		j := &Join{Early: t == TypeJoinEarly}
		for _, p := range [][]byte{j.SessionID[:], j.Nonce[:], j.MAC[:]} {
			if _, err := io.ReadFull(r, p); err != nil {
				return nil, readErr(err)
			}
		}
		return j, nil
	case TypeAccept:
		a := new(Accept)
		if _, err := io.ReadFull(r, a.SessionID[:]); err != nil {
			return nil, readErr(err)
		}
		id, err := quicvarint.Read(r)
		if err != nil {
			return nil, readErr(err)
		}
		if id > 1<<31 {
			return nil, malformed("path ID %d too large", id)
		}
		a.PathID = uint32(id)
		if err := readParams(r, &a.Params); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, malformed("unknown handshake frame type %#x", t)
}

func appendParams(b []byte, p Params) []byte {
	b = quicvarint.Append(b, min(p.MaxStreams, quicvarint.Max))
	b = quicvarint.Append(b, min(p.StreamWindow, quicvarint.Max))
	b = quicvarint.Append(b, min(p.MaxUniStreams, quicvarint.Max))
	return quicvarint.Append(b, min(p.MaxData, quicvarint.Max))
}

func readParams(r *bufio.Reader, p *Params) error {
	var err error
	if p.MaxStreams, err = quicvarint.Read(r); err != nil {
		return readErr(err)
	}
	if p.StreamWindow, err = quicvarint.Read(r); err != nil {
		return readErr(err)
	}
	if p.MaxUniStreams, err = quicvarint.Read(r); err != nil {
		return readErr(err)
	}
	if p.MaxData, err = quicvarint.Read(r); err != nil {
		return readErr(err)
	}
	return nil
}

// SegmentHeaderLen returns the encoded header size of a segment, bytes.
func SegmentHeaderLen(seq, offset uint64, n int) int {
	return 1 + quicvarint.Len(seq) + quicvarint.Len(offset) + quicvarint.Len(uint64(n))
}

// AppendSegmentHeader appends a Segment frame's header for a payload of n
// bytes; the payload follows it on the stream.
func AppendSegmentHeader(b []byte, seq, offset uint64, n int) []byte {
	b = append(b, TypeSegment)
	b = quicvarint.Append(b, seq)
	b = quicvarint.Append(b, offset)
	return quicvarint.Append(b, uint64(n))
}

// ReadSegment reads one Segment frame. buf is reused for the payload if it
// is large enough; the returned Payload aliases it.
func ReadSegment(r *bufio.Reader, buf []byte) (Segment, error) {
	t, err := r.ReadByte()
	if err != nil {
		return Segment{}, err // io.EOF at a frame boundary is a clean end
	}
	if t != TypeSegment {
		return Segment{}, malformed("unexpected frame type %#x on data stream", t)
	}
	var s Segment
	if s.Seq, err = quicvarint.Read(r); err != nil {
		return Segment{}, readErr(err)
	}
	if s.Offset, err = quicvarint.Read(r); err != nil {
		return Segment{}, readErr(err)
	}
	n, err := quicvarint.Read(r)
	if err != nil {
		return Segment{}, readErr(err)
	}
	if err := checkSegment(s.Offset, n); err != nil {
		return Segment{}, err
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	s.Payload = buf[:n]
	if _, err := io.ReadFull(r, s.Payload); err != nil {
		return Segment{}, readErr(err)
	}
	return s, nil
}

// checkSegment is the ErrMalformed error of a Segment frame whose payload
// length n (bytes) or offset cannot be valid, or nil.
func checkSegment(offset, n uint64) error {
	if n == 0 || n > MaxSegmentPayload {
		return malformed("segment length %d outside [1, %d]", n, MaxSegmentPayload)
	}
	if offset+n < offset {
		return malformed("segment offset overflows")
	}
	return nil
}

// ParseSegment decodes the Segment frame at the start of b without copying:
// the Payload aliases b. It returns the frame's length, bytes, or 0 if b
// holds only part of a frame (then nothing is decoded; read more). A frame
// that can never become valid is an ErrMalformed error, as ReadSegment's.
func ParseSegment(b []byte) (Segment, int, error) {
	if len(b) == 0 {
		return Segment{}, 0, nil
	}
	if b[0] != TypeSegment {
		return Segment{}, 0, malformed("unexpected frame type %#x on data stream", b[0])
	}
	var s Segment
	i := 1
	var fields [3]uint64
	for k := range fields {
		v, l, err := quicvarint.Parse(b[i:])
		if err != nil {
			return Segment{}, 0, nil // a truncated varint: its only error
		}
		fields[k] = v
		i += l
	}
	s.Seq, s.Offset = fields[0], fields[1]
	n := fields[2]
	if err := checkSegment(s.Offset, n); err != nil {
		return Segment{}, 0, err
	}
	if uint64(len(b)-i) < n {
		return Segment{}, 0, nil
	}
	s.Payload = b[i : i+int(n) : i+int(n)]
	return s, i + int(n), nil
}

// readErr turns a truncated read into a malformed-frame error.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return malformed("truncated frame")
	}
	return err
}
