package session

// Frames refer to the stream's bytes (issue 30, what to build, item 4:
// "Application bytes are copied once, into the stream's send buffer.
// Frames refer to buffer chunks until those are acknowledged.").
//
// fillLocked frames a STREAM frame's header into the framed queue and
// leaves its data in the stream's send buffer (sendBuf), noting where it
// lies (a dataRef). cut makes a segment of whole frames: its inline bytes
// (control frames and STREAM frame headers) and its refs. A path writer
// copies the segment into its batch for quic-go (appendPayload): the
// second and last copy of a byte on the send side. The stream's buffer
// keeps the bytes until the segment that carries them is acknowledged
// (ackRefs), so a segment sent again (a loss, a path that failed, a copy
// for redundancy) is framed afresh from the same bytes.

// dataRef is the data of one STREAM frame: n bytes of st's send buffer
// from stream offset off.
type dataRef struct {
	// pos is, while the frame waits in the framed queue, the connection
	// offset of the data's first byte; in a segment, the position in the
	// segment's inline bytes that the data follows (the end of its
	// frame's header).
	pos uint64
	off uint64
	st  *Stream
	n   int32 // at most a segment
	hl  uint8 // the frame header's length, bytes: it ends at pos
}

// framedQueue is what fillLocked framed and cut has not yet made into
// segments, in connection offsets: inline bytes, and refs to stream data
// between them. Bound: one ref per STREAM frame queued, and fillLocked
// queues at most its target (1 MiB of connection bytes) of frames of at
// least one data byte. Guarded by Session.mu.
type framedQueue struct {
	inline byteQueue // control frames and STREAM frame headers, in order
	refs   []dataRef // the queued frames' data, refs[head:], in order
	head   int
	data   int // bytes the queued refs stand for

	// Storage for the inline bytes and refs of the segments take makes,
	// not handed out yet: one allocation for many segments, as newSegment
	// does for the segments themselves, so the scheduling round that cuts
	// them allocates nothing per segment. A slab stays in memory while any
	// segment that took from it is unacknowledged.
	byteSlab []byte
	refSlab  []dataRef
}

// Slab sizes: a segment of one STREAM frame takes a header of about 8
// inline bytes and one ref.
const (
	byteSlabSize = 4 << 10 // bytes
	refSlabSize  = 256     // refs
)

// Len is the queue's length in connection bytes: inline and data.
func (q *framedQueue) Len() int { return q.inline.Len() + q.data }

// Append queues a whole frame without stream data (a control frame, or a
// STREAM frame that only ends its stream).
func (q *framedQueue) Append(f []byte) { q.inline.Append(f) }

// appendData queues a STREAM frame: its header hdr, whose first byte is
// at connection offset coff, and n bytes of st's send buffer from stream
// offset off.
func (q *framedQueue) appendData(coff uint64, hdr []byte, st *Stream, off uint64, n int) {
	q.inline.Append(hdr)
	if q.head > 0 && q.head >= len(q.refs)/2 { // slide down rather than grow
		k := copy(q.refs, q.refs[q.head:])
		clear(q.refs[k:])
		q.refs, q.head = q.refs[:k], 0
	}
	q.refs = append(q.refs, dataRef{pos: coff + uint64(len(hdr)), hl: uint8(len(hdr)), st: st, off: off, n: int32(n)})
	q.data += n
}

// take moves the frames of connection bytes [from, from+n), whole frames,
// into g's inline bytes and refs.
func (q *framedQueue) take(g *segment, from uint64, n int) {
	end := from + uint64(n)
	k := 0
	for k < len(q.refs)-q.head && q.refs[q.head+k].pos < end {
		k++
	}
	g.refs = q.carveRefs(k)
	inline := n
	for i := range g.refs {
		r := q.refs[q.head]
		q.refs[q.head] = dataRef{}
		q.head++
		// The data placed before it in this segment is n-inline bytes.
		r.pos = r.pos - from - uint64(n-inline)
		inline -= int(r.n)
		q.data -= int(r.n)
		g.refs[i] = r
	}
	if q.head == len(q.refs) {
		q.refs, q.head = q.refs[:0], 0
	}
	g.data = q.carveBytes(inline)
	q.inline.Read(g.data)
}

// carveBytes returns n bytes of storage from the byte slab, or of their
// own when n is a large share of a slab (a segment of many control
// frames).
func (q *framedQueue) carveBytes(n int) []byte { return carve(&q.byteSlab, n, byteSlabSize) }

// carveRefs returns k refs of storage from the ref slab (nil for none), or
// of their own when k is a large share of a slab.
func (q *framedQueue) carveRefs(k int) []dataRef {
	if k == 0 {
		return nil
	}
	return carve(&q.refSlab, k, refSlabSize)
}

// carve returns n elements cut from the front of *slab, which it replaces
// by a fresh slab of size elements when too few are left; n above an
// eighth of a slab gets storage of its own, so that a large cut does not
// waste most of a slab.
func carve[T any](slab *[]T, n, size int) []T {
	if n > len(*slab) {
		if n > size/8 {
			return make([]T, n)
		}
		*slab = make([]T, size)
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

// appendPayload appends g's frames to dst, the stream data copied from
// the streams' send buffers, and returns the extended slice. Session.mu is
// held: the buffers' owner.
//
// A segment sent again carries no data of a stream this end has reset
// (RFC 9000 §13.3: "Application data sent in STREAM frames is
// retransmitted in new STREAM frames unless the endpoint has sent a
// RESET_STREAM for that stream"), nor does one cut before the reset and
// sent for the first time after it (§3.3: "A sender MUST NOT send a STREAM
// or STREAM_DATA_BLOCKED frame for a stream in the "Reset Sent" state or
// any terminal state -- that is, after sending a RESET_STREAM frame"; such
// a segment went out with its data until 29 Nov). Segments keep their
// sequence numbers and connection offsets, so a frame cannot be left out:
// a reset stream's frame goes as PADDING (0x00 bytes, which the peer
// skips), header included, and the peer never sees its bytes after its
// RESET_STREAM. Its send buffer was given back at the reset
// (sendBuf.drop).
func appendPayload(dst []byte, g *segment) []byte {
	prev := uint64(0)
	for _, r := range g.refs {
		if r.st.send.err != nil {
			dst = append(dst, g.data[prev:r.pos-uint64(r.hl)]...)
			dst = append(dst, make([]byte, int(r.hl)+int(r.n))...)
		} else {
			dst = append(dst, g.data[prev:r.pos]...)
			dst = r.st.send.buf.appendTo(dst, r.off, int(r.n))
			countCopyOut(int(r.n))
		}
		prev = r.pos
	}
	return append(dst, g.data[prev:]...)
}

// ackRefs tells the streams' send buffers that g's data was acknowledged,
// so that they free what no segment refers to any more, and clears g's
// refs, so that the slab they lie in keeps no stream alive.
func ackRefs(g *segment) {
	for _, r := range g.refs {
		r.st.send.buf.ackedRange(r.off, int(r.n), false)
	}
	clear(g.refs)
}
