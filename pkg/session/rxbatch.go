package session

import (
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// maxReadBatch bounds the segments of one batch that a path's data reader
// hands to the loop, so that the loop holds s.mu for one batch no longer
// than that. A 64 KiB read buffer holds about 50 segments of the default
// size, so on a fast path a read is one batch and one wake-up of the loop:
// with 16, the bound while the reader processed its segments itself,
// BenchmarkLoopback's session CPU was 4% higher (docs/performance.md).
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
// (Config.DatagramData at the peer) the same way, one per batch, through
// rxDepth batches in turn (postDatagramSegment).
type rxBatch struct {
	p      *path
	segs   [maxReadBatch]wire.Segment
	n      int           // segs[:n] wait for the loop
	used   int           // the read buffer's bytes they take
	dgram  bool          // the segments came in datagrams
	posted bool          // posted and not yet known to be done (postDatagramSegment)
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

// parse fills the batch with the whole segments at the front of buf, at
// most maxReadBatch, and sets used to the bytes they take. A malformed
// segment frame is a wire ErrMalformed error.
func (b *rxBatch) parse(buf []byte) error {
	b.n, b.used = 0, 0
	for b.n < maxReadBatch {
		seg, n, err := wire.ParseSegment(buf[b.used:])
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		b.segs[b.n] = seg
		b.n++
		b.used += n
	}
	return nil
}

// rxQueue holds the batches the paths' data readers posted and the loop has
// not yet processed, in the order they were posted.
//
// Bound: rxDepth batches per reader (a reader posts a batch again only
// after the loop signalled it done), and two readers per path (its data
// stream's and its datagrams'), so at most 2 × rxDepth × sched.MaxPaths
// batches of at most maxReadBatch segments, whatever the peer sends. The readers post with rxQueue.mu alone;
// the loop takes the batches under Session.mu (lock order: Session.mu before
// rxQueue.mu).
type rxQueue struct {
	mu    sync.Mutex
	q     []*rxBatch // posted, in order
	spare []*rxBatch // the loop's storage to swap with q
}

// post queues b for the loop. The caller then pokes the loop's ack pass.
func (rq *rxQueue) post(b *rxBatch) {
	rq.mu.Lock()
	rq.q = append(rq.q, b)
	rq.mu.Unlock()
}

// take returns the posted batches and empties the queue. The slice is valid
// until the next take.
func (rq *rxQueue) take() []*rxBatch {
	rq.mu.Lock()
	q := rq.q
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
		if b.n > 0 && !b.dgram && p.tr == nil && p.sv.segmentsArrived(now) {
			sendDue = true
		}
		clear(b.segs[:b.n]) // keep nothing of the reader's buffer
		b.n = 0
		poke(b.done)
	}
	return sendDue, err
}

// postDatagramSegment hands seg, which came in a datagram on p, to the loop,
// in the next of the datagram reader's batches; before it reuses a batch it
// waits until the loop has processed it. An error (ErrClosed) means the
// session ended.
func (s *Session) postDatagramSegment(p *path, d *datagramDecoder, seg wire.Segment) error {
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
	s.postBatch(b)
	return nil
}
