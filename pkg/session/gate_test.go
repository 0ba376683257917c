package session

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Concurrent Reads on one stream, against a model: RFC 9000 §2.2,
// "Endpoints MUST be able to deliver stream data to an application as an
// ordered byte stream", and Stream's doc, "concurrent Reads (or Writes) are
// served one at a time". Three goroutines Read one stream with buffers of
// random sizes while its frames arrive out of order and another goroutine
// sets and clears the read deadline; the stream's bytes are 4-byte
// counters, so each Read's bytes say where they came from. Together the
// Reads must return every counter exactly once, each Read a run of
// consecutive ones: nothing lost, repeated or torn, whether the bytes went
// through the reassembly buffer or straight into a waiting Read's slice
// (readgate.go). And what the session sends back: RFC 9000 §4.1's credit,
// "returned as the application reads", counts each byte read once,
// whichever way it went, so the largest MAX_DATA and MAX_STREAM_DATA it
// announced are at most the window plus the bytes read, and at least the
// window plus the part that crossed a quarter of it (quic-go's
// threshold). Seeded, so an interleaving that fails can be replayed.
func TestConcurrentReadsPartitionStream(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		synctest.Test(t, func(t *testing.T) { concurrentReads(t, seed) })
	}
}

func concurrentReads(t *testing.T, seed uint64) {
	const (
		words      = 6000 // 24,000 bytes: inside the stream window
		recvWindow = InitialWindow
		window     = 32 << 10 // the stream's, fixed (MaxStreamWindow)
	)
	rng := rand.New(rand.NewPCG(seed, 0))
	tc := newTestSession(t, &Config{RecvWindow: recvWindow, StreamWindow: window, MaxStreamWindow: window})
	defer tc.close()

	var frames []dataFrame
	for w := 0; w < words; {
		n := min(words-w, 1+rng.IntN(200))
		b := make([]byte, 4*n)
		for i := range n {
			binary.BigEndian.PutUint32(b[4*i:], uint32(w+i))
		}
		frames = append(frames, dataFrame{ID: 0, Off: uint64(4 * w), Data: string(b)})
		w += n
	}
	var segs []rawSegment
	for _, f := range frames {
		segs = append(segs, tc.cut(f)...)
	}
	// Out of order within windows of 4 segments: gaps open and close.
	for i := 0; i < len(segs); i += 4 {
		w := segs[i:min(i+4, len(segs))]
		rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
	}

	tc.writeFrames(0, segs[0])
	st, err := tc.s.AcceptStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		chunks [][]byte // every Read's bytes
		wg     sync.WaitGroup
		done   = make(chan struct{})
	)
	for r := range 3 {
		size := 4 * (1 + rng.IntN(300))
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, size)
			for {
				n, err := st.Read(buf)
				if n%4 != 0 {
					t.Errorf("reader %d: a Read returned %d bytes, not whole counters", r, n)
				}
				if n > 0 {
					mu.Lock()
					chunks = append(chunks, slices.Clone(buf[:n]))
					mu.Unlock()
				}
				switch {
				case err == io.EOF:
					return
				case errors.Is(err, os.ErrDeadlineExceeded):
					time.Sleep(time.Millisecond) // until the deadline is cleared
				case err != nil:
					t.Errorf("reader %d: %v", r, err)
					return
				}
			}
		}()
	}
	var dl sync.WaitGroup
	dl.Add(1)
	drng := rand.New(rand.NewPCG(seed, 1))
	go func() { // the deadline, set and cleared while the Reads wait
		defer dl.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(1+drng.IntN(3)) * time.Millisecond):
			}
			st.SetReadDeadline(time.Now().Add(time.Duration(drng.IntN(2)) * time.Millisecond))
			time.Sleep(2 * time.Millisecond)
			st.SetReadDeadline(time.Time{})
		}
	}()
	for _, seg := range segs[1:] {
		tc.writeFrames(0, seg)
		if rng.IntN(3) == 0 {
			tc.advance(time.Duration(rng.IntN(1500)) * time.Microsecond)
		}
	}
	tc.writeFrames(0, finFrame{ID: 0})
	wg.Wait()
	close(done)
	dl.Wait()

	// The model: the chunks, each a run of consecutive counters, tile
	// 0..words-1 once.
	slices.SortFunc(chunks, func(a, b []byte) int {
		return int(binary.BigEndian.Uint32(a)) - int(binary.BigEndian.Uint32(b))
	})
	next := uint32(0)
	for _, c := range chunks {
		for i := 0; i+4 <= len(c); i += 4 {
			if got := binary.BigEndian.Uint32(c[i:]); got != next {
				t.Fatalf("seed %d: counter %d where %d was due (a Read of %d bytes)", seed, got, next, len(c))
			}
			next++
		}
	}
	if next != words {
		t.Fatalf("seed %d: the Reads returned %d counters, want %d", seed, next, words)
	}

	tc.advance(50 * time.Millisecond)
	var maxData, maxStream uint64
	for _, f := range tc.drain(0) {
		switch f := f.(type) {
		case ackFrame:
			maxData = max(maxData, f.MaxData)
		case connMaxDataFrame:
			maxData = max(maxData, f.Max)
		case maxDataFrame:
			if f.ID == 0 {
				maxStream = max(maxStream, f.Limit)
			}
		}
	}
	const read = 4 * words
	if maxData < recvWindow+recvWindow/4 || maxData > recvWindow+read {
		t.Errorf("seed %d: the largest MAX_DATA sent is %d, want %d to %d (the window, plus what was read past a quarter of it, at most all %d bytes)", seed, maxData, recvWindow+recvWindow/4, recvWindow+read, read)
	}
	if maxStream < window+window/4 || maxStream > window+read {
		t.Errorf("seed %d: the largest MAX_STREAM_DATA sent is %d, want %d to %d", seed, maxStream, window+window/4, window+read)
	}
}

