package wire

import "github.com/quic-go/quic-go/quicvarint"

// Frames of protocol version 4 (issue 30, the data plane on QUIC's model):
// what a segment carries.
//
// A segment's payload is a sequence of whole frames, so a segment can be
// processed on arrival, in any order: a frame lost or late on one path
// delays only the stream whose bytes it carries. The frames follow RFC
// 9000 §19 in meaning and, where one exists, in type number; every field is
// a QUIC variable-length integer:
//
//	PADDING          0x00       no content: each zero byte is a frame of its own (§19.1)
//	STREAM           0x08-0x0f  id, [offset if 0x04], [length if 0x02], data; 0x01: FIN (§19.8)
//	RESET_STREAM     0x04       id, error code, final size (§19.4)
//	STOP_SENDING     0x05       id, error code (§19.5)
//	MAX_DATA         0x10       maximum connection data, bytes (§19.9)
//	MAX_STREAM_DATA  0x11       id, maximum stream data, bytes (§19.10)
//	MAX_STREAMS      0x12/0x13  bidirectional/unidirectional stream count (§19.11)
//	PATH_STATUS      0x3e       path ID, sequence number, backup (0 or 1) (RFC 10069's PATH_STATUS_BACKUP/AVAILABLE in one frame)
//
// A STREAM frame without the length bit runs to the end of the segment.
const (
	FramePadding       byte = 0x00 // PADDING
	FrameStream        byte = 0x08 // STREAM, with flag bits frameOff, frameLen, frameFin
	FrameResetStream   byte = 0x04 // RESET_STREAM
	FrameStopSending   byte = 0x05 // STOP_SENDING
	FrameMaxData       byte = 0x10 // MAX_DATA
	FrameMaxStreamData byte = 0x11 // MAX_STREAM_DATA
	FrameMaxStreams    byte = 0x12 // MAX_STREAMS (bidirectional)
	FrameMaxUniStreams byte = 0x13 // MAX_STREAMS (unidirectional)
	FramePathStatus    byte = 0x3e // PATH_STATUS
)

// Flag bits of a STREAM frame's type (RFC 9000 §19.8).
const (
	frameOff byte = 0x04
	frameLen byte = 0x02
	frameFin byte = 0x01
)

// MaxStreamOffset bounds a stream's final size: 2^62 − 1 bytes, the largest
// varint (RFC 9000 §19.8: "The largest offset delivered on a stream -- the
// sum of the offset and data length -- cannot exceed 2^62-1").
const MaxStreamOffset = quicvarint.Max

// StreamFrameHeaderLen is the encoded length of a STREAM frame header with
// its offset and length fields, bytes: what a packer reserves before it
// knows how much data fits.
func StreamFrameHeaderLen(id, off uint64, n int) int {
	l := 1 + quicvarint.Len(id) + quicvarint.Len(uint64(n))
	if off > 0 {
		l += quicvarint.Len(off)
	}
	return l
}

// AppendStreamFrameHeader appends the header of a STREAM frame of n bytes
// of stream id at offset off, with the length field (so more frames may
// follow); the caller appends the n data bytes, straight from the stream's
// send buffer. A zero offset is left out, as RFC 9000 allows.
func AppendStreamFrameHeader(b []byte, id, off uint64, n int, fin bool) []byte {
	t := FrameStream | frameLen
	if off > 0 {
		t |= frameOff
	}
	if fin {
		t |= frameFin
	}
	b = append(b, t)
	b = quicvarint.Append(b, id)
	if off > 0 {
		b = quicvarint.Append(b, off)
	}
	return quicvarint.Append(b, uint64(n))
}

// AppendResetStream appends RESET_STREAM.
func AppendResetStream(b []byte, id, code, finalSize uint64) []byte {
	return appendVarints(append(b, FrameResetStream), id, code, finalSize)
}

// AppendStopSending appends STOP_SENDING.
func AppendStopSending(b []byte, id, code uint64) []byte {
	return appendVarints(append(b, FrameStopSending), id, code)
}

// AppendMaxData appends MAX_DATA.
func AppendMaxData(b []byte, max uint64) []byte { return appendVarints(append(b, FrameMaxData), max) }

// AppendMaxStreamData appends MAX_STREAM_DATA.
func AppendMaxStreamData(b []byte, id, max uint64) []byte {
	return appendVarints(append(b, FrameMaxStreamData), id, max)
}

// MaxStreamsCount is the largest count a MAX_STREAMS frame may carry, 2^60
// (RFC 9000 §19.11): a larger one would allow stream IDs beyond a varint.
const MaxStreamsCount = 1 << 60

// AppendMaxStreams appends MAX_STREAMS for unidirectional (uni) or
// bidirectional streams.
func AppendMaxStreams(b []byte, count uint64, uni bool) []byte {
	t := FrameMaxStreams
	if uni {
		t = FrameMaxUniStreams
	}
	return appendVarints(append(b, t), count)
}

// AppendPathStatus appends PATH_STATUS.
func AppendPathStatus(b []byte, path, seq uint64, backup bool) []byte {
	var v uint64
	if backup {
		v = 1
	}
	return appendVarints(append(b, FramePathStatus), path, seq, v)
}

