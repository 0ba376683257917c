package session

import "sort"

// span is a half-open range [start, end) of sequence numbers.
type span struct{ start, end uint64 }

// rangeset is a set of uint64s kept as ascending, disjoint, non-adjacent
// spans, in the manner of RFC 9000 §13.2.3's ACK ranges (and x/net/quic's
// rangeset): adding a span merges it with its neighbours, so a set built
// from k spans holds at most k, and walking what a span adds to the set
// costs its number of gaps, not its length.
//
// The sender keeps the segments that SACK ranges acknowledged above its
// cumulative base in one (sender.sacked); its size is bounded by the
// segments in flight (half of them, at worst alternate), which
// Config.MaxUnackedBytes bounds. Not safe for concurrent use: it belongs
// to the sender.
type rangeset []span

// add inserts [start, end).
func (s *rangeset) add(start, end uint64) {
	if start >= end {
		return
	}
	r := *s
	// i: the first span that ends at or after start (it may merge).
	i := sort.Search(len(r), func(i int) bool { return r[i].end >= start })
	// j: one past the last span that starts at or before end.
	j := i
	for j < len(r) && r[j].start <= end {
		j++
	}
	if i == j { // nothing to merge: insert at i
		r = append(r, span{})
		copy(r[i+1:], r[i:])
		r[i] = span{start, end}
		*s = r
		return
	}
	r[i] = span{min(start, r[i].start), max(end, r[j-1].end)}
	if j > i+1 { // spans i+1..j-1 merged into i: close the hole (an Ack that acknowledges nothing new never gets here)
		*s = append(r[:i+1], r[j:]...)
	}
}

// removeBelow drops every value below v.
func (s *rangeset) removeBelow(v uint64) {
	r := *s
	i := sort.Search(len(r), func(i int) bool { return r[i].end > v })
	r = r[i:]
	if len(r) > 0 && r[0].start < v {
		r[0].start = v
	}
	if len(r) == 0 {
		*s = (*s)[:0]
		return
	}
	*s = r
}

// gaps calls f for each maximal span of [start, end) that is not in the
// set, in ascending order, and stops at f's first error. Its cost is the
// number of the set's spans that overlap [start, end), plus f's.
func (s rangeset) gaps(start, end uint64, f func(lo, hi uint64) error) error {
	i := sort.Search(len(s), func(i int) bool { return s[i].end > start })
	for start < end {
		if i == len(s) || s[i].start >= end {
			return f(start, end)
		}
		if s[i].start > start {
			if err := f(start, s[i].start); err != nil {
				return err
			}
		}
		start = s[i].end
		i++
	}
	return nil
}

// remove deletes [start, end) from the set.
func (s *rangeset) remove(start, end uint64) {
	if start >= end {
		return
	}
	r := *s
	i := sort.Search(len(r), func(i int) bool { return r[i].end > start })
	if i == len(r) || r[i].start >= end {
		return
	}
	if r[i].start < start && r[i].end > end { // split one span in two
		r = append(r, span{})
		copy(r[i+2:], r[i+1:])
		r[i+1] = span{end, r[i].end}
		r[i].end = start
		*s = r
		return
	}
	if r[i].start < start { // keep the head of span i
		r[i].end = start
		i++
	}
	j := i
	for j < len(r) && r[j].end <= end {
		j++
	}
	if j < len(r) && r[j].start < end { // keep the tail of span j
		r[j].start = end
	}
	if j > i {
		r = append(r[:i], r[j:]...)
	}
	*s = r
}

// first returns the set's lowest span; ok is false for an empty set.
func (s rangeset) first() (sp span, ok bool) {
	if len(s) == 0 {
		return span{}, false
	}
	return s[0], true
}

// touches reports whether [start, end) overlaps or adjoins a span, so that
// adding it adds no span.
func (s rangeset) touches(start, end uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].end >= start })
	return i < len(s) && s[i].start <= end
}
