package wire

import "github.com/quic-go/quic-go/quicvarint"

// AppendRecordHeader appends the header of a record of type t for stream id.
// For RecData, n is the length of the data that follows; for RecReset and
// RecStopSending, n is the error code; for RecMaxData, the limit; for RecFin,
// RecMaxStreams and RecMaxUniStreams (whose id field is the stream count), n
// is ignored.
func AppendRecordHeader(b []byte, t byte, id uint64, n uint64) []byte {
	b = append(b, t)
	b = quicvarint.Append(b, id)
	if !oneField(t) {
		b = quicvarint.Append(b, n)
	}
	return b
}

// RecordHeaderLen is the encoded length of AppendRecordHeader(nil, t, id, n).
func RecordHeaderLen(t byte, id, n uint64) int {
	l := 1 + quicvarint.Len(id)
	if !oneField(t) {
		l += quicvarint.Len(n)
	}
	return l
}

// MaxRecordHeaderLen bounds the encoded length of a record header, bytes.
const MaxRecordHeaderLen = 1 + 8 + 8

// oneField reports whether records of type t carry only the id field.
func oneField(t byte) bool { return t == RecFin || t == RecMaxStreams || t == RecMaxUniStreams }

// RecordParser splits the connection-level byte stream into records. Feed it
// bytes in order, in pieces of any size; it calls the handlers as records
// complete. Stream data is handed over piecewise, as it arrives.
type RecordParser struct {
	hdr  [1 + 8 + 8]byte // a partial header
	nhdr int
	id   uint64 // stream of the data being read
	left uint64 // data bytes still to come for the current RecData record
}

// RecordHandler receives what a RecordParser decodes.
type RecordHandler interface {
	StreamData(id uint64, p []byte) error // p is only valid during the call
	StreamFin(id uint64) error
	StreamReset(id uint64, code uint64) error
	StreamMaxData(id uint64, limit uint64) error           // the peer raised the stream's send limit, bytes
	StreamStopSending(id uint64, code uint64) error        // the peer discards what we send on the stream
	MaxStreams(count uint64) error                         // the peer lets us open bidirectional streams with index < count
	MaxUniStreams(count uint64) error                      // the peer lets us open unidirectional streams with index < count
	PathStatus(path uint64, seq uint64, backup bool) error // the peer wants path used as a backup (or not); seq orders its updates
}

// Feed parses p. An error is a connection error: the peer sent a malformed
// record or a handler refused one.
func (rp *RecordParser) Feed(p []byte, h RecordHandler) error {
	for len(p) > 0 {
		if rp.left > 0 {
			n := min(uint64(len(p)), rp.left)
			if err := h.StreamData(rp.id, p[:n]); err != nil {
				return err
			}
			rp.left -= n
			p = p[n:]
			continue
		}
		// Accumulate a header byte by byte until it parses.
		rp.hdr[rp.nhdr] = p[0]
		rp.nhdr++
		p = p[1:]
		done, err := rp.tryHeader(h)
		if err != nil {
			return err
		}
		if !done && rp.nhdr == len(rp.hdr) {
			return malformed("record header too long")
		}
	}
	return nil
}

// tryHeader parses rp.hdr[:rp.nhdr] if it holds a whole header.
func (rp *RecordParser) tryHeader(h RecordHandler) (bool, error) {
	b := rp.hdr[:rp.nhdr]
	t := b[0]
	if t < RecData || t > RecMaxUniStreams {
		return false, malformed("unknown record type %#x", t)
	}
	id, l, err := quicvarint.Parse(b[1:])
	if err != nil {
		return false, nil // need more bytes
	}
	if oneField(t) {
		if 1+l != len(b) {
			return false, nil
		}
		rp.nhdr = 0
		switch t {
		case RecMaxStreams:
			return true, h.MaxStreams(id)
		case RecMaxUniStreams:
			return true, h.MaxUniStreams(id)
		}
		return true, h.StreamFin(id)
	}
	n, l2, err := quicvarint.Parse(b[1+l:])
	if err != nil || 1+l+l2 != len(b) {
		return false, nil
	}
	rp.nhdr = 0
	switch t {
	case RecReset:
		return true, h.StreamReset(id, n)
	case RecMaxData:
		return true, h.StreamMaxData(id, n)
	case RecStopSending:
		return true, h.StreamStopSending(id, n)
	case RecPathStatus:
		return true, h.PathStatus(id, n>>1, n&1 == 1)
	}
	if n == 0 || n > MaxRecordData {
		return false, malformed("record data length %d outside [1, %d]", n, MaxRecordData)
	}
	rp.id, rp.left = id, n
	return true, nil
}
