package session

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Issue 30, what to build, item 3: "Path goroutines only move datagrams and
// post events", and the brief: "Every buffer, map, queue and goroutine a
// peer can cause has a bound that does not depend on what the peer
// announces". A path's data reader processes no segment itself: it posts
// them to the loop, at most rxDepth batches of at most maxReadBatch, and
// reads no further until the loop has processed the oldest. Here no loop
// runs at first, and the peer has sent far more than that.
func TestReaderPostsToTheLoopBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScriptedPeer(t, nil)
		sp.s.rcv.maxData = sp.s.rcv.nextMaxData()
		const segs = 4 * rxDepth * maxReadBatch
		var stream []byte
		for range segs {
			sp.data(0, make([]byte, 40))
			g := sp.cut(1500)
			stream = append(wire.AppendSegmentHeader(stream, g.Seq, g.Offset, len(g.Payload)), g.Payload...)
		}
		if len(stream) > dataReadBuf {
			t.Fatalf("the test's %d bytes do not fit one read buffer", len(stream))
		}
		src := &chunkReader{b: stream, rng: rand.New(rand.NewPCG(1, 1)), max: 2000}
		sp.p.in = bufio.NewReader(src)
		type result struct {
			conn bool
			err  error
		}
		res := make(chan result, 1)
		go func() {
			conn, err := sp.s.readSegments(sp.p)
			res <- result{conn, err}
		}()
		synctest.Wait() // the reader waits for the loop

		posted := func() (batches, segments int) {
			sp.s.rx.mu.Lock()
			defer sp.s.rx.mu.Unlock()
			for _, b := range sp.s.rx.q {
				segments += b.n
			}
			return len(sp.s.rx.q), segments
		}
		nb, ns := posted()
		sp.s.mu.Lock()
		processed := sp.s.rcv.next
		sp.s.mu.Unlock()
		if nb != rxDepth || ns == 0 || ns > rxDepth*maxReadBatch || processed != 0 || len(src.b) == 0 {
			t.Fatalf("with no loop: %d batches of %d segments posted, %d segments processed, %d bytes left unread; want %d batches of at most %d, none processed, the reader stopped",
				nb, ns, processed, len(src.b), rxDepth, rxDepth*maxReadBatch)
		}

		// The loop processes what was posted, oldest first; the reader posts
		// the rest, up to the bound again.
		sp.s.mu.Lock()
		sp.s.receivedLocked(sp.s.now())
		processed = sp.s.rcv.next
		sp.s.mu.Unlock()
		if processed != uint64(ns) {
			t.Fatalf("the loop processed %d segments, want the %d posted", processed, ns)
		}
		synctest.Wait()
		if nb, ns = posted(); nb != rxDepth || ns == 0 || ns > rxDepth*maxReadBatch {
			t.Fatalf("after one pass: %d batches of %d segments posted, want %d of at most %d", nb, ns, rxDepth, maxReadBatch)
		}

		// A session that ends releases the waiting reader.
		sp.close()
		synctest.Wait()
		select {
		case r := <-res:
			if !r.conn || !errors.Is(r.err, ErrClosed) {
				t.Fatalf("reader ended with %v (connection error %v), want ErrClosed", r.err, r.conn)
			}
		default:
			t.Fatal("the reader still waits after the session ended")
		}
	})
}

// The same for the segments that come in datagrams (Config.DatagramData at
// the peer): the datagram reader posts them to the loop, adding each to the
// batch it posted last while the loop has not taken that, and waits once it
// has rxDepth full batches posted and unprocessed.
func TestDatagramSegmentsPostedToTheLoopBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScriptedPeer(t, nil)
		sp.s.rcv.maxData = sp.s.rcv.nextMaxData()
		const most = rxDepth * maxReadBatch
		var dgs [][]byte
		for range most + 1 {
			sp.data(0, []byte("datagram"))
			g := sp.cut(1500)
			dgs = append(dgs, append(wire.AppendSegmentHeader(nil, g.Seq, g.Offset, len(g.Payload)), g.Payload...))
		}
		for _, b := range dgs[:most] {
			if err := sp.s.datagramReceived(sp.p, &sp.dec, b); err != nil {
				t.Fatal(err)
			}
		}
		last := make(chan error, 1)
		go func() { last <- sp.s.datagramReceived(sp.p, &sp.dec, dgs[most]) }()
		synctest.Wait()
		select {
		case err := <-last:
			t.Fatalf("the reader posted a segment past %d unprocessed (err %v)", most, err)
		default:
		}
		sp.s.rx.mu.Lock()
		batches := len(sp.s.rx.q)
		sp.s.rx.mu.Unlock()
		sp.s.mu.Lock()
		processed := sp.s.rcv.next
		sp.s.receivedLocked(sp.s.now())
		sp.s.mu.Unlock()
		if processed != 0 || batches != rxDepth {
			t.Fatalf("%d segments processed before the loop ran, in %d batches; want 0, in %d", processed, batches, rxDepth)
		}
		if err := <-last; err != nil {
			t.Fatal(err)
		}
		sp.s.mu.Lock()
		sp.s.receivedLocked(sp.s.now())
		processed = sp.s.rcv.next
		sp.s.mu.Unlock()
		if processed != most+1 {
			t.Fatalf("%d segments processed, want %d", processed, most+1)
		}
		sp.close()
	})
}

// A segment that the loop takes from a path's reader is data heard on that
// path, whichever reader posted it: a path without a tracer records it
// (statsView.segmentsArrived), which its liveness and probing read
// (signals.go, probe.go).
func TestPostedSegmentsMarkThePathHeard(t *testing.T) {
	for _, dgram := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			sp := newScriptedPeer(t, nil)
			sp.p.tr = nil // the path reads quic-go's statistics (statsView)
			sp.s.rcv.maxData = sp.s.rcv.nextMaxData()
			sp.data(0, []byte("heard"))
			g := sp.cut(1500)
			if dgram {
				b := append(wire.AppendSegmentHeader(nil, g.Seq, g.Offset, len(g.Payload)), g.Payload...)
				if err := sp.datagram(b); err != nil {
					t.Fatal(err)
				}
			} else {
				b := newRxBatch(sp.p)
				b.segs[0], b.n = g, 1
				sp.s.postBatch(b)
				sp.s.mu.Lock()
				sp.s.receivedLocked(sp.s.now())
				sp.s.mu.Unlock()
			}
			sp.s.mu.Lock()
			heard := sp.p.sv.lastData
			sp.s.mu.Unlock()
			if !heard.Equal(time.Now()) {
				t.Errorf("datagram %v: the path last heard data at %v, want now (%v)", dgram, heard, time.Now())
			}
			sp.close()
		})
	}
}
