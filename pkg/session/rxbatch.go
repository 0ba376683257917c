package session

import (
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// maxReadBatch bounds the segments of one batch that a path's data reader
// hands to the loop, so that the loop holds s.mu for one batch no longer
// than that. A 64 KiB read buffer holds about 50 segments of the default
// size, so on a fast path a read is one batch and one wake-up of the loop
// (16, the bound while the reader processed its segments itself, made a
// read three batches; BenchmarkLoopback measured no difference:
// docs/performance.md).
const maxReadBatch = 64

// rxBatch is the whole segments a path's data reader parsed from its read
// buffer and handed to the loop (issue 30, stage 3: "Path goroutines only
// move datagrams and post events"). The segments' payloads point into the
// reader's buffer, so the reader neither moves nor overwrites those bytes
// until the loop has processed the batch and signalled done; it may go on
// reading into the buffer's free space meanwhile, and post its next batch
// (readSegments). Each path's reader owns rxDepth batches and posts each at
// most once at a time.
//
// A path's datagram reader posts the segments that arrive in datagrams
// (Config.DatagramData at the peer) the same way, through rxDepth batches
// in turn (postDatagramSegment).
type rxBatch struct {
	p      *path
	segs   [maxReadBatch]wire.Segment
	n      int           // segs[:n] wait for the loop
	used   int           // the read buffer's bytes they take
	dgram  bool          // the segments came in datagrams
	posted bool          // posted and not yet known to be done (postDatagramSegment)
	queued bool          // posted and not yet taken by the loop: the reader may add to it (rxQueue.extend); guarded by rxQueue.mu
	done   chan struct{} // capacity 1: the loop processed the batch (or the session closed)
}

// rxDepth is how many batches a path's reader may have posted at once: with
// two, it parses and posts the segments of its next read while the loop
// processes the last, and waits for the loop only when both are posted
// (with one, the emulated paths, which deliver a segment per read, cost the
// receiver a wait per segment: TestLockOpsPerSegment).
const rxDepth = 2

func newRxBatch(p *path) *rxBatch {
	return &rxBatch{p: p, done: make(chan struct{}, 1)}
}

// add appends the whole segments at the front of buf to the batch, up to
// maxReadBatch in all, and returns the bytes they take (also added to
// used). A malformed segment frame is a wire ErrMalformed error.
func (b *rxBatch) add(buf []byte) (int, error) {
	k := 0
	for b.n < maxReadBatch {
		seg, n, err := wire.ParseSegment(buf[k:])
		if err != nil {
			return k, err
		}
		if n == 0 {
			break
		}
		b.segs[b.n] = seg
		b.n++
		k += n
	}
	b.used += k
	return k, nil
}

// rxQueue holds the batches the paths' readers posted and the loop has not
// yet taken, in the order they were posted. Until the loop takes a batch,
// its reader may add more segments to it (extend), so that a loop that
// lags behind its readers takes what they read meanwhile in one wake-up,
// not one per read.
//
// Bound: rxDepth batches per reader (a reader posts a batch again only
// after the loop signalled it done), and two readers per path (its data
// stream's and its datagrams'), so at most 2 × rxDepth × sched.MaxPaths
// batches of at most maxReadBatch segments, whatever the peer sends. The
// readers post and extend with rxQueue.mu alone; the loop takes the batches
// under Session.mu (lock order: Session.mu before rxQueue.mu).
type rxQueue struct {
	mu    sync.Mutex
	q     []*rxBatch // posted, in order; each has queued set
	spare []*rxBatch // the loop's storage to swap with q
}

// post queues b for the loop. The caller then pokes the loop's ack pass.
func (rq *rxQueue) post(b *rxBatch) {
	rq.mu.Lock()
	b.queued = true
	rq.q = append(rq.q, b)
	rq.mu.Unlock()
}

// extend adds the whole segments at the front of buf to b if the loop has
// not taken b yet, and returns the bytes they take (0 if it has, or if b is
// full). A malformed segment frame is a wire ErrMalformed error.
func (rq *rxQueue) extend(b *rxBatch, buf []byte) (int, error) {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if !b.queued {
		return 0, nil
	}
	return b.add(buf)
}

// extendSeg adds seg to b if the loop has not taken b yet and b has room,
// and reports whether it did.
func (rq *rxQueue) extendSeg(b *rxBatch, seg wire.Segment) bool {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if !b.queued || b.n == maxReadBatch {
		return false
	}
	b.segs[b.n] = seg
	b.n++
	return true
}

// take returns the posted batches and empties the queue; from then on their
// readers add nothing to them. The slice is valid until the next take.
func (rq *rxQueue) take() []*rxBatch {
	rq.mu.Lock()
	q := rq.q
	for _, b := range q {
		b.queued = false
	}
	rq.q, rq.spare = rq.spare[:0], q
	rq.mu.Unlock()
	return q
}

// postBatch hands b to the loop: it queues it and pokes the ack pass, which
// processes it (receivedLocked).
func (s *Session) postBatch(b *rxBatch) {
	s.rx.post(b)
	poke(s.ackWake)
}

// waitBatch waits until the loop has processed b, or the session has ended
// (false): then the loop may never process it.
func (s *Session) waitBatch(b *rxBatch) bool {
	select {
	case <-b.done:
		return true
	default:
	}
	s.handoffs.add()
	select {
	case <-b.done:
		return true
	case <-s.done:
		return false
	}
}

// receivedLocked processes the batches the paths' readers posted, at now;
// Session.mu is held (the loop's ack pass). A segment the session refuses
// closes the session with that connection error. It reports whether the
// send pass must run (receiveBatchesLocked).
func (s *Session) receivedLocked(now time.Time) (sendDue bool) {
	sendDue, err := s.receiveBatchesLocked(now)
	if err != nil {
		s.closeLocked(err, codeForErr(err))
	}
	return sendDue
}

// receiveBatchesLocked processes the batches the paths' readers posted, at
// now, in the order they were posted, and tells each reader its batch is
// done; Session.mu is held. The first segment the session refuses stops
// it, and its error (a connection error) is returned; the segments after it
// are dropped. sendDue reports whether a path without a tracer saw segments
// arrive, which the send pass must look at (statsView.segmentsArrived).
func (s *Session) receiveBatchesLocked(now time.Time) (sendDue bool, err error) {
	for _, b := range s.rx.take() {
		p := b.p
		for i := range b.n {
			if err != nil {
				break
			}
			err = s.segmentReceivedLocked(p, b.segs[i], now, b.dgram)
		}
		if b.n > 0 && p.tr == nil && p.sv.segmentsArrived(now) {
			sendDue = true
		}
		clear(b.segs[:b.n]) // keep nothing of the reader's buffer
		b.n = 0
		poke(b.done)
	}
	return sendDue, err
}

// postDatagramSegment hands seg, which came in a datagram on p, to the loop:
// it adds it to the batch posted last if the loop has not taken that yet,
// else posts it in the next of the datagram reader's batches, waiting first
// until the loop has processed that one if it is still posted. An error
// (ErrClosed) means the session ended.
func (s *Session) postDatagramSegment(p *path, d *datagramDecoder, seg wire.Segment) error {
	if d.last != nil && d.last.p == p && s.rx.extendSeg(d.last, seg) {
		return nil // the loop has yet to take the last one
	}
	b := d.rx[d.next]
	if b == nil {
		b = newRxBatch(p)
		b.dgram = true
		d.rx[d.next] = b
	} else if b.posted && !s.waitBatch(b) {
		return ErrClosed
	}
	d.next = (d.next + 1) % rxDepth
	b.p = p
	b.segs[0], b.n, b.posted = seg, 1, true
	d.last = b
	s.postBatch(b)
	return nil
}
