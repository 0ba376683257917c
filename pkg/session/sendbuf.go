package session

import "sync"

// sendBuf is one stream's send side on QUIC's model (issue 30, stage 2):
// the application's bytes are copied once, by write, into blocks; a STREAM
// frame is framed at packing time from a range of them (appendTo, called
// by a path writer: framedq.go), and stays in the blocks until it is
// acknowledged. What is in flight, lost or acknowledged is ranges of
// offsets, not copies: a lost frame puts its range back into unsent, so its
// retransmission is framed afresh from the same bytes, on whichever path
// the scheduler picks (RFC 9000 §13.3: "Data sent in CRYPTO and STREAM
// frames is retransmitted in new STREAM frames unless the endpoint has
// reset the corresponding stream").
//
// In the session a retransmission is the same segment sent again, its
// bytes copied afresh from here (framedq.go); next and lost, which re-frame
// lost ranges, are this type's model (TestSendBufRecvBufModel), not yet
// the session's.
//
// Bound: it holds the written bytes not yet acknowledged, in as many
// blocks of bufBlock bytes plus one. The session caps them: what is not
// framed at Config.SendBuffer per stream, what is framed and not
// acknowledged at Config.MaxUnackedBytes for all streams together, so a
// session holds at most those bytes plus one partly used block per stream
// (Config.MaxStreams of the peer's, and the application's own); an idle
// stream whose bytes are all acknowledged holds no block
// (TestSendBufBlocks). Not safe for concurrent use: Session.mu guards it.
type sendBuf struct {
	base   uint64   // offset of blocks[0]: at or below acked, less than a block below
	acked  uint64   // every byte below it is acknowledged
	end    uint64   // one past the last byte written
	blocks [][]byte // blocks[i] holds offsets [base+i·bufBlock, …+bufBlock)
	unsent rangeset // offsets to send: new, or declared lost
	ackSet rangeset // offsets acknowledged at or above acked

	fin      bool // the application closed the stream: the final size is end
	finSent  bool // the FIN went out in a frame not declared lost
	finAcked bool
	dropped  bool // the stream was reset: blocks given back, nothing is read again
}

// drop gives every block back and keeps nothing past end, for a stream
// reset: no frame of it is read again (a reset stream's frames go as
// PADDING, framedq.go), and later acknowledgements change nothing.
func (b *sendBuf) drop(end uint64) {
	for _, blk := range b.blocks {
		if blk != nil {
			putSendBlock(blk)
		}
	}
	b.blocks = nil
	b.unsent = b.unsent[:0]
	b.end, b.dropped = end, true
}

// write appends p (the one copy of the application's bytes).
func (b *sendBuf) write(p []byte) {
	if len(p) == 0 {
		return
	}
	b.unsent.add(b.end, b.end+uint64(len(p)))
	for len(p) > 0 {
		i := int((b.end - b.base) / bufBlock)
		if i == len(b.blocks) {
			b.blocks = append(b.blocks, getSendBlock())
		}
		n := copy(b.blocks[i][(b.end-b.base)%bufBlock:], p)
		p, b.end = p[n:], b.end+uint64(n)
	}
}

// close marks the end of the stream: the next frame that reaches end
// carries the FIN.
func (b *sendBuf) close() { b.fin = true }

// next returns the lowest range to send, at most max bytes, and whether
// the frame carries the FIN; ok is false when nothing (not even a FIN)
// is due.
func (b *sendBuf) next(max int) (off uint64, n int, fin, ok bool) {
	if sp, has := b.unsent.first(); has {
		n := int(min(sp.end-sp.start, uint64(max)))
		return sp.start, n, b.fin && sp.start+uint64(n) == b.end, true
	}
	if b.fin && !b.finSent {
		return b.end, 0, true, true
	}
	return 0, 0, false, false
}

// appendTo appends bytes [off, off+n) to dst: the copy into the packet.
func (b *sendBuf) appendTo(dst []byte, off uint64, n int) []byte {
	for n > 0 {
		blk := b.blocks[(off-b.base)/bufBlock]
		o := (off - b.base) % bufBlock
		k := min(n, bufBlock-int(o))
		dst = append(dst, blk[o:int(o)+k]...)
		off, n = off+uint64(k), n-k
	}
	return dst
}

// sent records a frame of [off, off+n) (and the FIN) as sent.
func (b *sendBuf) sent(off uint64, n int, fin bool) {
	b.unsent.remove(off, off+uint64(n))
	if fin {
		b.finSent = true
	}
}

// lost puts a lost frame's range back into unsent, less what was
// acknowledged meanwhile (a copy on another path may have made it).
func (b *sendBuf) lost(off uint64, n int, fin bool) {
	lo := max(off, b.acked)
	b.ackSet.gaps(lo, max(lo, off+uint64(n)), func(a, z uint64) error {
		b.unsent.add(a, z)
		return nil
	})
	if fin && !b.finAcked {
		b.finSent = false
	}
}

// ackedRange records a frame of [off, off+n) (and the FIN) as
// acknowledged, and frees the blocks below the acknowledged prefix.
func (b *sendBuf) ackedRange(off uint64, n int, fin bool) {
	if fin {
		b.finAcked = true
	}
	end := off + uint64(n)
	if end <= b.acked || b.dropped {
		return
	}
	b.ackSet.add(max(off, b.acked), end)
	b.unsent.remove(off, end) // a copy elsewhere made it: no retransmission
	if sp, ok := b.ackSet.first(); ok && sp.start == b.acked {
		b.acked = sp.end
		b.ackSet.removeBelow(b.acked)
	}
	for b.acked-b.base >= bufBlock && len(b.blocks) > 0 {
		putSendBlock(b.blocks[0])
		b.blocks[0] = nil
		b.blocks = b.blocks[1:]
		b.base += bufBlock
	}
	if b.acked == b.end && len(b.blocks) > 0 {
		// Everything written is acknowledged: an idle stream keeps no
		// block. The next write starts a block at end.
		putSendBlock(b.blocks[0])
		b.blocks[0] = nil
		b.blocks, b.base = b.blocks[:0], b.end
	}
}

// done reports whether every byte and the FIN are acknowledged.
func (b *sendBuf) done() bool { return b.fin && b.finAcked && b.acked == b.end }

// buffered is how many bytes the buffer holds: written, not acknowledged.
func (b *sendBuf) buffered() uint64 { return b.end - b.acked }

// sendBlocks recycles the send buffers' blocks, as array pointers so that
// neither Get nor Put allocates. Unlike the receive side's bounded
// blockPool, a sync.Pool holds as many as the senders give back between
// two garbage collections: a sender's blocks come and go with its window.
var sendBlocks = sync.Pool{New: func() any { return new([bufBlock]byte) }}

func getSendBlock() []byte { return sendBlocks.Get().(*[bufBlock]byte)[:] }

func putSendBlock(blk []byte) { sendBlocks.Put((*[bufBlock]byte)(blk)) }
