package session

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Malformed frames from a peer end the session with a protocol error; they
// never panic it. RFC 9000 §12.4: "An endpoint MUST treat the receipt of a
// frame of unknown type as a connection error of type
// FRAME_ENCODING_ERROR", and §4.1: "A receiver MUST close the connection
// with an error of type FLOW_CONTROL_ERROR if the sender violates the
// advertised connection or stream data limits"; the session's code for it
// is codeFlowControl, for every other connection error codeProtocol, and
// the peer sees it in the close of its path.
// (Moved from join_test.go's rawPeer onto the harness.)
func TestMalformedPeerFrames(t *testing.T) {
	cases := []struct {
		name string
		send func(tc *testSession)
		code uint64 // 0: codeProtocol
	}{
		{"garbage on the data stream", func(tc *testSession) {
			tc.writeRaw(0, []byte{0x7f, 1, 2, 3})
		}, 0},
		{"oversized segment", func(tc *testSession) {
			tc.writeRaw(0, wire.AppendSegmentHeader(nil, 0, 0, wire.MaxSegmentPayload+1))
		}, 0},
		// RFC 9000 §4.5: "The receiver MUST use the final size of the
		// stream to account for all bytes sent on the stream in its
		// connection-level flow controller." Nine resets, each at its
		// stream's limit, take the connection past its window.
		{"final sizes beyond the connection window", func(tc *testSession) {
			var p []byte
			for k := range uint64(DefaultRecvWindow/DefaultStreamWindow + 1) {
				p = wire.AppendResetStream(p, 4*k, 0, DefaultStreamWindow)
			}
			tc.writeFrames(0, rawSegment{Seq: 0, Offset: 0, Payload: p})
		}, uint64(codeFlowControl)},
		{"bad frame in order", func(tc *testSession) {
			tc.writeFrames(0, rawSegment{Seq: 0, Offset: 0, Payload: []byte{0x3f, 0, 0}}) // no frame has type 0x3f
		}, 0},
		{"ack for unsent data", func(tc *testSession) {
			tc.writeFrames(0, ackFrame{Cum: 1000})
		}, 0},
		{"truncated ack", func(tc *testSession) {
			tc.sendRawDatagram(0, []byte{wire.TypeAck, 0x40})
		}, 0},
		{"unknown datagram", func(tc *testSession) {
			tc.sendRawDatagram(0, []byte{0x66})
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestSession(t, nil)
				c.send(tc)
				code := c.code
				if code == 0 {
					code = uint64(codeProtocol)
				}
				tc.wantClose("the peer learns why: its path is closed with the connection error's code", 0, code)
				if err := tc.s.Err(); !errors.Is(err, ErrProtocol) {
					t.Errorf("session error = %v, want ErrProtocol", err)
				}
				tc.wantIdle("nothing after the close")
			})
		})
	}
}