func appendVarints(b []byte, vs ...uint64) []byte {
	for _, v := range vs {
		b = quicvarint.Append(b, min(v, quicvarint.Max))
	}
	return b
}

// FrameHandler receives the frames ParseFrames decodes. An error it returns
// stops the parse and is returned as it is (a connection error of the
// handler's choosing).
type FrameHandler interface {
	StreamFrame(id, off uint64, data []byte, fin bool) error // data is a slice of the segment: valid during the call only
	ResetStream(id, code, finalSize uint64) error
	StopSending(id, code uint64) error
	MaxData(max uint64) error
	MaxStreamData(id, max uint64) error
	MaxStreams(count uint64, uni bool) error
	PathStatus(path, seq uint64, backup bool) error
}

// FrameEnder is an optional method of a FrameHandler: ParseFrames calls
// FrameEnd after each frame it handled, PADDING included, with the frame's
// span in the payload (bytes start to end), so that a handler can rewrite
// whole frames once they are parsed.
type FrameEnder interface {
	FrameEnd(start, end int)
}

// ParseFrames decodes every frame of a segment's payload p, in order, and
// hands each to h. A malformed frame (unknown type, truncated field, a
// STREAM frame past MaxStreamOffset, an empty payload) is ErrMalformed; it
// never panics and never copies data.
func ParseFrames(p []byte, h FrameHandler) error {
	if len(p) == 0 {
		return malformed("empty segment")
	}
	total := len(p)
	fe, _ := h.(FrameEnder)
	for len(p) > 0 {
		start := total - len(p)
		t := p[0]
		p = p[1:]
		var err error
		switch {
		case t == FramePadding:
		case t&^(frameOff|frameLen|frameFin) == FrameStream:
			p, err = parseStreamFrame(t, p, h)
		case t == FrameResetStream:
			var v [3]uint64
			if p, err = parseVarints(p, v[:]); err == nil {
				if v[2] > MaxStreamOffset {
					return malformed("final size %d", v[2])
				}
				err = h.ResetStream(v[0], v[1], v[2])
			}
		case t == FrameStopSending:
			var v [2]uint64
			if p, err = parseVarints(p, v[:]); err == nil {
				err = h.StopSending(v[0], v[1])
			}
		case t == FrameMaxData:
			var v [1]uint64
			if p, err = parseVarints(p, v[:]); err == nil {
				err = h.MaxData(v[0])
			}
		case t == FrameMaxStreamData:
			var v [2]uint64
			if p, err = parseVarints(p, v[:]); err == nil {
				err = h.MaxStreamData(v[0], v[1])
			}
		case t == FrameMaxStreams || t == FrameMaxUniStreams:
			var v [1]uint64
			if p, err = parseVarints(p, v[:]); err == nil {
				if v[0] > MaxStreamsCount {
					// RFC 9000 §19.11: "If ... a MAX_STREAMS frame is
					// received with a value greater than 2^60, ... the
					// connection MUST be closed immediately with a
					// connection error of type ... FRAME_ENCODING_ERROR".
					return malformed("MAX_STREAMS %d above 2^60", v[0])
				}
				err = h.MaxStreams(v[0], t == FrameMaxUniStreams)
			}
		case t == FramePathStatus:
			var v [3]uint64
			if p, err = parseVarints(p, v[:]); err == nil {
				if v[2] > 1 {
					return malformed("path status %d", v[2])
				}
				err = h.PathStatus(v[0], v[1], v[2] == 1)
			}
		default:
			return malformed("unknown frame type %#x", t)
		}
		if err != nil {
			return err
		}
		if fe != nil {
			fe.FrameEnd(start, total-len(p))
		}
	}
	return nil
}

// parseStreamFrame decodes a STREAM frame of type t from p (after its type
// byte) and returns the rest.
func parseStreamFrame(t byte, p []byte, h FrameHandler) ([]byte, error) {
	var id, off uint64
	var err error
	if id, p, err = varint(p); err != nil {
		return nil, err
	}
	if t&frameOff != 0 {
		if off, p, err = varint(p); err != nil {
			return nil, err
		}
	}
	n := uint64(len(p))
	if t&frameLen != 0 {
		if n, p, err = varint(p); err != nil {
			return nil, err
		}
		if n > uint64(len(p)) {
			return nil, malformed("stream frame of %d bytes, %d left", n, len(p))
		}
	}
	if off+n > MaxStreamOffset || off > MaxStreamOffset {
		return nil, malformed("stream frame ends past 2^62-1")
	}
	if n == 0 && t&frameFin == 0 {
		return nil, malformed("empty stream frame without FIN")
	}
	return p[n:], h.StreamFrame(id, off, p[:n:n], t&frameFin != 0)
}

// varint parses one varint of p.
func varint(p []byte) (uint64, []byte, error) {
	v, l, err := quicvarint.Parse(p)
	if err != nil {
		return 0, nil, malformed("truncated frame")
	}
	return v, p[l:], nil
}

// parseVarints fills v from p and returns the rest.
func parseVarints(p []byte, v []uint64) ([]byte, error) {
	var err error
	for i := range v {
		if v[i], p, err = varint(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}
