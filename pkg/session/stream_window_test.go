package session

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Issue 19, finding 8: "With RecvWindow: 64 KiB, a stream nobody reads
// takes the whole connection window, and a second stream is never
// accepted: a stream's window may equal the connection's." What to build
// 6: "A stream's window stays below the connection window, as quic-go's
// connection window is 1.5× its stream window, so one unread stream never
// blocks another."
//
// At the smallest window allowed, a stream written far beyond its window and
// never read leaves room for a second stream, which the server accepts and
// reads to its end. (On the harness: the peer writes as far as the windows
// the session announces let it; see unreadBeside.)
func TestUnreadStreamSmallestWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unreadBeside(t, &Config{RecvWindow: InitialWindow}, 1, 256<<10) // 256 KiB: 4 connection windows
	})
}

// The rule behind it, at every window size: the largest stream window is at
// most two thirds of RecvWindow (the default), and a larger one is refused.
// Then one unread stream holds at most 2/3 of the connection window, and at
// least RecvWindow/3 − ctrlReserve ≥ 17 KiB stay for the others.
func TestStreamWindowBelowConnectionWindow(t *testing.T) {
	for _, recv := range []int{InitialWindow, InitialWindow + 1, 1 << 20, DefaultRecvWindow, maxRecvWindow} {
		c, err := (&Config{RecvWindow: recv}).withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if 3*c.MaxStreamWindow > 2*c.RecvWindow || c.StreamWindow > c.MaxStreamWindow {
			t.Errorf("RecvWindow %d: MaxStreamWindow %d, StreamWindow %d; want ≤ 2/3 of RecvWindow", recv, c.MaxStreamWindow, c.StreamWindow)
		}
		if room := c.RecvWindow - c.MaxStreamWindow - ctrlReserve; room < 16<<10 {
			t.Errorf("RecvWindow %d: one unread stream leaves %d bytes to the others", recv, room)
		}
		for _, bad := range []Config{{RecvWindow: recv, MaxStreamWindow: recv}, {RecvWindow: recv, StreamWindow: recv}} {
			if _, err := bad.withDefaults(); err == nil || !strings.Contains(err.Error(), "StreamWindow") {
				t.Errorf("RecvWindow %d, MaxStreamWindow %d, StreamWindow %d accepted (err %v), want an error naming the field",
					bad.RecvWindow, bad.MaxStreamWindow, bad.StreamWindow, err)
			}
		}
	}
	if c, _ := (&Config{}).withDefaults(); c.StreamWindow != DefaultStreamWindow {
		t.Errorf("default StreamWindow %d, want %d", c.StreamWindow, DefaultStreamWindow)
	}
}

// Issue 19, finding 8: "With the defaults, 8 unread streams of 512 KiB fill
// the window." What the docs now say holds: streams that are never read
// keep their initial window (StreamWindow), so fewer than RecvWindow /
// StreamWindow of them (7 with the defaults) leave room for others. Seven
// never-read streams, each sent its whole window, and an eighth moves 2
// MiB. (On the harness; see unreadBeside.)
func TestSevenUnreadStreamsDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unreadBeside(t, nil, 7, 2<<20)
	})
}

// Issue 19, finding 8: the docs said a cancelled stream's received data
// "stays delivered, which a reset contradicts". RFC 9000 §3.2: "Receiving a
// RESET_STREAM frame in the 'Recv' or 'Size Known' state causes the stream
// to enter the 'Reset Recvd' state. This might cause the delivery of stream
// data to the application to be interrupted." What CancelWrite's doc now
// says: what the peer's application read stays read; what it received and
// had not read is discarded, and its Read fails with the code. (On the
// harness: the session under test is the reader.)
func TestResetDiscardsUnreadData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "read"})
		peer := accept(t, tc.s, time.Second)
		buf := make([]byte, 16)
		if n, err := peer.Read(buf); err != nil || string(buf[:n]) != "read" {
			t.Fatalf("first Read = %q, %v", buf[:n], err)
		}
		tc.writeFrames(0, dataFrame{ID: 0, Data: "unread"})
		tc.advance(100 * time.Millisecond) // arrives, not read
		peer.rmu.Lock()
		buffered := int(peer.recv.buf.held())
		peer.rmu.Unlock()
		if buffered != len("unread") {
			t.Fatalf("server holds %d unread bytes, want %d", buffered, len("unread"))
		}
		tc.drain(0) // the Acks
		tc.writeFrames(0, resetFrame{ID: 0, Code: 9})
		tc.wantAck("the reset is acknowledged", 0, 3)
		n, err := peer.Read(buf)
		var se *StreamError
		if n != 0 || !errors.As(err, &se) || se.ErrorCode != 9 {
			t.Errorf("Read after the reset = %q, %v; want nothing and the code 9", buf[:n], err)
		}
		tc.wantIdle("a reset stream sends nothing back (no STOP_SENDING, RFC 9000 §3.5)")
	})
}
