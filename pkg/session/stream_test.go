package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Item 5: "No way to abort a stream." RFC 9000 §3.2: RESET_STREAM carries an
// application error code the receiving application observes; §3.5: "An
// endpoint that receives a STOP_SENDING frame MUST send a RESET_STREAM
// frame" and "SHOULD copy the error code". (On the harness, the session as
// the writer and as the reader in turn: the frames carry the codes.)
func TestCancelWriteAndReadCodes(t *testing.T) {
	// The session as the writer.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		var se *StreamError
		// CancelWrite: the peer gets RESET_STREAM with the code; a later
		// Write fails with this end's cancel.
		w, _ := tc.s.OpenStream()
		w.Write([]byte("partial"))
		tc.wantRecord("the data", 0, dataFrame{ID: w.ID(), Data: "partial"})
		w.CancelWrite(42)
		tc.wantRecord("CancelWrite(42): RESET_STREAM 42", 0, resetFrame{ID: w.ID(), Code: 42})
		if _, err := w.Write([]byte("more")); !errors.As(err, &se) || se.ErrorCode != 42 || se.Remote {
			t.Errorf("Write after CancelWrite: %v, want the local cancel", err)
		}
		// The peer's CancelRead (STOP_SENDING 7): the writer's blocked or
		// next Write fails with the code, and the reset echoes it.
		w2, _ := tc.s.OpenStream()
		w2.Write([]byte("hello"))
		tc.wantRecord("the second stream's data", 0, dataFrame{ID: w2.ID(), Data: "hello"})
		tc.ackAll(0)
		tc.writeFrames(0, stopFrame{ID: w2.ID(), Code: 7})
		tc.wantRecord("STOP_SENDING 7 is answered by RESET_STREAM 7", 0, resetFrame{ID: w2.ID(), Code: 7})
		if _, err := w2.Write(make([]byte, 4<<20)); !errors.As(err, &se) || se.ErrorCode != 7 || !se.Remote {
			t.Errorf("Write after the peer's CancelRead(7): %v", err)
		}
		// Both streams are done once the peer ends its sides.
		tc.ackAll(0)
		tc.writeFrames(0, finFrame{ID: w.ID()}, finFrame{ID: w2.ID()})
		io.ReadAll(w)
		io.ReadAll(w2)
		tc.advance(time.Second)
		if err := tc.s.Err(); err != nil {
			t.Errorf("session: %v", err)
		}
		tc.s.mu.Lock()
		if n := tc.s.streams.Len(); n != 0 {
			t.Errorf("the session keeps %d streams", n)
		}
		tc.s.mu.Unlock()
	})
	// The session as the reader.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		var se *StreamError
		// The peer's CancelWrite (RESET_STREAM 42): Read returns the code.
		tc.writeFrames(0, dataFrame{ID: 0, Data: "partial"}, resetFrame{ID: 0, Code: 42})
		r := accept(t, tc.s, time.Second)
		if _, err := io.ReadAll(r); !errors.As(err, &se) || se.ErrorCode != 42 || !se.Remote || !errors.Is(err, ErrStreamReset) {
			t.Errorf("Read after the peer's RESET_STREAM(42): %v", err)
		}
		// CancelRead(7): the peer gets STOP_SENDING 7.
		tc.writeFrames(0, dataFrame{ID: 4, Data: "hello"})
		r2 := accept(t, tc.s, time.Second)
		r2.CancelRead(7)
		tc.wantRecord("CancelRead(7): STOP_SENDING 7", 0, stopFrame{ID: 4, Code: 7})
		tc.writeFrames(0, resetFrame{ID: 4, Code: 7}) // as a peer obeying it
		// Both streams are done once this end ends its sides.
		r.Close()
		r2.Close()
		tc.advance(time.Second)
		if err := tc.s.Err(); err != nil {
			t.Errorf("session: %v", err)
		}
		tc.s.mu.Lock()
		if n := tc.s.streams.Len(); n != 0 {
			t.Errorf("the session keeps %d streams", n)
		}
		tc.s.mu.Unlock()
	})
}

