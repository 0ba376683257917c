package session

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// heapInUse is the live heap after a collection, bytes.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Issue 19, finding 9: "One client session that asks for the same large
// file on 256 streams and never sends a connection-level Ack makes
// mpquic-server hold 305 MiB until the session times out. Stream send
// buffers have no session-wide cap (MaxStreams × SendBuffer)." Must show:
// "Server memory with one session that requests a large file on every
// stream it may open and never acknowledges: target ≤ 32 MiB, whatever
// MaxStreams is."
//
// The scripted peer opens every stream its credit allows, each with a
// request, and never acknowledges; the server application answers each
// with 8 MiB. The streams' send buffers hold at most MaxSendBuffered (4 MiB
// by default) together, and the server's heap grows by less than 32 MiB;
// the Writes wait, and a Write deadline still ends a waiting Write.
func TestSendBuffersCappedPerSession(t *testing.T) {
	for _, maxStreams := range []int{256, 4096} {
		if maxStreams > 256 && testing.Short() {
			continue
		}
		synctest.Test(t, func(t *testing.T) {
			file := make([]byte, 8<<20) // the large file, shared by every answer
			base := heapInUse()
			sp := newScriptedPeer(t, &Config{MaxStreams: maxStreams})
			for i := range uint64(maxStreams) {
				sp.data(streamID(i, true, false), []byte("GET"))
			}
			if err := sp.send(); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			var errs []error
			for {
				st := tryAccept(sp.s)
				if st == nil {
					break
				}
				wg.Go(func() {
					_, err := st.Write(file)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				})
			}
			synctest.Wait()
			sp.sendAll() // what the never-acknowledging peer's window lets out
			synctest.Wait()
			sp.s.mu.Lock()
			queued, limit := sp.s.streams.queued, sp.s.streams.maxQueued
			sp.s.mu.Unlock()
			grew := int64(heapInUse()) - int64(base)
			t.Logf("MaxStreams %d: send buffers hold %.2f MiB (cap %.0f MiB); heap grew %.2f MiB",
				maxStreams, float64(queued)/(1<<20), float64(limit)/(1<<20), float64(grew)/(1<<20))
			if limit != DefaultMaxSendBuffered || queued > limit {
				t.Errorf("send buffers hold %d bytes, cap %d (want %d)", queued, limit, DefaultMaxSendBuffered)
			}
			if queued < limit-uint64(DefaultSendBuffer) {
				t.Errorf("send buffers hold %d bytes: the Writes did not fill the cap of %d", queued, limit)
			}
			if grew > 32<<20 {
				t.Errorf("server heap grew by %d bytes, want ≤ 32 MiB", grew)
			}
			// A Write waiting for the session's room keeps its deadline. It
			// first takes what room is left: the Writes above are woken
			// only once writeWake bytes of their own buffers are free, so
			// up to that much of the cap may be free.
			if st, err := sp.s.OpenStream(); err == nil {
				st.SetWriteDeadline(time.Now().Add(time.Second))
				if n, err := st.Write(file); uint64(n) != limit-queued || !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("Write waiting for room: %d, %v; want %d (the room left), os.ErrDeadlineExceeded", n, err, limit-queued)
				}
			} else {
				t.Error(err)
			}
			sp.close()
			wg.Wait()
			for _, err := range errs {
				if err == nil {
					t.Error("a Write of 8 MiB to a peer that never acknowledges returned nil")
					break
				}
			}
			runtime.KeepAlive(file)
		})
	}
}

// Issue 19, What to build 7: "Cap the bytes all of a session's streams may
// buffer for sending, and a server's total across sessions (a Write waits
// for room; the bound is in the doc)." Two sessions share a budget of 96
// KiB, each with a cap of 64 KiB: the first fills its 64 KiB, the second
// gets 32 KiB and waits. The first session's end gives its share back and
// the second's Write completes; a cancelled stream gives its room back too.
func TestListenerSendBudgetShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &Config{SendBuffer: 64 << 10, MaxSendBuffered: 64 << 10}
		b := newSendBudget(96 << 10)
		a, c := newScriptedPeer(t, cfg), newScriptedPeer(t, cfg)
		a.s.streams.budget, c.s.streams.budget = b, b
		sa, _ := a.s.OpenStream()
		if n, err := sa.Write(make([]byte, 64<<10)); n != 64<<10 || err != nil {
			t.Fatalf("first session: Write = %d, %v", n, err)
		}
		sc, _ := c.s.OpenStream()
		done := make(chan int, 1)
		go func() {
			n, _ := sc.Write(make([]byte, 64<<10))
			done <- n
		}()
		synctest.Wait()
		select {
		case n := <-done:
			t.Fatalf("second session wrote %d bytes past the shared budget", n)
		default:
		}
		if got := b.used.Load(); got != 96<<10 {
			t.Errorf("budget used %d bytes, want %d", got, 96<<10)
		}
		a.close() // the first session ends: its 64 KiB come back
		synctest.Wait()
		select {
		case n := <-done:
			if n != 64<<10 {
				t.Errorf("second session's Write returned %d bytes", n)
			}
		default:
			t.Fatal("the second session's Write still waits after the first session ended")
		}
		if got := b.used.Load(); got != 64<<10 {
			t.Errorf("budget used %d bytes, want %d (the second session's)", got, 64<<10)
		}
		sc.CancelWrite(1)
		if got := b.used.Load(); got != 0 {
			t.Errorf("budget used %d bytes after the last stream was cancelled", got)
		}
		c.close()
	})
}

