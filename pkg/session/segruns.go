package session

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// segRuns tracks the segments that arrived ahead of the next in-order one,
// as sorted runs of consecutive sequence numbers: what the receiver's Acks
// report above their cumulative number (protocol version 4 processes a
// segment's frames on arrival, so no segment data is kept here; the
// streams' receive buffers hold the bytes). Every segment must fit its
// neighbours exactly (consecutive numbers, adjacent offsets) or leave room
// for the missing ones (at least a byte each), so the segments never
// overlap and all lie at or above nextOff. Building an Ack reads at most
// wire.MaxAckRanges runs.
//
// Bounds: at most maxReorderSegs segments and maxReorderRuns runs (holes);
// a peer that needs more is in violation. Inserting a segment and popping
// a run each cost O(log runs) plus a copy of at most maxReorderRuns run
// headers.
type segRuns struct {
	runs []segRun
	segs int // segments ahead of the next in-order one
}

// segRun is the segments [seq, end) at offsets [off, endOff).
type segRun struct {
	seq, end    uint64
	off, endOff uint64
	segs        int
}

// Bounds of segRuns.
const (
	maxReorderSegs = 1 << 16
	maxReorderRuns = 4096
)

// errReorder builds a protocol error about segment seq.
func errReorder(seq, off uint64, why string) error {
	return fmt.Errorf("%w: segment %d at offset %d: %s", ErrProtocol, seq, off, why)
}

// find returns the index of the first run whose seq is above s.
func (rb *segRuns) find(s uint64) int {
	return sort.Search(len(rb.runs), func(i int) bool { return rb.runs[i].seq > s })
}

// has reports whether segment s arrived (ahead of the next in-order one).
func (rb *segRuns) has(s uint64) bool {
	i := rb.find(s)
	return i > 0 && rb.runs[i-1].end > s
}

// fits checks that a segment of n bytes at (s, o) fits between what is in
// order (next, nextOff) and the runs. (Until protocol version 5 it also
// had to end below the connection window's limit, which counted segment
// bytes; the connection's credit counts stream bytes now, connflow.go.)
func (rb *segRuns) fits(s, o, n, next, nextOff uint64) error {
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

// insert records segment s of n bytes at o, which fits (see fits) and has
// not arrived before.
func (rb *segRuns) insert(s, o, n uint64) error {
	if rb.segs >= maxReorderSegs {
		return errReorder(s, o, fmt.Sprintf("more than %d out-of-order segments", maxReorderSegs))
	}
	i := rb.find(s)
	joinPrev := i > 0 && rb.runs[i-1].end == s
	joinNext := i < len(rb.runs) && rb.runs[i].seq == s+1
	switch {
	case joinPrev && joinNext:
		r := &rb.runs[i-1]
		r.end, r.endOff = rb.runs[i].end, rb.runs[i].endOff
		r.segs += 1 + rb.runs[i].segs
		rb.runs = slices.Delete(rb.runs, i, i+1)
	case joinPrev:
		r := &rb.runs[i-1]
		r.end, r.endOff = s+1, o+n
		r.segs++
	case joinNext:
		r := &rb.runs[i]
		r.seq, r.off = s, o
		r.segs++
	default:
		if len(rb.runs) >= maxReorderRuns {
			return errReorder(s, o, fmt.Sprintf("more than %d holes among the segments received", maxReorderRuns))
		}
		rb.runs = slices.Insert(rb.runs, i, segRun{seq: s, end: s + 1, off: o, endOff: o + n, segs: 1})
	}
	rb.segs++
	return nil
}

// popFront removes and returns the first run if it starts at next.
func (rb *segRuns) popFront(next uint64) (segRun, bool) {
	if len(rb.runs) == 0 || rb.runs[0].seq != next {
		return segRun{}, false
	}
	r := rb.runs[0]
	rb.runs = slices.Delete(rb.runs, 0, 1) // slides the rest down: the array is reused
	rb.segs -= r.segs
	return r, true
}

// appendRanges appends the runs as SACK ranges, at most wire.MaxAckRanges
// in all.
func (rb *segRuns) appendRanges(rs []wire.Range) []wire.Range {
	for i := 0; i < len(rb.runs) && len(rs) < wire.MaxAckRanges; i++ {
		rs = append(rs, wire.Range{Start: rb.runs[i].seq, End: rb.runs[i].end})
	}
	return rs
}
