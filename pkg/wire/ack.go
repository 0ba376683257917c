package wire

import (
	"bytes"

	"github.com/quic-go/quic-go/quicvarint"
)

// Range is a half-open range [Start, End) of segment sequence numbers.
type Range struct {
	Start uint64 // the first sequence number in the range
	End   uint64 // one past the last
}

// Ack acknowledges segments at connection level, like QUIC's ACK frame,
// and carries the connection's credit, like QUIC's MAX_DATA frame (RFC
// 9000 §19.9; protocol version 5): the stream bytes, summed over the
// streams' highest offsets, that the sender may send.
type Ack struct {
	Cum     uint64  // every segment with Seq < Cum was received
	MaxData uint64  // the connection's credit: stream bytes, all streams together (RFC 9000 §4.1)
	Ranges  []Range // segments received above Cum, ascending, disjoint, at most MaxAckRanges
}

// AppendAck appends an Ack datagram. Ranges are encoded as gaps from the
// previous end, so they must be ascending and start above Cum.
func AppendAck(b []byte, a *Ack) []byte {
	b = append(b, TypeAck)
	b = quicvarint.Append(b, a.Cum)
	b = quicvarint.Append(b, a.MaxData)
	n := min(len(a.Ranges), MaxAckRanges)
	b = quicvarint.Append(b, uint64(n))
	prev := a.Cum
	for _, r := range a.Ranges[:n] {
		b = quicvarint.Append(b, r.Start-prev)
		b = quicvarint.Append(b, r.End-r.Start)
		prev = r.End
	}
	return b
}

// ParseAck decodes an Ack datagram (type byte included) into a, reusing
// a.Ranges' storage.
func ParseAck(p []byte, a *Ack) error {
	r := bytes.NewReader(p)
	t, err := r.ReadByte()
	if err != nil || t != TypeAck {
		return malformed("not an ack")
	}
	if a.Cum, err = quicvarint.Read(r); err != nil {
		return readErr(err)
	}
	if a.MaxData, err = quicvarint.Read(r); err != nil {
		return readErr(err)
	}
	n, err := quicvarint.Read(r)
	if err != nil {
		return readErr(err)
	}
	if n > MaxAckRanges {
		return malformed("%d ack ranges, more than %d", n, MaxAckRanges)
	}
	a.Ranges = a.Ranges[:0]
	prev := a.Cum
	for i := uint64(0); i < n; i++ {
		gap, err := quicvarint.Read(r)
		if err != nil {
			return readErr(err)
		}
		l, err := quicvarint.Read(r)
		if err != nil {
			return readErr(err)
		}
		start := prev + gap
		end := start + l
		if gap == 0 || start < prev || end <= start {
			return malformed("bad ack range %d", i)
		}
		a.Ranges = append(a.Ranges, Range{start, end})
		prev = end
	}
	if r.Len() != 0 {
		return malformed("%d trailing bytes after ack", r.Len())
	}
	return nil
}

// Report carries what the receiver measured over one interval (the reward
// features of learning schedulers such as EdAR).
type Report struct {
	IntervalMicros uint64    // length of the interval, µs
	GoodputBytes   uint64    // bytes delivered in order in the interval
	PathBytes      [8]uint64 // bytes received on each of the first 8 paths (by path ID) in the interval
	OutOfOrder     uint64    // segments that arrived out of order in the interval
	ReorderBytes   uint64    // bytes held in the reorder buffer at the end of the interval
	HoLMicros      uint64    // head-of-line blocked time in the interval, µs
	DuplicateBytes uint64    // bytes received more than once in the interval
}

// AppendReport appends a Report datagram. Values beyond the varint range
// (2^62 − 1) are sent as its maximum.
func AppendReport(b []byte, r *Report) []byte {
	b = append(b, TypeReport)
	b = appendClamped(b, r.IntervalMicros)
	b = appendClamped(b, r.GoodputBytes)
	for _, v := range r.PathBytes {
		b = appendClamped(b, v)
	}
	b = appendClamped(b, r.OutOfOrder)
	b = appendClamped(b, r.ReorderBytes)
	b = appendClamped(b, r.HoLMicros)
	return appendClamped(b, r.DuplicateBytes)
}

// appendClamped appends v as a varint, saturating at quicvarint.Max.
func appendClamped(b []byte, v uint64) []byte { return quicvarint.Append(b, min(v, quicvarint.Max)) }

// ParseReport decodes a Report datagram (type byte included).
func ParseReport(p []byte, rep *Report) error {
	r := bytes.NewReader(p)
	t, err := r.ReadByte()
	if err != nil || t != TypeReport {
		return malformed("not a report")
	}
	fields := make([]*uint64, 0, 14)
	fields = append(fields, &rep.IntervalMicros, &rep.GoodputBytes)
	for i := range rep.PathBytes {
		fields = append(fields, &rep.PathBytes[i])
	}
	fields = append(fields, &rep.OutOfOrder, &rep.ReorderBytes, &rep.HoLMicros, &rep.DuplicateBytes)
	for _, f := range fields {
		if *f, err = quicvarint.Read(r); err != nil {
			return readErr(err)
		}
	}
	if r.Len() != 0 {
		return malformed("%d trailing bytes after report", r.Len())
	}
	return nil
}
