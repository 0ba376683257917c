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
	// sparse (with recycle) starts with a small chunk while the queue holds
	// little and gives the last chunk back once empty: for stream buffers,
	// which are many and mostly idle.
	sparse bool
	// segChunks (with recycle) makes every chunk a segment buffer of the
	// pool class for segChunks bytes (getSegBuf), so that takeFront can hand
	// a chunk that holds one whole segment to that segment without a copy:
	// for the sender's pend, whose one-segment fills land in one chunk.
	segChunks int
}

// chunkPool holds recycled chunks of chunkSize bytes, as array pointers so
// that neither Get nor Put allocates.
var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// smallPool holds recycled chunks of smallChunk bytes.
var smallPool = sync.Pool{New: func() any { return new([smallChunk]byte) }}

// smallChunk is the capacity of the first chunk of a recycling queue that
// holds little, bytes: a stream that buffers a few bytes (a request, a
// reply) costs a small chunk, not a 64 KiB one, so MaxStreams streams a
// peer opens with one byte each hold MaxStreams KiB, not 64× that.
const smallChunk = 1 << 10

// newChunk returns an empty chunk for at least n bytes.
func (q *byteQueue) newChunk(n int) []byte {
	switch {
	case q.segChunks > 0 && q.recycle:
		return getSegBuf(q.segChunks)
	case q.sparse && q.recycle && q.n <= smallChunk: // q.n counts the n bytes being appended
		return smallPool.Get().(*[smallChunk]byte)[:0]
	case q.recycle && n <= chunkSize:
		return chunkPool.Get().(*[chunkSize]byte)[:0]
	}
	return make([]byte, 0, max(chunkSize, n))
}

// dropFront removes the consumed first chunk, recycling it if allowed.
func (q *byteQueue) dropFront() {
	if c := q.chunks[0]; q.recycle && q.segChunks > 0 {
		putSegBuf(c)
	} else if q.recycle {
		switch cap(c) {
		case chunkSize:
			chunkPool.Put((*[chunkSize]byte)(c[:chunkSize]))
		case smallChunk:
			smallPool.Put((*[smallChunk]byte)(c[:smallChunk]))
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
	q.releaseIfEmpty()
	return n
}

// releaseIfEmpty gives an empty sparse queue's last chunk back to its pool,
// so that an idle stream holds no chunk.
func (q *byteQueue) releaseIfEmpty() {
	if q.n == 0 && q.sparse && q.recycle {
		for len(q.chunks) > 0 {
			q.dropFront()
		}
	}
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
	q.releaseIfEmpty()
	return moved
}

// takeFront consumes the first n bytes and returns them without a copy if
// they are exactly the first chunk, a segment buffer (segChunks), whose
// ownership passes to the caller (who gives it back with putSegBuf);
// otherwise it returns nil and consumes nothing.
func (q *byteQueue) takeFront(n int) []byte {
	if q.segChunks == 0 || !q.recycle || len(q.chunks) == 0 || q.head != 0 || len(q.chunks[0]) != n || n == 0 {
		return nil
	}
	if c := cap(q.chunks[0]); c != segBufCap && c != segBufCapLarge {
		return nil // a larger segment's chunk is not pooled: copy as before
	}
	c := q.chunks[0]
	q.chunks = slices.Delete(q.chunks, 0, 1)
	q.n -= n
	return c
}

// reset empties the queue, recycling its chunks if allowed.
func (q *byteQueue) reset() {
	for len(q.chunks) > 0 {
		q.dropFront()
	}
	q.chunks, q.head, q.n = nil, 0, 0
}
