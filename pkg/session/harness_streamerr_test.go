package session

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// A peer that breaks a stream rule of RFC 9000 gets its connection closed:
// what the session sends is the close, with its error code (the session's
// one code for STREAM_STATE_ERROR, FINAL_SIZE_ERROR and STREAM_LIMIT_ERROR
// is codeProtocol; for FLOW_CONTROL_ERROR, codeFlowControl).

// wantProtocolClose asserts that the session closes path 0 with
// codeProtocol and ends with ErrProtocol, and then sends nothing.
func wantProtocolClose(tc *testSession, expectation string) {
	tc.t.Helper()
	tc.wantClose(expectation, 0, uint64(codeProtocol))
	if err := tc.s.Err(); !errors.Is(err, ErrProtocol) {
		tc.t.Errorf("session error %v, want ErrProtocol", err)
	}
	tc.wantIdle("nothing after the close")
}

// RFC 9000 §19.8: "An endpoint MUST terminate the connection with error
// STREAM_STATE_ERROR if it receives a STREAM frame for a locally initiated
// stream that has not yet been created, or for a send-only stream." The
// session is the server: stream 1 is its own first bidirectional stream,
// not opened yet; 7 its second unidirectional one, not opened either. (A
// send-only stream: stream_uni_test.go's TestUniStreamWrongDirection.)
func TestHarnessStreamFrameForLocalStream(t *testing.T) {
	for _, c := range []struct {
		name string
		open bool // the session opens its uni stream 3 first
		id   uint64
	}{
		{"bidi not yet created", false, 1},
		{"uni not yet created", true, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestSession(t, nil)
				if c.open {
					ss, err := tc.s.OpenUniStream()
					if err != nil || ss.ID() != 3 {
						t.Fatalf("OpenUniStream = %v, %v; want stream 3", ss, err)
					}
					ss.Write([]byte("out"))
					tc.wantRecord("the session's uni stream", 0, dataFrame{ID: 3, Data: "out"})
				}
				tc.writeFrames(0, dataFrame{ID: c.id, Data: "in"})
				wantProtocolClose(tc, "a STREAM frame for stream "+c.name)
			})
		})
	}
}

// RFC 9000 §19.5: "Receiving a STOP_SENDING frame for a locally initiated
// stream that has not yet been created MUST be treated as a connection
// error of type STREAM_STATE_ERROR."
func TestHarnessStopSendingForUncreatedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, stopFrame{ID: 1, Code: 1}) // the server's first bidi stream, not opened
		wantProtocolClose(tc, "STOP_SENDING for a stream the session has not opened")
	})
}

// RFC 9000 §4.5: "Once a final size for a stream is known, it cannot
// change. If a RESET_STREAM or STREAM frame is received indicating a change
// in the final size for the stream, an endpoint SHOULD respond with an
// error of type FINAL_SIZE_ERROR". The peer ends stream 0 at 5 bytes, then
// sends a byte past that end.
func TestHarnessDataBeyondFinalSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "hello"}, finFrame{ID: 0})
		if _, err := tc.s.AcceptStream(context.Background()); err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the stream is acknowledged", 0, 1)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "!"}) // at offset 5
		wantProtocolClose(tc, "data past the final size")
	})
}

// RFC 9000 §4.5, as above, for RESET_STREAM: a reset whose final size is
// below the bytes already received changes the final size.
func TestHarnessResetBelowReceivedData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "hello"})
		if _, err := tc.s.AcceptStream(context.Background()); err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the data is acknowledged", 0, 1)
		tc.mu.Lock()
		tc.codec.(*wireV4).sent[0] = 2 // the reset's final size: 2 of the 5 bytes sent
		tc.mu.Unlock()
		tc.writeFrames(0, resetFrame{ID: 0, Code: 1})
		wantProtocolClose(tc, "a reset with a final size below the data received")
	})
}

