package session

import (
	"errors"
	"fmt"
)

// The stream buffers of the data plane on QUIC's model (issue 30:
// docs/data-plane.md). recvBuf is every stream's receive side; sendBuf is
// not wired into the session yet.

// bufBlock is the size of the blocks the stream buffers keep their bytes
// in, as x/net/quic's pipe does: a block is allocated when its first byte
// arrives and freed when its last one is read (or acknowledged).
const bufBlock = 4 << 10

// Errors of the receive buffer, RFC 9000's connection errors.
var (
	errFlowControl = errors.New("FLOW_CONTROL_ERROR")
	errFinalSize   = errors.New("FINAL_SIZE_ERROR")
)

// recvBuf is one stream's receive side: the peer's bytes kept at their
// stream offsets until Read copies them out in order. A frame may arrive
// in any order, twice, or overlapping others (a copy on another path, a
// retransmission); each byte is copied once, from the frame into its
// block, and the stream's own gaps hold back only this stream.
//
// Bound: it holds bytes in [read, limit) only, and limit is what this end
// granted (the stream window), whatever the peer sends: at most
// limit−read bytes in ⌈(limit−read)/bufBlock⌉+1 blocks. A frame past limit
// is errFlowControl, one past or changing a known final size errFinalSize
// (RFC 9000 §4.5), one that would make more than maxRecvGaps spans
// errTooManyGaps. Not safe for concurrent use: its owner serialises.
type recvBuf struct {
	read     uint64   // offset of the next byte Read returns
	limit    uint64   // no byte may arrive at or past it (MAX_STREAM_DATA granted)
	highest  uint64   // one past the highest offset received
	have     rangeset // offsets received at or above read
	blocks   [][]byte // blocks[i] holds offsets [blockBase+i·bufBlock, …+bufBlock); nil until written
	base     uint64   // offset of blocks[0]: read rounded down to a block
	final    uint64   // the final size, once finKnown
	finKnown bool
	n        uint64 // bytes held: the sum of have's spans
}

// maxRecvGaps bounds the spans a stream's receive buffer keeps (so the
// gaps between them, and each frame's cost in have), as quic-go's frame
// sorter bounds its gaps; a peer that fragments a stream more is in
// violation (errTooManyGaps).
const maxRecvGaps = 4096

var errTooManyGaps = errors.New("too many gaps in a stream's data")

// newRecvBuf returns a buffer whose peer may send offsets below limit.
func newRecvBuf(limit uint64) *recvBuf { return &recvBuf{limit: limit} }

// write takes a STREAM frame's data p at off, and its FIN. It returns how
// many bytes it stored that it did not hold before (a frame may repeat or
// overlap earlier ones, or lie below what was read).
func (b *recvBuf) write(off uint64, p []byte, fin bool) (stored uint64, err error) {
	end := off + uint64(len(p))
	if err := b.check(end, fin); err != nil {
		return 0, err
	}
	if fin {
		b.final, b.finKnown = end, true
	}
	b.highest = max(b.highest, end)
	// Only what is new and not yet read is copied.
	lo := max(off, b.read)
	if lo >= end {
		return 0, nil
	}
	if len(b.have) >= maxRecvGaps && !b.have.touches(lo, end) {
		return 0, fmt.Errorf("%w: more than %d spans", errTooManyGaps, maxRecvGaps)
	}
	b.have.gaps(lo, end, func(a, z uint64) error {
		b.copyIn(a, p[a-off:z-off])
		stored += z - a
		return nil
	})
	b.have.add(lo, end)
	b.n += stored
	return stored, nil
}

// writeTo is write for a frame that may go straight into dst, the slice of a
// Read waiting on an empty buffer: when the buffer holds nothing and the
// frame covers the next offset to read, up to len(dst) of its bytes from
// there are copied into dst and count as read (toDst), with no copy into
// the blocks; the rest is stored as write stores it. Issue 30, what to
// build, item 4: "The receive side copies once, from the QUIC payload into
// the stream's reassembly buffer, or straight into Read's slice."
func (b *recvBuf) writeTo(off uint64, p []byte, fin bool, dst []byte) (toDst int, stored uint64, err error) {
	end := off + uint64(len(p))
	if b.n > 0 || len(dst) == 0 || off > b.read || end <= b.read {
		stored, err = b.write(off, p, fin)
		return 0, stored, err
	}
	if err := b.check(end, fin); err != nil { // before anything moves
		return 0, 0, err
	}
	toDst = copy(dst, p[b.read-off:])
	countCopyIn(toDst)
	// Nothing is held: the blocks hold only bytes already read. Drop them
	// and start the blocks at the new read offset.
	for i, blk := range b.blocks {
		if blk != nil {
			putBlock(blk)
		}
		b.blocks[i] = nil
	}
	b.blocks = b.blocks[:0]
	b.read += uint64(toDst)
	b.base = b.read - b.read%bufBlock
	b.have.removeBelow(b.read)
	stored, err = b.write(off, p, fin) // the rest, and the FIN; cannot fail now
	return toDst, stored, err
}