// A waiting Read woken by something else (here its deadline) that a frame
// fills before it takes Session.mu again returns the frame's bytes: the
// frame read them, credited them and gave the slice back, so a Read that
// returned the deadline's error instead would lose them. RFC 9000 §2.2:
// "Endpoints MUST be able to deliver stream data to an application as an
// ordered byte stream." What it sends shows the frame's bytes were read
// once: §4.1's credit is "returned as the application reads", and with a
// stream window of one segment (1,216 bytes) the 304th byte read, a
// quarter, sends one MAX_STREAM_DATA of 304 + 1,216.
func TestReadFilledAfterItWoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = DefaultSegmentSize
		tc := newTestSession(t, &Config{StreamWindow: window, MaxStreamWindow: window})
		defer tc.close()
		st := acceptGET(tc)
		hello := "hello" + strings.Repeat("!", window/4-8) // to byte 304 of the stream
		filled := false
		readWoke = func(w *Stream) {
			if w != st || filled {
				return
			}
			filled = true
			s := w.s
			s.mu.Lock()
			defer s.mu.Unlock()
			if err := (*frameSink)(s).StreamFrame(0, 3, []byte(hello), false); err != nil {
				t.Errorf("the frame: %v", err)
			}
		}
		defer func() { readWoke = nil }()
		st.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		buf := make([]byte, 1000)
		n, err := st.Read(buf)
		if !filled {
			t.Fatal("the Read never woke without its slice filled")
		}
		if err != nil || string(buf[:n]) != hello {
			t.Fatalf("Read returned %q, %v; want %q, nil", buf[:n], err, hello)
		}
		st.rmu.Lock()
		direct, read := st.recv.direct, st.recv.buf.read
		st.rmu.Unlock()
		if direct != nil || read != window/4 || st.rgate.filled.Load() != 0 {
			t.Errorf("after the Read: slice offered %v, read offset %d, %d bytes filled; want none, %d, 0", direct != nil, read, st.rgate.filled.Load(), window/4)
		}
		tc.wantRecord("a quarter of the stream's window read: its credit back", 0, maxDataFrame{ID: 0, Limit: window/4 + window})
		for _, f := range tc.collect(time.Second)[0] {
			if _, ok := f.(maxDataFrame); ok {
				t.Errorf("then the session sent %v, want no more credit", f)
			}
		}
	})
}