// RFC 9000 §4.6: "Endpoints MUST NOT exceed the limit set by their peer. An
// endpoint that receives a frame with a stream ID exceeding the limit it
// has sent MUST treat this as a connection error of type
// STREAM_LIMIT_ERROR". With MaxStreams 2, the peer's third bidirectional
// stream (ID 8) closes the connection.
func TestHarnessPeerExceedsStreamLimit(t *testing.T) {
	for _, uni := range []bool{false, true} {
		name := "bidi"
		if uni {
			name = "uni"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestSession(t, &Config{MaxStreams: 2, MaxUniStreams: 2})
				base := uint64(0)
				if uni {
					base = 2
				}
				tc.writeFrames(0, dataFrame{ID: base, Data: "a"}, dataFrame{ID: base + 4, Data: "b"})
				tc.wantAck("two streams within the limit", 0, 1)
				tc.writeFrames(0, dataFrame{ID: base + 8, Data: "c"})
				wantProtocolClose(tc, "a third stream beyond a limit of 2")
			})
		})
	}
}

// RFC 9000 §3.5: "STOP_SENDING SHOULD only be sent for a stream that has
// not been reset by the peer." The peer resets its stream; the
// application's CancelRead then sends nothing.
func TestHarnessNoStopSendingAfterPeerReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "part"}, resetFrame{ID: 0, Code: 8})
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the peer's segment is acknowledged", 0, 1)
		var se *StreamError
		if _, err := io.ReadAll(st); !errors.As(err, &se) || se.ErrorCode != 8 {
			t.Errorf("Read: %v, want the peer's reset (code 8)", err)
		}
		st.CancelRead(2)
		tc.wantIdle("no STOP_SENDING for a stream the peer reset")
	})
}

// RFC 9000 §3.5: "If the stream is in the "Recv" or "Size Known" state,
// the transport SHOULD signal this by sending a STOP_SENDING frame to
// prompt closure of the stream in the opposite direction." Not once every
// byte and the FIN have been read ("Data Read"): a CancelRead then sends
// nothing.
func TestHarnessNoStopSendingAfterDataRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "whole"}, finFrame{ID: 0})
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(st); err != nil || string(b) != "whole" {
			t.Fatalf("read %q, %v", b, err)
		}
		tc.wantAck("the peer's segment is acknowledged", 0, 1)
		st.CancelRead(2)
		tc.wantIdle("no STOP_SENDING once everything was read")
	})
}

// RFC 9000 §3.5: "If the stream is in the "Recv" or "Size Known" state,
// the transport SHOULD signal this by sending a STOP_SENDING frame to
// prompt closure of the stream in the opposite direction." §3.2: "Receiving
// a STREAM frame with the FIN bit transitions the receiving part of the
// stream to the "Size Known" state", and "Once all data for the stream has
// been received, the receiving part enters the "Data Recvd" state". Here
// the FIN arrives while the stream's first bytes are still missing ("Size
// Known"): CancelRead sends STOP_SENDING. (Until 29 Nov this test was
// skipped, written for a FIN that came with all the data, which is "Data
// Recvd": TestHarnessNoStopSendingInDataRecvd.)
func TestHarnessStopSendingInSizeKnown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		segs := cancelInSizeKnown(tc, 0, 2, func() (interface{ CancelRead(uint64) }, error) {
			return tc.s.AcceptStream(context.Background())
		})
		tc.writeFrames(0, segs[0], resetFrame{ID: 0, Code: 2}) // the missing bytes, late, and the answer to STOP_SENDING
		tc.wantAck("the late segment and the reset's are acknowledged", 0, 4)
		tc.ackAll(0)
		tc.wantIdle("one STOP_SENDING; the late bytes and the reset change nothing")
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})
}

// The same on the peer's unidirectional stream, whose sending part at this
// end does not exist: CancelRead leaves the stream with both parts done, so
// the session forgets it at once, and the STOP_SENDING still goes out.
func TestHarnessStopSendingInSizeKnownUni(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		segs := cancelInSizeKnown(tc, 2, 3, func() (interface{ CancelRead(uint64) }, error) {
			return tc.s.AcceptUniStream(context.Background())
		})
		tc.writeFrames(0, segs[0])
		tc.wantAck("the late segment is acknowledged", 0, 3)
		tc.ackAll(0)
		tc.wantIdle("one STOP_SENDING")
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})
}

