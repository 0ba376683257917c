package session

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// What the session answers to odd but legal input, and to input past the
// limits RFC 9000 sets on frame values, seen by the scripted peer of
// harness_test.go.

// RFC 9000 §19.11: "If a max_streams transport parameter or a MAX_STREAMS
// frame is received with a value greater than 2^60, this would allow a
// maximum stream ID that cannot be expressed as a variable-length integer;
// see Section 16. If either is received, the connection MUST be closed
// immediately with a connection error of type TRANSPORT_PARAMETER_ERROR if
// the offending value was received in a transport parameter or of type
// FRAME_ENCODING_ERROR if it was received in a frame".
func TestHarnessMaxStreamsAbove2To60Closes(t *testing.T) {
	for _, uni := range []bool{false, true} {
		t.Run(fmt.Sprintf("uni=%v", uni), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestSession(t, nil)
				tc.writeFrames(0, maxStreamsFrame{Uni: uni, Count: 1<<60 + 1})
				wantProtocolClose(tc, "MAX_STREAMS above 2^60")
			})
		})
	}
}

// RFC 9000 §19.8: "The largest offset delivered on a stream -- the sum of
// the offset and data length -- cannot exceed 2^62-1, as it is not
// possible to provide flow control credit for that data. Receipt of a frame
// that exceeds this limit MUST be treated as a connection error of type
// FRAME_ENCODING_ERROR or FLOW_CONTROL_ERROR." A STREAM frame at offset
// 2^62-2 with 6 bytes closes the connection, as a malformed frame
// (codeProtocol: the session's FRAME_ENCODING_ERROR).
func TestHarnessStreamOffsetBeyond2To62Closes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.mu.Lock()
		tc.codec.(*wireV4).sent[0] = 1<<62 - 2
		tc.mu.Unlock()
		tc.writeFrames(0, dataFrame{ID: 0, Data: "toobig"})
		wantProtocolClose(tc, "stream data past 2^62-1")
	})
}

// RFC 9000 §4.5: "A receiver SHOULD treat receipt of data at or beyond the
// final size as an error of type FINAL_SIZE_ERROR, even after a stream is
// closed." and §4.1's FLOW_CONTROL_ERROR: a RESET_STREAM's final size counts
// against the stream's window as data does. A reset whose final size is one
// byte past the stream window closes the connection with codeFlowControl.
func TestHarnessResetFinalSizeBeyondWindowCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 64 << 10
		tc := newTestSession(t, &Config{StreamWindow: window, MaxStreamWindow: window})
		tc.writeFrames(0, dataFrame{ID: 0, Data: "start"})
		if _, err := tc.s.AcceptStream(context.Background()); err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the data", 0, 1)
		tc.mu.Lock()
		tc.codec.(*wireV4).sent[0] = window + 1
		tc.mu.Unlock()
		tc.writeFrames(0, resetFrame{ID: 0, Code: 1})
		tc.wantClose("a final size past the stream's window", 0, uint64(codeFlowControl))
	})
}

// RFC 9000 §2.2: "An endpoint could receive data for a stream at the same
// stream offset multiple times. Data that has already been received can be
// discarded." The same bytes at the same offset, in a second segment, are
// acknowledged and read once; nothing else is sent.
func TestHarnessRepeatedStreamDataDiscarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "once"})
		tc.wantAck("the data", 0, 1)
		tc.mu.Lock()
		tc.codec.(*wireV4).sent[0] = 0 // the same offset again
		tc.mu.Unlock()
		tc.writeFrames(0, dataFrame{ID: 0, Data: "once"}, finFrame{ID: 0})
		tc.wantAck("the repeat and the FIN", 0, 2)
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(st); err != nil || string(b) != "once" {
			t.Errorf("read %q, %v; want the bytes once", b, err)
		}
		tc.wantIdle("no close, nothing more")
	})
}

// RFC 9000 §3.2: "Before a stream is created, all streams of the same type
// with lower-numbered stream IDs MUST be created." The peer's first frame is
// for its third stream (8): streams 0 and 4 exist too, and are accepted
// first, in order; each needs its credit (MAX_STREAMS 3 suffices).
func TestHarnessLowerStreamsOpenedImplicitly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxStreams: 3})
		tc.writeFrames(0, dataFrame{ID: 8, Data: "third"})
		tc.wantAck("stream 8's data", 0, 1)
		for _, id := range []uint64{0, 4, 8} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := tc.s.AcceptStream(ctx)
			cancel()
			if err != nil || st.ID() != id {
				t.Fatalf("AcceptStream = %v, %v; want stream %d", st, err, id)
			}
		}
		tc.writeFrames(0, dataFrame{ID: 12, Data: "fourth"}) // beyond the 3 granted
		wantProtocolClose(tc, "a fourth stream with 3 granted, 2 of them implicitly")
	})
}