// Stream's doc: "concurrent Reads (or Writes) are served one at a time",
// as net.Conn's Write and quic-go's SendStream.Write (its writeMutex)
// serve them: each Write's bytes go on the stream together, even when the
// send buffer is smaller than a Write and both wait for room. Two Writes
// of 48 KiB, one of 'a' and one of 'b', into a 16 KiB send buffer; the
// peer, acknowledging as it goes, must see the stream carry one Write's
// bytes and then the other's, each byte once.
func TestHarnessConcurrentWritesNotInterleaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size = 48 << 10
		tc := newTestClient(t, &Config{SendBuffer: 16 << 10})
		defer tc.close()
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, c := range []byte("ab") {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if n, err := st.Write(bytes.Repeat([]byte{c}, size)); n != size || err != nil {
					t.Errorf("Write of %q: %d, %v", c, n, err)
				}
			}()
		}
		got := make([]byte, 2*size)
		seen := 0
		for range 200 {
			data, _ := streamData(tc.collect(20 * time.Millisecond)[0], st.ID())
			for _, d := range data {
				if d.Off+uint64(len(d.Data)) > uint64(len(got)) {
					t.Fatalf("stream data to offset %d, past the %d bytes written", d.Off+uint64(len(d.Data)), len(got))
				}
				seen += copy(got[d.Off:], d.Data)
			}
			tc.ackAll(0)
			if seen >= len(got) {
				break
			}
		}
		wg.Wait()
		if seen != len(got) {
			t.Fatalf("the peer saw %d bytes of stream data, want %d", seen, len(got))
		}
		first, second := got[0], got[size]
		if first == second || !bytes.Equal(got[:size], bytes.Repeat([]byte{first}, size)) || !bytes.Equal(got[size:], bytes.Repeat([]byte{second}, size)) {
			runs := 1
			for i := 1; i < len(got); i++ {
				if got[i] != got[i-1] {
					runs++
				}
			}
			t.Errorf("the stream carries the two Writes' bytes in %d runs, want 2 (one Write, then the other)", runs)
		}
	})
}

// Stream.Write's doc: "A Write that Close or a cancellation interrupts
// returns the bytes it queued (they are sent before the stream's end)",
// and RFC 9000 §4.5: "the final size is the offset plus the length of a
// STREAM frame marked with a FIN flag". The peer grants 4,000 bytes; a
// 64 KiB Write fills the 16 KiB send buffer and waits for room. Close
// wakes it at once, without new credit: it returns what it queued, and
// once the peer grants more the stream carries exactly those bytes, then
// its FIN.
func TestHarnessCloseWakesBlockedWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, st := newCreditBoundStream(t)
		defer tc.close()
		var n int
		var werr error
		done := make(chan struct{})
		go func() { n, werr = st.Write(make([]byte, 64<<10)); close(done) }()
		fs := tc.collect(100 * time.Millisecond)[0]
		if end := streamEnd(fs, st.ID()); end != 4000 {
			t.Fatalf("sent up to %d of the peer's 4,000 bytes", end)
		}
		select {
		case <-done:
			t.Fatalf("the Write returned %d, %v before Close: it should wait for room", n, werr)
		default:
		}
		st.Close()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Close did not wake the blocked Write")
		}
		if werr == nil || n < 4000 || n >= 64<<10 {
			t.Fatalf("the interrupted Write returned %d, %v; want what it queued (4,000 to 64 KiB) and an error", n, werr)
		}
		fs = append(fs, grantAndCollect(tc, st)...)
		data, fins := streamData(fs, st.ID())
		end := streamEnd(fs, st.ID())
		if end != uint64(n) || fins != 1 {
			t.Errorf("the stream carried %d bytes in %d frames and %d FINs; want the %d the Write queued, then one FIN", end, len(data), fins, n)
		}
	})
}