// cancelInSizeKnown brings the peer's stream id to "Size Known": of its
// three segments (its first bytes, its last, its FIN), the first is
// withheld. It then takes the stream with accept, cancels its reading with
// code, checks the one STOP_SENDING, and returns the segments, so that
// the test can send the withheld one late.
func cancelInSizeKnown(tc *testSession, id, code uint64, accept func() (interface{ CancelRead(uint64) }, error)) []rawSegment {
	tc.t.Helper()
	segs := tc.cut(dataFrame{ID: id, Data: "missing "}, dataFrame{ID: id, Data: "unread"}, finFrame{ID: id})
	tc.writeFrames(0, segs[1], segs[2]) // the first segment is lost
	if a, _ := wantFrameType[ackFrame](tc, "the segments after the gap are acknowledged", 0); a.Cum != 0 {
		tc.t.Fatalf("got %v, want cum 0 (segment 0 missing)", a)
	}
	st, err := accept()
	if err != nil {
		tc.t.Fatal(err)
	}
	st.CancelRead(code)
	tc.wantRecord("Size Known: CancelRead sends STOP_SENDING", 0, stopFrame{ID: id, Code: code})
	return segs
}

// RFC 9000 §3.2, as above: the FIN arrives with all the data, unread:
// "Data Recvd". §3.5 asks for STOP_SENDING only in "Recv" and "Size
// Known", and every byte has arrived, so CancelRead sends nothing.
func TestHarnessNoStopSendingInDataRecvd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "unread"}, finFrame{ID: 0})
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the peer's segment is acknowledged", 0, 1)
		st.CancelRead(2)
		tc.wantIdle("Data Recvd: no STOP_SENDING")
	})
}

// RFC 9000 §3.5, as above, once: a second CancelRead sends nothing more
// (as quic-go's and x/net/quic's streams, whose first cancellation wins).
func TestHarnessCancelReadTwiceOneStopSending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "more to come"})
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the peer's segment is acknowledged", 0, 1)
		st.CancelRead(2)
		tc.wantRecord("the first CancelRead's STOP_SENDING", 0, stopFrame{ID: 0, Code: 2})
		st.CancelRead(3)
		tc.ackAll(0)
		tc.wantIdle("one STOP_SENDING for two CancelReads")
	})
}

// RFC 9000 §3.5: "An endpoint that receives a STOP_SENDING frame MUST send
// a RESET_STREAM frame if the stream is in the "Ready" or "Send" state."
// and "An endpoint SHOULD copy the error code from the STOP_SENDING frame
// to the RESET_STREAM frame it sends", for the session's own
// unidirectional stream.
func TestHarnessStopSendingOnUniStreamAnsweredWithReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		ss, err := tc.s.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		ss.Write([]byte("pushed"))
		tc.wantRecord("the uni stream's data", 0, dataFrame{ID: ss.ID(), Data: "pushed"})
		tc.ackAll(0)
		tc.writeFrames(0, stopFrame{ID: ss.ID(), Code: 11})
		tc.wantRecord("STOP_SENDING(11) is answered by RESET_STREAM(11)", 0, resetFrame{ID: ss.ID(), Code: 11})
		tc.ackAll(0)
		for _, f := range without(tc.collect(100 * time.Millisecond)[0]) {
			t.Errorf("after the reset: %v", f)
		}
		tc.wantIdle("one reset")
	})
}

// RFC 9000 §3.5, as above: once the RESET_STREAM went out the stream is in
// "Reset Sent", and a second STOP_SENDING (the peer's copy, or a late one)
// draws no second reset.
func TestHarnessSecondStopSendingNoSecondReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write([]byte("more to come"))
		tc.wantRecord("the data", 0, dataFrame{ID: st.ID(), Data: "more to come"})
		tc.ackAll(0)
		tc.writeFrames(0, stopFrame{ID: st.ID(), Code: 9})
		tc.wantRecord("the first STOP_SENDING's reset", 0, resetFrame{ID: st.ID(), Code: 9})
		tc.ackAll(0)
		tc.writeFrames(0, stopFrame{ID: st.ID(), Code: 9})
		for _, f := range without(tc.collect(100 * time.Millisecond)[0]) {
			t.Errorf("after a second STOP_SENDING: %v", f)
		}
		tc.wantIdle("one reset")
	})
}
