package session

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The connection's credit on the receiving side (protocol version 5,
// connflow.go), checked on what the session sends: its Acks' MaxData.

// lastAck drains path 0 and returns the last Ack among what the session
// sent, failing on anything else.
func lastAck(tc *testSession) ackFrame {
	tc.t.Helper()
	var last ackFrame
	for _, f := range tc.drain(0) {
		a, ok := f.(ackFrame)
		if !ok {
			tc.t.Fatalf("the session sent %v, want only Acks", f)
		}
		last = a
	}
	return last
}

// RFC 9000 §4.1: connection flow control counts "the sum of the largest
// received offsets on all streams", so a frame sent again in a new segment
// takes no more credit, and control frames take none. The peer sends
// 40,000 bytes of stream 0 twice, in new segments (80,000 on the wire)
// and 2,000 MAX_STREAMS frames, both more than the 64 KiB window; the
// session keeps the connection open, and once the application has read
// the 40,000 bytes its Ack returns exactly those.
func TestHarnessCreditCountsStreamBytesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{RecvWindow: InitialWindow})
		data := strings.Repeat("c", 40000)
		segs := tc.cut(dataFrame{ID: 0, Data: data})
		tc.mu.Lock()
		tc.codec.(*wireV4).sent[0] = 0
		tc.mu.Unlock()
		copies := tc.cut(dataFrame{ID: 0, Data: data}) // the same frames in new segments, as a frame framed again
		for _, g := range append(segs, copies...) {
			tc.writeFrames(0, g)
		}
		var ctl []frame
		for k := range 2000 {
			ctl = append(ctl, maxStreamsFrame{Uni: false, Count: uint64(k)})
		}
		tc.writeFrames(0, ctl...)
		tc.advance(50 * time.Millisecond)
		before := lastAck(tc)
		if before.MaxData != InitialWindow {
			t.Fatalf("before any read: MaxData %d, want the window, %d", before.MaxData, InitialWindow)
		}
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := string(tc.readAll(st, len(data))); got != data {
			t.Fatal("the stream's bytes differ")
		}
		tc.advance(50 * time.Millisecond)
		var a ackFrame
		for _, f := range tc.drain(0) {
			switch f := f.(type) {
			case ackFrame:
				a = f
			case segmentFrame, maxDataFrame: // the stream's own credit (MAX_STREAM_DATA)
			default:
				t.Errorf("the session sent %v", f)
			}
		}
		if a.MaxData != InitialWindow+40000 {
			t.Errorf("after reading 40,000 bytes sent twice: MaxData %d, want %d", a.MaxData, InitialWindow+40000)
		}
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})
}

// RFC 9000 §4.5: "The receiver MUST use the final size of the stream to
// account for all bytes sent on the stream in its connection-level flow
// controller." The peer sends 1,000 bytes of a stream and resets it with
// a final size of 30,000: the 29,000 bytes it never sent count as sent,
// and the reset returns all 30,000 at once, in the Ack that follows. A
// second reset in the same segment as the first, with a final size of
// 40,000, takes the connection past the 65,536 bytes announced (30,000 +
// 40,000): FLOW_CONTROL_ERROR (RFC 9000 §4.1).
func TestHarnessFinalSizeCountsCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{RecvWindow: InitialWindow})
		tc.writeFrames(0, dataFrame{ID: 0, Data: strings.Repeat("f", 1000)})
		tc.advance(50 * time.Millisecond)
		lastAck(tc)
		tc.mu.Lock()
		tc.codec.(*wireV4).sent[0], tc.codec.(*wireV4).sent[4] = 30000, 40000 // the resets' final sizes
		tc.mu.Unlock()
		tc.writeFrames(0, resetFrame{ID: 0, Code: 5}, resetFrame{ID: 4, Code: 5})
		tc.wantClose("final sizes of 70,000 bytes against 65,536", 0, uint64(codeFlowControl))
	})
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{RecvWindow: InitialWindow})
		tc.writeFrames(0, dataFrame{ID: 0, Data: strings.Repeat("f", 1000)})
		tc.advance(50 * time.Millisecond)
		if a := lastAck(tc); a.MaxData != InitialWindow {
			t.Fatalf("before the reset: MaxData %d, want %d", a.MaxData, InitialWindow)
		}
		tc.mu.Lock()
		tc.codec.(*wireV4).sent[0] = 30000 // the reset's final size: what the peer says it sent
		tc.mu.Unlock()
		tc.writeFrames(0, resetFrame{ID: 0, Code: 5})
		a, _ := wantFrameType[ackFrame](tc, "the reset is acknowledged", 0)
		if a.MaxData != InitialWindow+30000 {
			t.Errorf("after a reset with final size 30,000: MaxData %d, want %d", a.MaxData, InitialWindow+30000)
		}
	})
}

// RFC 9000 §4.2: "A receiver MUST NOT wait for a STREAM_DATA_BLOCKED or
// DATA_BLOCKED frame before sending a MAX_STREAM_DATA or MAX_DATA frame;
// doing so could result in the sender being blocked for the rest of the
// connection." Two unread streams hold 40,000 bytes of a 65,536-byte
// window; a third of 20,000 leaves the peer 5,536, less than a quarter.
// Reading a sixteenth of the window (4,096 bytes) from the third sends an
// Ack with that credit at once, where a quarter (16,384) would never come
// from its 20,000 bytes before the peer stalled.
func TestHarnessCreditReturnedEarlyWhenPeerNearlyBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{RecvWindow: InitialWindow, StreamWindow: 32 << 10, MaxStreamWindow: 32 << 10})
		tc.writeFrames(0, dataFrame{ID: 0, Data: strings.Repeat("a", 20000)}, dataFrame{ID: 4, Data: strings.Repeat("b", 20000)}, dataFrame{ID: 8, Data: strings.Repeat("c", 20000)})
		tc.advance(50 * time.Millisecond)
		last := lastAck(tc)
		var third *Stream
		for range 3 {
			st, err := tc.s.AcceptStream(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.ID() == 8 {
				third = st
			}
		}
		tc.readAll(third, 4000)
		tc.wantIdle("4,000 bytes read: less than a sixteenth, no Ack")
		tc.readAll(third, 96) // 4,096: a sixteenth
		tc.wantFrame("a sixteenth read while the peer has less than a quarter left: an Ack returns it", 0, ackFrame{Cum: last.Cum, MaxData: InitialWindow + 4096})
		tc.wantIdle("one Ack")
	})
}