// RFC 9000 §13.2.3 (Managing ACK Ranges): "...a receiver limits the
// number of ACK Ranges (Section 19.3.1) it remembers and sends in ACK
// frames, both to limit the size of ACK frames and to avoid resource
// exhaustion." The peer's segments arrive with every other one missing,
// far more gaps than an Ack holds: the session's Acks carry at most
// wire.MaxAckRanges ranges, and the cumulative part stays at the first gap.
func TestHarnessAckRangesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		var fs []frame
		for k := range 2*wire.MaxAckRanges + 20 {
			fs = append(fs, dataFrame{ID: 0, Data: strings.Repeat("g", 10+k%5)})
		}
		segs := tc.cut(fs...)
		for k := 1; k < len(segs); k += 2 {
			tc.writeFrames(0, segs[k]) // 0, 2, 4, ... never arrive
		}
		tc.advance(100 * time.Millisecond)
		var acks int
		for _, f := range tc.drain(0) {
			a, ok := f.(ackFrame)
			if !ok {
				t.Fatalf("got %v, want only Acks", f)
			}
			acks++
			if a.Cum != 0 || len(a.Ranges) == 0 || len(a.Ranges) > wire.MaxAckRanges {
				t.Errorf("Ack %v: want cum 0 and 1 to %d ranges", a, wire.MaxAckRanges)
			}
		}
		if acks == 0 {
			t.Fatal("no Ack")
		}
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})
}

// RFC 9000 §3.2: "For bidirectional streams initiated by a peer, receipt
// of a MAX_STREAM_DATA or STOP_SENDING frame for the sending part of the
// stream also creates the receiving part." and §3.5: "An endpoint that
// receives a STOP_SENDING frame MUST send a RESET_STREAM frame if the
// stream is in the "Ready" or "Send" state." The peer's first frame for its
// stream 0 is STOP_SENDING: the stream exists (the application accepts
// it), and the session resets its sending part with the peer's code.
func TestHarnessStopSendingOpensPeerStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, stopFrame{ID: 0, Code: 4})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := tc.s.AcceptStream(ctx)
		if err != nil || st.ID() != 0 {
			t.Fatalf("AcceptStream = %v, %v; want stream 0, opened by STOP_SENDING", st, err)
		}
		tc.wantRecord("STOP_SENDING(4) in Ready: RESET_STREAM(4)", 0, resetFrame{ID: 0, Code: 4})
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})
}

// RFC 9000 §3.2, as above, for MAX_STREAM_DATA: the peer's first frame for
// its stream 0 raises the session's limit on it; the stream exists, and
// the session may send up to the new limit at once.
func TestHarnessMaxStreamDataOpensPeerStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.StreamWindow = 100
		tc := newTestSessionParams(t, nil, params)
		tc.writeFrames(0, maxDataFrame{ID: 0, Limit: 300})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := tc.s.AcceptStream(ctx)
		if err != nil || st.ID() != 0 {
			t.Fatalf("AcceptStream = %v, %v; want stream 0, opened by MAX_STREAM_DATA", st, err)
		}
		st.Write(make([]byte, 500))
		if end := streamEnd(tc.collect(100 * time.Millisecond)[0], 0); end != 300 {
			t.Errorf("sent up to byte %d of stream 0, want the 300 its MAX_STREAM_DATA allows", end)
		}
	})
}

// RFC 9000 §4.5: "Once a final size for a stream is known, it cannot
// change." The same final size again is no change: a RESET_STREAM whose
// final size is the one the FIN gave closes nothing, and is only
// acknowledged.
func TestHarnessResetAtKnownFinalSizeAccepted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "abc"}, finFrame{ID: 0})
		tc.wantAck("the stream", 0, 1)
		tc.writeFrames(0, resetFrame{ID: 0, Code: 1}) // final size 3
		tc.wantAck("the reset", 0, 2)
		tc.wantIdle("no close")
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})
}
