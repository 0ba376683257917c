package session

import (
	"context"
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// Issue 19, finding 10 ("stream contexts") and What to build 4
// ("Stream.Context()"): as quic-go's SendStream.Context, a stream's Context
// is done once its send side ended, with the reason as its cause: Close
// (ErrStreamClosed), CancelWrite (the local *StreamError), the peer's
// CancelRead (RFC 9000 §3.5: STOP_SENDING; a remote *StreamError), or the
// end of the session; and each end of a send side is what the peer
// receives: FIN, RESET_STREAM, the reset that answers STOP_SENDING, the
// close. (On the harness.)
func TestStreamContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		open := func() *Stream {
			st, err := tc.s.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		wantDone := func(name string, ctx context.Context, check func(error) bool) {
			t.Helper()
			select {
			case <-ctx.Done():
				if c := context.Cause(ctx); !check(c) {
					t.Errorf("%s: cause %v", name, c)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("%s: the context is not done", name)
			}
		}
		var se *StreamError

		closed := open()
		ctx := closed.Context()
		if ctx.Err() != nil {
			t.Fatal("an open stream's context is done")
		}
		closed.Close()
		wantDone("Close", ctx, func(c error) bool { return errors.Is(c, ErrStreamClosed) })
		tc.wantRecord("Close: the FIN", 0, finFrame{ID: closed.ID()})

		cancelled := open()
		ctx = cancelled.Context()
		cancelled.CancelWrite(5)
		wantDone("CancelWrite", ctx, func(c error) bool { return errors.As(c, &se) && se.ErrorCode == 5 && !se.Remote })
		tc.wantRecord("CancelWrite: RESET_STREAM 5", 0, resetFrame{ID: cancelled.ID(), Code: 5})

		stopped := open()
		stopped.Write([]byte("x"))
		ctx = stopped.Context()
		tc.wantRecord("the data", 0, dataFrame{ID: stopped.ID(), Data: "x"})
		tc.writeFrames(0, stopFrame{ID: stopped.ID(), Code: 6}) // the peer's CancelRead
		wantDone("the peer's CancelRead", ctx, func(c error) bool { return errors.As(c, &se) && se.ErrorCode == 6 && se.Remote })
		tc.wantRecord("the peer's STOP_SENDING is answered", 0, resetFrame{ID: stopped.ID(), Code: 6})

		// Made after the end: done at once, same cause.
		if c := context.Cause(closed.Context()); !errors.Is(c, ErrStreamClosed) {
			t.Errorf("Context after Close: cause %v", c)
		}

		open1, open2 := open(), open()
		ctx = open1.Context()
		tc.s.CloseWithError(0, "")
		wantDone("session end", ctx, func(c error) bool { return c != nil })
		if open2.Context().Err() == nil {
			t.Error("a stream's Context made after the session ended is not done")
		}
		tc.wantClose("the session's close, after the Ack of the peer's STOP_SENDING", 0, uint64(codeApplication))
	})
}

// Issue 19, finding 10: "LocalAddr/RemoteAddr on a stream (a net.Conn)".
// A Stream is a net.Conn whose addresses are the session's first path's,
// and its deadlines behave as net.Conn's: os.ErrDeadlineExceeded, which is
// a net.Error with Timeout() true. (On the harness.)
func TestStreamNetConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		var c net.Conn = st
		if c.LocalAddr() == nil || c.LocalAddr().String() != tc.s.LocalAddr().String() {
			t.Errorf("LocalAddr %v, session's %v", c.LocalAddr(), tc.s.LocalAddr())
		}
		if c.RemoteAddr() == nil || c.RemoteAddr().String() != tc.topo.Server.LocalAddr().String() {
			t.Errorf("RemoteAddr %v, want the server's %v", c.RemoteAddr(), tc.topo.Server.LocalAddr())
		}
		c.SetDeadline(time.Now().Add(100 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("Read past the deadline: %v, want a net.Error that timed out", err)
		}
		// A deadline is local: the stream is not cancelled, and the peer
		// hears nothing of it.
		tc.wantIdle("a read deadline sends nothing")
	})
}