// Two Writes take turns while the first waits for room and the write
// deadline passes: the first returns what it queued, the second, whose
// turn comes after the deadline, returns 0 without queueing a byte, and
// the stream carries only the first Write's bytes. Stream's doc:
// "concurrent Reads (or Writes) are served one at a time"; "SetWriteDeadline
// makes Writes blocked on a full send buffer fail with
// os.ErrDeadlineExceeded".
func TestHarnessWriteDeadlineWithWritesTakingTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, st := newCreditBoundStream(t)
		defer tc.close()
		st.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		type result struct {
			n   int
			err error
		}
		first := make(chan result, 1)
		go func() { n, err := st.Write(bytes.Repeat([]byte{'a'}, 64<<10)); first <- result{n, err} }()
		synctest.Wait()
		second := make(chan result, 1)
		go func() { n, err := st.Write(bytes.Repeat([]byte{'b'}, 1000)); second <- result{n, err} }()
		fs := tc.collect(100 * time.Millisecond)[0]
		a, b := <-first, <-second
		if !errors.Is(a.err, os.ErrDeadlineExceeded) || a.n < 4000 || a.n >= 64<<10 {
			t.Errorf("the first Write returned %d, %v; want what it queued and os.ErrDeadlineExceeded", a.n, a.err)
		}
		if !errors.Is(b.err, os.ErrDeadlineExceeded) || b.n != 0 {
			t.Errorf("the second Write returned %d, %v; want 0 and os.ErrDeadlineExceeded", b.n, b.err)
		}
		st.SetWriteDeadline(time.Time{})
		fs = append(fs, grantAndCollect(tc, st)...)
		data, _ := streamData(fs, st.ID())
		for _, d := range data {
			if strings.Trim(d.Data, "a") != "" {
				t.Fatalf("a frame at offset %d carries a byte of the second Write", d.Off)
			}
		}
		if end := streamEnd(fs, st.ID()); end != uint64(a.n) {
			t.Errorf("the stream carried %d bytes, want the %d the first Write queued", end, a.n)
		}
	})
}

// RFC 9000 §3.5: "If the stream is in the "Recv" or "Size Known" state,
// the transport SHOULD signal this by sending a STOP_SENDING frame", and
// §3.2: data that arrives after is discarded. A Read waits with its slice
// offered (gate.go); CancelRead wakes it with the application's error,
// sends one STOP_SENDING, and a frame that arrives after is not written
// into the slice the Read gave back.
func TestHarnessCancelReadWakesWaitingRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		defer tc.close()
		st := acceptGET(tc)
		tc.wantAck("the data is acknowledged", 0, 1)
		buf := make([]byte, 100)
		var rerr error
		done := make(chan struct{})
		go func() { _, rerr = st.Read(buf); close(done) }()
		synctest.Wait()
		st.CancelRead(7)
		<-done
		var se *StreamError
		if !errors.As(rerr, &se) || se.ErrorCode != 7 || se.Remote {
			t.Fatalf("the waiting Read returned %v, want the local cancel with code 7", rerr)
		}
		tc.wantRecord("CancelRead(7) sends STOP_SENDING(7)", 0, stopFrame{ID: 0, Code: 7})
		tc.writeFrames(0, ackFrame{Cum: 1}, dataFrame{ID: 0, Off: 3, Data: "late"})
		tc.advance(time.Second)
		if !bytes.Equal(buf, make([]byte, 100)) {
			t.Errorf("a frame wrote %q into the slice of the cancelled Read", bytes.Trim(buf, "\x00"))
		}
		for _, f := range tc.drain(0) {
			if _, ok := f.(stopFrame); ok {
				t.Errorf("a second STOP_SENDING: %v", f)
			}
		}
	})
}

// acceptGET has the peer open stream 0 with "GET" and returns the stream,
// the request read.
func acceptGET(tc *testSession) *Stream {
	tc.t.Helper()
	tc.writeFrames(0, dataFrame{ID: 0, Data: "GET"})
	st, err := tc.s.AcceptStream(context.Background())
	if err != nil {
		tc.t.Fatal(err)
	}
	if got := tc.readAll(st, 3); string(got) != "GET" {
		tc.t.Fatalf("read %q, want GET", got)
	}
	return st
}

// newCreditBoundStream opens a stream on a harness client whose peer
// grants each stream 4,000 bytes, with a 16 KiB send buffer: a larger
// Write fills the buffer and waits for room.
func newCreditBoundStream(t *testing.T) (*testSession, *Stream) {
	t.Helper()
	params := peerParams
	params.StreamWindow = 4000
	tc := newTestClientParams(t, &Config{SendBuffer: 16 << 10}, params)
	st, err := tc.s.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	return tc, st
}

// grantAndCollect acknowledges everything, raises st's limit to 1 MiB and
// returns what the session then sends on path 0 within a second.
func grantAndCollect(tc *testSession, st *Stream) []frame {
	tc.t.Helper()
	tc.ackAll(0)
	tc.writeFrames(0, maxDataFrame{ID: st.ID(), Limit: 1 << 20})
	return tc.collect(time.Second)[0]
}