// Within one session, a Write that waits for the session's room wakes once
// another stream's buffer is framed: the session cap does not stall a
// stream whose peer keeps reading.
func TestSessionSendRoomWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScriptedPeer(t, &Config{SendBuffer: 64 << 10, MaxSendBuffered: 64 << 10})
		defer sp.close()
		first, _ := sp.s.OpenStream()
		first.Write(make([]byte, 64<<10))
		second, _ := sp.s.OpenStream()
		done := make(chan int, 1)
		go func() {
			n, _ := second.Write(make([]byte, 10<<10))
			done <- n
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("a Write went past the session's cap")
		default:
		}
		sp.sentFrames() // frames (and acknowledges) within the windows: the first stream's buffer drains
		synctest.Wait()
		select {
		case n := <-done:
			if n != 10<<10 {
				t.Errorf("Write returned %d", n)
			}
		default:
			t.Fatal("the waiting Write was not woken when the session's buffers drained")
		}
	})
}

// Issue 19, finding 9 (memory): a stream buffer was a byteQueue of 64 KiB
// chunks, so a peer that sends 3 bytes on each of 4,096 streams made the
// session hold 256 MiB for 12 KiB of data. A stream's send buffer
// (sendBuf) holds its bytes in blocks of bufBlock (4 KiB), keeps them until
// they are acknowledged, and holds none once all of them are, or once the
// stream is reset.
func TestSendBufBlocks(t *testing.T) {
	var b sendBuf
	b.write([]byte("GET"))
	if len(b.blocks) != 1 || len(b.blocks[0]) != bufBlock {
		t.Fatalf("3 bytes in %d blocks; want one of %d bytes", len(b.blocks), bufBlock)
	}
	b.write(make([]byte, 100<<10))
	if n, want := len(b.blocks), (3+100<<10+bufBlock-1)/bufBlock; n != want {
		t.Errorf("100 KiB more in %d blocks, want %d", n, want)
	}
	b.ackedRange(0, int(b.end), false)
	if len(b.blocks) != 0 {
		t.Errorf("every byte acknowledged, %d blocks kept", len(b.blocks))
	}
	b.write([]byte("again"))
	if got := string(b.appendTo(nil, b.end-5, 5)); got != "again" || len(b.blocks) != 1 {
		t.Errorf("after it: %q in %d blocks", got, len(b.blocks))
	}
	b.drop(b.end)
	b.ackedRange(b.end-5, 5, false) // an Ack after the reset changes nothing
	if len(b.blocks) != 0 {
		t.Errorf("reset, %d blocks kept", len(b.blocks))
	}
}

// A Listener's sessions share its budget (Config.MaxListenerSendBuffered),
// a Dial's session has none; a 4 MiB transfer on a session whose cap is
// one SendBuffer still completes intact.
func TestListenerBudgetWired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, &Config{SendBuffer: 256 << 10, MaxSendBuffered: 256 << 10, MaxListenerSendBuffered: 512 << 10})
		defer tb.close()
		if tb.srv.streams.budget == nil || tb.srv.streams.budget != tb.ln.budget || tb.ln.budget.limit != 512<<10 {
			t.Fatalf("server session's budget %p, listener's %p", tb.srv.streams.budget, tb.ln.budget)
		}
		if tb.cli.streams.budget != nil {
			t.Error("a dialled session has a listener budget")
		}
		data := make([]byte, 4<<20)
		for i := range data {
			data[i] = byte(i * 7)
		}
		st, _ := tb.srv.OpenStream()
		go func() { st.Write(data); st.Close() }()
		if got := readAll(t, accept(t, tb.cli, 5*time.Second), time.Minute); !bytes.Equal(got, data) {
			t.Errorf("read %d bytes, not the %d written", len(got), len(data))
		}
		if u := tb.ln.budget.used.Load(); u != 0 {
			t.Errorf("listener budget holds %d bytes after the stream drained", u)
		}
	})
}
