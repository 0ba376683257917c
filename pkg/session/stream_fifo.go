package session

// streamFIFO is a queue of streams that reuses its storage: the framer
// takes a stream from the front and puts it back at the end once per
// record, which a plain slice (re-sliced from the front, appended at the
// back) pays for with an allocation each time.
//
// Bounds: it holds at most what was pushed and not popped; its array is at
// most four times the largest length it had.
type streamFIFO struct {
	buf  []*Stream // buf[head:] is the queue
	head int
}

// Len is the number of streams queued.
func (q *streamFIFO) Len() int { return len(q.buf) - q.head }

// Front is the first stream; the queue must not be empty.
func (q *streamFIFO) Front() *Stream { return q.buf[q.head] }

// Push appends st at the back.
func (q *streamFIFO) Push(st *Stream) {
	if len(q.buf) == cap(q.buf) && q.head > 0 && 2*q.head >= len(q.buf) {
		// Half the array or more is popped: slide the queue down rather than
		// grow (amortised O(1): at least as many pops as elements moved).
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, st)
}

// pushFront puts st at the front.
func (q *streamFIFO) pushFront(st *Stream) {
	if q.head > 0 {
		q.head--
		q.buf[q.head] = st
		return
	}
	q.buf = append(q.buf, nil)
	copy(q.buf[1:], q.buf)
	q.buf[0] = st
}

// Pop removes and returns the first stream; the queue must not be empty.
func (q *streamFIFO) Pop() *Stream {
	st := q.buf[q.head]
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	}
	return st
}
