package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Issue 29: "512 KiB + 1 byte on a client unidirectional stream of a
// reserved type is not a flow-control error (RFC 9000 §4.1). The server
// cancels the stream and silently drops the excess." RFC 9000 §4.1: "A
// receiver MUST close the connection with an error of type
// FLOW_CONTROL_ERROR if the sender violates the advertised connection or
// stream data limits". The stream's limit holds after CancelRead: exactly
// the window is accepted and dropped, one byte more is ErrFlowControl (a
// protocol violation, closed with codeFlowControl).
func TestCancelledStreamKeepsFlowControl(t *testing.T) {
	const id = 2 // the client's first unidirectional stream
	for _, extra := range []int{0, 1} {
		t.Run(fmt.Sprintf("window+%d", extra), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestSession(t, nil) // the connection's window (4 MiB) is not what is tested
				tc.writeFrames(0, dataFrame{ID: id, Data: strings.Repeat("a", 100)})
				rs, err := tc.s.AcceptUniStream(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				tc.wantAck("the first 100 bytes", 0, 1)
				rs.CancelRead(0x21) // as pkg/h3 does with a reserved stream type (RFC 9114 §6.2.3)
				tc.wantRecord("CancelRead sends STOP_SENDING", 0, stopFrame{ID: id, Code: 0x21})
				tc.ackAll(0)
				tc.writeFrames(0, dataFrame{ID: id, Data: strings.Repeat("b", DefaultStreamWindow-100+extra)})
				if extra == 0 {
					for _, f := range without(tc.collect(time.Second)[0]) {
						t.Errorf("exactly the stream's window after CancelRead: %v, want only Acks", f)
					}
					if err := tc.s.Err(); err != nil {
						t.Errorf("exactly the stream's window after CancelRead: %v, want no error", err)
					}
					return
				}
				tc.wantClose("one byte past the stream's window after CancelRead", 0, uint64(codeFlowControl))
				if err := tc.s.Err(); !errors.Is(err, ErrFlowControl) || !errors.Is(err, ErrProtocol) {
					t.Errorf("one byte past the stream's window after CancelRead: err %v, want ErrFlowControl", err)
				}
			})
		})
	}
}

// RFC 9000 §3.5: "If the stream is in the 'Recv' or 'Size Known' state, the
// transport SHOULD signal this by sending a STOP_SENDING frame", and the
// receiving part ends when RESET_STREAM (or the FIN) gives its final size.
// Until then the cancelled stream holds its stream credit; the peer's
// RESET_STREAM frees it, and the application keeps its own error.
func TestCancelledStreamFreedByReset(t *testing.T) {
	const id = 2
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: id, Data: "0123456789"})
		st, err := tc.s.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the data", 0, 1)
		st.CancelRead(0x21)
		tc.wantRecord("Recv: CancelRead sends STOP_SENDING", 0, stopFrame{ID: id, Code: 0x21})
		tc.s.mu.Lock()
		_, kept := tc.s.streams.byID[id]
		tc.s.mu.Unlock()
		if !kept {
			t.Fatal("the cancelled stream was forgotten before its final size was known")
		}
		tc.ackAll(0)
		tc.writeFrames(0, resetFrame{ID: id, Code: 0x10c})
		tc.wantAck("the peer's reset", 0, 2)
		tc.s.mu.Lock()
		_, kept = tc.s.streams.byID[id]
		tc.s.mu.Unlock()
		if kept {
			t.Error("the cancelled stream is still kept after the peer's RESET_STREAM")
		}
		var se *StreamError
		if _, err := st.Read(make([]byte, 1)); !errors.As(err, &se) || se.ErrorCode != 0x21 || se.Remote {
			t.Errorf("Read after CancelRead and the peer's reset: %v, want this end's StreamError 0x21", err)
		}
		tc.wantIdle("one STOP_SENDING, nothing for the reset but its Ack")
	})
}