// Item 6: "flushAckLocked calls quic-go's SendDatagram with s.mu held; it
// blocks while 32 datagrams are queued, stalling every stream and the
// scheduler." No datagram goes out with the session lock held.
//
// The hook behaves like a SendDatagram that blocks until another goroutine
// could take the session lock: it records a send made with the lock held
// (after 2 s of real time, so the test cannot hang).
func TestNoDatagramUnderLock(t *testing.T) {
	var calls, locked atomic.Int64
	wrapDatagram = func(s *Session, send func([]byte) error) func([]byte) error {
		return func(b []byte) error {
			calls.Add(1)
			free := make(chan struct{})
			go func() { s.mu.Lock(); s.mu.Unlock(); close(free) }()
			select {
			case <-free:
			case <-time.After(2 * time.Second):
				locked.Add(1)
			}
			return send(b)
		}
	}
	defer func() { wrapDatagram = nil }()
	// Real time: synctest would not advance its clock past a goroutine
	// blocked on a mutex.
	a := emu.LinkConfig{RateBps: 100e6, Delay: time.Millisecond}
	tb := newTestbedOn(t, 1, &Config{CloseTimeout: 5 * time.Second}, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: a, Down: a})
	defer tb.close()
	st, _ := tb.cli.OpenStream()
	go func() { st.Write(make([]byte, 1<<20)); st.Close() }()
	peer := accept(t, tb.srv, 10*time.Second)
	readAll(t, peer, 20*time.Second)
	peer.Close()
	readAll(t, st, 20*time.Second)
	tb.cli.Close() // sends the final Ack on every path
	if calls.Load() == 0 || locked.Load() != 0 {
		t.Errorf("%d of %d datagrams were sent with the session lock held", locked.Load(), calls.Load())
	}
}

// Isolation: "with one stream never read, another stream still moves 10 MB
// at ≥ 0.8 of the goodput it gets alone."
func TestUnreadStreamIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("two 10 MB transfers")
	}
	const size = 10 << 20
	run := func(withHog bool) time.Duration {
		var el time.Duration
		synctest.Test(t, func(t *testing.T) {
			a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
			b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
			tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
			defer tb.close()
			if withHog {
				hog, _ := tb.srv.OpenStream()
				go hog.Write(make([]byte, 2*DefaultRecvWindow)) // never read by the client
				accept(t, tb.cli, 5*time.Second)
				time.Sleep(time.Second)
			}
			st, _ := tb.srv.OpenStream()
			data := bytes.Repeat([]byte("isolation"), size/9+1)[:size]
			start := time.Now()
			go func() { st.Write(data); st.Close() }()
			got := readAll(t, accept(t, tb.cli, 5*time.Second), time.Minute)
			el = time.Since(start)
			if !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes, not the %d written", len(got), len(data))
			}
		})
		return el
	}
	alone, hogged := run(false), run(true)
	ratio := alone.Seconds() / hogged.Seconds()
	t.Logf("10 MB alone in %v, beside an unread stream in %v: %.3f of the goodput", alone, hogged, ratio)
	// RFC 9000 §4.1: "Stream flow control, which prevents a single stream
	// from consuming the entire receive buffer for a connection by limiting
	// the amount of data that can be sent on each stream."
	if ratio < 0.8 {
		t.Errorf("beside an unread stream the transfer keeps %.3f of its goodput, want ≥ 0.8", ratio)
	}
}

// 100,000 sequential request/response streams on one session (each: open,
// write 1 KB, read a 1 KB reply, close): no error, and the heap after is
// within 2 MiB of the heap after the first 1,000.
func TestHundredThousandStreams(t *testing.T) {
	n := 100_000
	if testing.Short() || raceEnabled { // ThreadSanitizer's clock overflows past ~50,000 streams
		n = 5_000
	}
	synctest.Test(t, func(t *testing.T) {
		link := emu.LinkConfig{RateBps: 1e9, Delay: 100 * time.Microsecond}
		tb := newTestbedOn(t, 1, nil, false, emu.PathSpec{Up: link, Down: link})
		defer tb.close()
		go func() {
			buf := make([]byte, 1000)
			for {
				st, err := tb.srv.AcceptStream(context.Background())
				if err != nil {
					return
				}
				if _, err := io.ReadFull(st, buf); err != nil {
					t.Errorf("server read: %v", err)
					return
				}
				st.Write(buf)
				st.Close()
				io.Copy(io.Discard, st) // to the client's end
			}
		}()
		req := bytes.Repeat([]byte("q"), 1000)
		reply := make([]byte, 1001)
		heap := func() uint64 {
			synctest.Wait()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		var base uint64
		for i := range n {
			if i == 1000 {
				base = heap()
			}
			st, err := tb.cli.OpenStreamSync(context.Background())
			if err != nil {
				t.Fatalf("stream %d: %v", i, err)
			}
			st.Write(req)
			st.Close()
			k, err := io.ReadFull(st, reply)
			if k != 1000 || err != io.ErrUnexpectedEOF {
				t.Fatalf("stream %d: reply of %d bytes, %v", i, k, err)
			}
		}
		after := heap()
		t.Logf("heap after 1,000 streams %.2f MiB, after %d: %.2f MiB", float64(base)/(1<<20), n, float64(after)/(1<<20))
		if after > base+2<<20 {
			t.Errorf("heap grew from %d to %d bytes over %d streams", base, after, n)
		}
		for name, s := range map[string]*Session{"client": tb.cli, "server": tb.srv} {
			if err := s.Err(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
