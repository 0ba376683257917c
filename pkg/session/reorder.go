package session

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// reorderBuf holds segments that arrived ahead of the next in-order one, as
// sorted runs of consecutive sequence numbers. Every segment must fit its
// neighbours exactly (consecutive numbers, adjacent offsets) or leave room
// for the missing ones (at least a byte each), so held segments never
// overlap and all lie in [nextOff, limit): the buffer holds at most the
// receive window. Building an Ack reads at most wire.MaxAckRanges runs.
//
// Bounds: at most maxReorderSegs segments and maxReorderRuns runs (holes);
// a peer that needs more is in violation. Inserting a segment and popping
// a run each cost O(log runs) plus a copy of at most maxReorderRuns run
// headers.
type reorderBuf struct {
	runs  []reorderRun
	segs  int      // segments held
	held  uint64   // bytes held
	spare [][]byte // an empty buffer list for the next new run (see recycle)
}

// reorderRun is the segments [seq, end) at offsets [off, endOff).
type reorderRun struct {
	seq, end    uint64
	off, endOff uint64
	bufs        [][]byte // one pooled buffer per segment, in order
}

// Bounds of the reorder buffer (see reorderBuf).
const (
	maxReorderSegs = 1 << 16
	maxReorderRuns = 4096
)

// errReorder builds a protocol error about segment seq.
func errReorder(seq, off uint64, why string) error {
	return fmt.Errorf("%w: segment %d at offset %d: %s", ErrProtocol, seq, off, why)
}

// find returns the index of the first run whose seq is above s.
func (rb *reorderBuf) find(s uint64) int {
	return sort.Search(len(rb.runs), func(i int) bool { return rb.runs[i].seq > s })
}

// has reports whether segment s is held.
func (rb *reorderBuf) has(s uint64) bool {
	i := rb.find(s)
	return i > 0 && rb.runs[i-1].end > s
}

// fits checks that a segment of n bytes at (s, o) fits between what is
// delivered (next, nextOff), the held runs and the limit.
func (rb *reorderBuf) fits(s, o, n, next, nextOff, limit uint64) error {
	if o+n > limit {
		return errReorder(s, o, fmt.Sprintf("ends at %d beyond the window limit %d", o+n, limit))
	}
	i := rb.find(s)
	prevEnd, prevOff := next, nextOff
	if i > 0 {
		prevEnd, prevOff = rb.runs[i-1].end, rb.runs[i-1].endOff
	}
	if s == prevEnd && o != prevOff || s > prevEnd && o < prevOff+(s-prevEnd) {
		return errReorder(s, o, fmt.Sprintf("overlaps or misses what precedes it (segment %d ends at offset %d)", prevEnd, prevOff))
	}
	if i < len(rb.runs) {
		q := &rb.runs[i]
		if s+1 == q.seq && o+n != q.off || s+1 < q.seq && o+n+(q.seq-s-1) > q.off {
			return errReorder(s, o, fmt.Sprintf("overlaps or misses segment %d at offset %d", q.seq, q.off))
		}
	}
	return nil
}

// insert stores a copy of segment (s, o, p), which fits (see fits) and is
// not held yet.
func (rb *reorderBuf) insert(s, o uint64, p []byte) error {
	if rb.segs >= maxReorderSegs {
		return errReorder(s, o, fmt.Sprintf("more than %d out-of-order segments", maxReorderSegs))
	}
	n := uint64(len(p))
	b := append(getSegBuf(len(p)), p...)
	i := rb.find(s)
	joinPrev := i > 0 && rb.runs[i-1].end == s
	joinNext := i < len(rb.runs) && rb.runs[i].seq == s+1
	switch {
	case joinPrev && joinNext:
		r := &rb.runs[i-1]
		r.bufs = append(append(r.bufs, b), rb.runs[i].bufs...)
		r.end, r.endOff = rb.runs[i].end, rb.runs[i].endOff
		rb.recycle(rb.runs[i].bufs) // its entries are in r.bufs now
		rb.runs = append(rb.runs[:i], rb.runs[i+1:]...)
	case joinPrev:
		r := &rb.runs[i-1]
		r.bufs = append(r.bufs, b)
		r.end, r.endOff = s+1, o+n
	case joinNext:
		r := &rb.runs[i]
		r.bufs = append([][]byte{b}, r.bufs...)
		r.seq, r.off = s, o
	default:
		if len(rb.runs) >= maxReorderRuns {
			putSegBuf(b)
			return errReorder(s, o, fmt.Sprintf("more than %d holes in the reorder buffer", maxReorderRuns))
		}
		rb.runs = append(rb.runs, reorderRun{})
		copy(rb.runs[i+1:], rb.runs[i:])
		bufs := append(rb.spare, b)
		rb.spare = nil
		rb.runs[i] = reorderRun{seq: s, end: s + 1, off: o, endOff: o + n, bufs: bufs}
	}
	rb.segs++
	rb.held += n
	return nil
}

// popFront removes and returns the first run if it starts at next.
func (rb *reorderBuf) popFront(next uint64) (reorderRun, bool) {
	if len(rb.runs) == 0 || rb.runs[0].seq != next {
		return reorderRun{}, false
	}
	r := rb.runs[0]
	// Slide the rest down (as insert does) so that the array is reused.
	rb.runs = slices.Delete(rb.runs, 0, 1)
	rb.segs -= len(r.bufs)
	rb.held -= r.endOff - r.off
	return r, true
}

// recycle takes back the buffer list of a run popFront returned, once the
// caller is done with its buffers, for the next new run: a reorder buffer
// that fills and drains holes in turn then allocates no lists.
func (rb *reorderBuf) recycle(bufs [][]byte) {
	if cap(bufs) > cap(rb.spare) && cap(bufs) <= maxRecycledBufs {
		clear(bufs)
		rb.spare = bufs[:0]
	}
}

// maxRecycledBufs bounds the capacity of a recycled buffer list, entries.
const maxRecycledBufs = 1024

// appendRanges appends the held runs as SACK ranges, at most
// wire.MaxAckRanges in all.
func (rb *reorderBuf) appendRanges(rs []wire.Range) []wire.Range {
	for i := 0; i < len(rb.runs) && len(rs) < wire.MaxAckRanges; i++ {
		rs = append(rs, wire.Range{Start: rb.runs[i].seq, End: rb.runs[i].end})
	}
	return rs
}

// release returns every held buffer to the pool.
func (rb *reorderBuf) release() {
	for _, r := range rb.runs {
		for _, b := range r.bufs {
			putSegBuf(b)
		}
	}
	*rb = reorderBuf{}
}