// check is the error of a frame ending at end (with its FIN, if fin) that
// this buffer may not take: past the limit (RFC 9000 §4.1), or past or
// changing a known final size, or a final size below what arrived (§4.5).
func (b *recvBuf) check(end uint64, fin bool) error {
	switch {
	case end > b.limit:
		return fmt.Errorf("%w: %d bytes past the stream's limit %d", errFlowControl, end-b.limit, b.limit)
	case b.finKnown && end > b.final, b.finKnown && fin && end != b.final:
		return fmt.Errorf("%w: data to offset %d, final size %d", errFinalSize, end, b.final)
	case fin && end < b.highest:
		return fmt.Errorf("%w: final size %d below offset %d already received", errFinalSize, end, b.highest)
	}
	return nil
}

// setFinal records the final size a RESET_STREAM gave (RFC 9000 §4.5),
// checked against what arrived and the limit.
func (b *recvBuf) setFinal(size uint64) error {
	switch {
	case size > b.limit:
		return fmt.Errorf("%w: final size %d past the stream's limit %d", errFlowControl, size, b.limit)
	case b.finKnown && size != b.final:
		return fmt.Errorf("%w: final size %d, known as %d", errFinalSize, size, b.final)
	case size < b.highest:
		return fmt.Errorf("%w: final size %d below offset %d already received", errFinalSize, size, b.highest)
	}
	b.final, b.finKnown, b.highest = size, true, size
	return nil
}

// held is how many bytes the buffer holds (readable or behind a gap).
func (b *recvBuf) held() uint64 { return b.n }

// gapped is how many bytes the buffer holds behind a gap: the stream's own
// head-of-line blocking.
func (b *recvBuf) gapped() uint64 { return b.n - b.readable() }

// copyIn copies p into the blocks at offset off (≥ read).
func (b *recvBuf) copyIn(off uint64, p []byte) {
	for len(p) > 0 {
		i := int((off - b.base) / bufBlock)
		for len(b.blocks) <= i {
			b.blocks = append(b.blocks, nil)
		}
		if b.blocks[i] == nil {
			b.blocks[i] = getBlock()
		}
		o := int((off - b.base) % bufBlock)
		n := copy(b.blocks[i][o:], p)
		countCopyIn(n)
		p, off = p[n:], off+uint64(n)
	}
}

// readable is how many bytes Read can return now: the contiguous run from
// read.
func (b *recvBuf) readable() uint64 {
	if sp, ok := b.have.first(); ok && sp.start == b.read {
		return sp.end - b.read
	}
	return 0
}

// allRecvd reports whether the final size is known and every byte below it
// has arrived: RFC 9000 §3.2's "Data Recvd" (or, once read, "Data Read"),
// where "Size Known" is the final size with bytes still missing.
func (b *recvBuf) allRecvd() bool { return b.finKnown && b.read+b.readable() == b.final }

// eof reports whether every byte up to the final size has been read.
func (b *recvBuf) eof() bool { return b.finKnown && b.read == b.final }

// Read copies up to len(p) contiguous bytes into p and frees the blocks
// they emptied; the caller raises limit as the application consumes
// (MAX_STREAM_DATA).
func (b *recvBuf) Read(p []byte) int {
	n := int(min(uint64(len(p)), b.readable()))
	done := 0
	for done < n {
		o := int((b.read - b.base) % bufBlock)
		k := copy(p[done:n], b.blocks[0][o:])
		countCopyIn(k)
		done += k
		b.read += uint64(k)
		if o+k == bufBlock { // the block is used up
			putBlock(b.blocks[0])
			b.blocks[0] = nil
			b.blocks = b.blocks[1:]
			b.base += bufBlock
		}
	}
	b.have.removeBelow(b.read)
	b.n -= uint64(n)
	return n
}

// discard drops everything held (a reset or CancelRead) and returns the
// blocks; later frames are still checked against limit and the final size.
func (b *recvBuf) discard() {
	for i, blk := range b.blocks {
		if blk != nil {
			putBlock(blk)
		}
		b.blocks[i] = nil
	}
	b.blocks = b.blocks[:0]
	b.have = b.have[:0]
	b.n = 0
	b.read = max(b.read, b.highest)
	b.base = b.read - b.read%bufBlock
}

// blockPool recycles blocks across streams and sessions.
var blockPool = make(chan []byte, 256)

func getBlock() []byte {
	select {
	case blk := <-blockPool:
		return blk
	default:
		return make([]byte, bufBlock)
	}
}

func putBlock(blk []byte) {
	select {
	case blockPool <- blk:
	default:
	}
}
