package session

import (
	"slices"
	"sync"
)

// byteQueue is a FIFO of bytes kept in chunks, so that appending at the back
// and consuming at the front never copy what is already queued. Next hands
// out views of the chunks, so a chunk is never written again once bytes of
// it were appended (it is only appended to) — unless the queue recycles:
// then consumed chunks go back to a pool, and Next must not be used.
type byteQueue struct {
	chunks  [][]byte
	head    int  // bytes of chunks[0] already consumed
	n       int  // bytes queued
	recycle bool // return consumed chunks to chunkPool (no views handed out)
}

// chunkPool holds recycled chunks of chunkSize bytes, as array pointers so
// that neither Get nor Put allocates.
var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// newChunk returns an empty chunk for at least n bytes.
func (q *byteQueue) newChunk(n int) []byte {
	switch {
	case q.recycle && n <= chunkSize:
		return chunkPool.Get().(*[chunkSize]byte)[:0]
	}
	return make([]byte, 0, max(chunkSize, n))
}

// dropFront removes the consumed first chunk, recycling it if allowed.
func (q *byteQueue) dropFront() {
	if c := q.chunks[0]; q.recycle {
		if cap(c) == chunkSize {
			chunkPool.Put((*[chunkSize]byte)(c[:chunkSize]))
		}
	}
	// Slide the (few) chunk headers down rather than re-slice, so that the
	// array is reused by later appends instead of reallocated.
	q.chunks = slices.Delete(q.chunks, 0, 1)
	q.head = 0
}

// chunkSize is the capacity of a new chunk, bytes.
const chunkSize = 64 << 10

// Len is the number of bytes queued.
func (q *byteQueue) Len() int { return q.n }

// Append copies b to the back of the queue.
func (q *byteQueue) Append(b []byte) {
	q.n += len(b)
	if k := len(q.chunks); k > 0 {
		last := q.chunks[k-1]
		if room := cap(last) - len(last); room > 0 {
			m := min(room, len(b))
			q.chunks[k-1] = append(last, b[:m]...)
			b = b[m:]
		}
	}
	for len(b) > 0 {
		c := q.newChunk(len(b))
		m := min(cap(c), len(b))
		q.chunks = append(q.chunks, append(c, b[:m]...))
		b = b[m:]
	}
}

// Read moves up to len(p) bytes from the front of the queue into p.
func (q *byteQueue) Read(p []byte) int {
	n := 0
	for n < len(p) && len(q.chunks) > 0 {
		c := q.chunks[0][q.head:]
		k := copy(p[n:], c)
		n += k
		q.head += k
		if q.head == len(q.chunks[0]) && (len(q.chunks) > 1 || q.head == cap(q.chunks[0])) {
			q.dropFront()
		} else if q.head == len(q.chunks[0]) {
			break // the last chunk, partly filled: keep it for appends
		}
	}
	q.n -= n
	return n
}

// Next consumes up to n bytes from the front and returns them without
// copying when they lie in one chunk (the returned slice aliases the queue's
// memory, which is never overwritten); otherwise it copies them into a new
// slice.
func (q *byteQueue) Next(n int) []byte {
	n = min(n, q.n)
	if n == 0 {
		return nil
	}
	if c := q.chunks[0][q.head:]; len(c) >= n {
		v := c[:n:n]
		q.head += n
		q.n -= n
		if q.head == len(q.chunks[0]) && (len(q.chunks) > 1 || q.head == cap(q.chunks[0])) {
			q.dropFront()
		}
		return v
	}
	b := make([]byte, n)
	q.Read(b)
	return b
}

// moveTo moves up to n bytes from the front of q to the back of dst, with
// one copy, and returns how many it moved.
func (q *byteQueue) moveTo(dst *byteQueue, n int) int {
	moved := 0
	for moved < n && len(q.chunks) > 0 {
		c := q.chunks[0][q.head:]
		k := min(len(c), n-moved)
		dst.Append(c[:k])
		moved += k
		q.head += k
		q.n -= k
		if q.head == len(q.chunks[0]) && (len(q.chunks) > 1 || q.head == cap(q.chunks[0])) {
			q.dropFront()
		} else if q.head == len(q.chunks[0]) {
			break // the last chunk, partly filled: keep it for appends
		}
	}
	return moved
}

// reset empties the queue, recycling its chunks if allowed.
func (q *byteQueue) reset() {
	for len(q.chunks) > 0 {
		q.dropFront()
	}
	q.chunks, q.head, q.n = nil, 0, 0
}
