package session

import (
	"context"
	"errors"
	"net"
)

// ErrStreamClosed is the cause of a stream's Context after Close.
var ErrStreamClosed = errors.New("session: stream closed for writing")

// Context is done once the stream's send side has ended, as quic-go's
// SendStream.Context: its cause (context.Cause) is ErrStreamClosed after
// Close, a *StreamError after CancelWrite or the peer's CancelRead, or the
// session's error once the session ended. Made on the first call; safe for
// concurrent use.
func (st *Stream) Context() context.Context {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.ctx == nil {
		st.ctx, st.ctxCancel = context.WithCancelCause(context.Background())
		cause := st.ctxCause
		if cause == nil && s.closed {
			cause = s.closedErrLocked()
		}
		if cause != nil {
			st.ctxCancel(cause)
		}
	}
	return st.ctx
}

// sendEndedLocked records why st's send side ended and cancels its Context
// (the first cause wins).
func (s *Session) sendEndedLocked(st *Stream, cause error) {
	if st.ctxCause != nil {
		return
	}
	st.ctxCause = cause
	if st.ctxCancel != nil {
		st.ctxCancel(cause)
	}
}

// LocalAddr is the local address of the session's first current path (nil
// once the session has none), so that a Stream is a net.Conn. Safe for
// concurrent use.
func (st *Stream) LocalAddr() net.Addr { return st.s.LocalAddr() }

// RemoteAddr is the peer's address on the session's first current path (nil
// once the session has none). Safe for concurrent use.
func (st *Stream) RemoteAddr() net.Addr { return st.s.RemoteAddr() }

// A Stream is a net.Conn. Unlike a TCP connection's, its Close ends only the
// send side (as quic-go's); CancelRead or CloseRead ends the receive side.
var _ net.Conn = (*Stream)(nil)
