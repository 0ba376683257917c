package session

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// Issue 30, what to build, item 4: "The receive side copies once, from the
// QUIC payload into the stream's reassembly buffer, or straight into
// Read's slice." A frame that finds a Read waiting on an empty stream goes
// into that Read's slice and counts as read (nothing held, credit
// accounted); a Read that gave up (its deadline) gives its slice back, and
// a later frame is stored, not written there. RFC 9000 §2.2: "Endpoints
// MUST be able to deliver stream data to an application as an ordered byte
// stream."
func TestFrameStraightIntoWaitingRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		defer tc.close()
		st := acceptGET(tc)

		buf := make([]byte, 100)
		var n int
		var rerr error
		done := make(chan struct{})
		go func() { n, rerr = st.Read(buf); close(done) }()
		synctest.Wait() // the Read waits on an empty stream
		st.rmu.Lock()
		waiting := st.recv.direct != nil
		st.rmu.Unlock()
		if !waiting {
			t.Fatal("the waiting Read did not offer its slice")
		}
		tc.writeFrames(0, dataFrame{ID: 0, Off: 3, Data: "hello"})
		<-done
		if rerr != nil || string(buf[:n]) != "hello" {
			t.Fatalf("the waiting Read returned %q, %v; want hello", buf[:n], rerr)
		}
		tc.s.mu.Lock()
		st.rmu.Lock()
		held, read, direct := tc.s.rcv.buffered, st.recv.buf.read, st.recv.direct
		blocks := len(st.recv.buf.blocks)
		st.rmu.Unlock()
		tc.s.mu.Unlock()
		if held != 0 || read != 8 || direct != nil || blocks != 0 {
			t.Errorf("after the direct read: %d bytes held, read offset %d, slice offered %v, %d blocks; want 0, 8, none, 0", held, read, direct != nil, blocks)
		}

		st.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		given := make([]byte, 100)
		if _, err := st.Read(given); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read with a deadline: %v, want os.ErrDeadlineExceeded", err)
		}
		st.SetReadDeadline(time.Time{})
		tc.writeFrames(0, dataFrame{ID: 0, Off: 8, Data: "world"})
		tc.advance(time.Second) // it arrives, with no Read waiting
		tc.s.mu.Lock()
		held = tc.s.rcv.buffered
		tc.s.mu.Unlock()
		if held != 5 {
			t.Errorf("%d bytes held after a frame arrived with no Read waiting, want 5", held)
		}
		if !bytes.Equal(given, make([]byte, 100)) {
			t.Errorf("a frame wrote %q into the slice of a Read that had returned", bytes.Trim(given, "\x00"))
		}
		if got := tc.readAll(st, 5); string(got) != "world" {
			t.Errorf("the next Read returned %q, want world", got)
		}
	})
}
