package session

import (
	"context"
	"time"
)

// SendStream is the sending end of a unidirectional stream this end opened
// (OpenUniStream), shaped like quic-go's SendStream: the peer can only read
// it (AcceptUniStream gives it a ReceiveStream). Its methods behave as the
// Stream methods of the same names; it is safe for concurrent use, with the
// same rules as Stream.
//
// A unidirectional stream has its own stream-count credit (Config.MaxUniStreams
// on the receiving end) and the same flow control as a bidirectional one.
type SendStream Stream

// ReceiveStream is the receiving end of a unidirectional stream the peer
// opened (AcceptUniStream), shaped like quic-go's ReceiveStream. Its methods
// behave as the Stream methods of the same names; it is safe for concurrent
// use, with the same rules as Stream.
type ReceiveStream Stream

// OpenUniStream opens a new unidirectional stream without waiting; the peer
// learns of it with its first record. While the peer's unidirectional stream
// credit is used up it returns ErrStreamLimitReached (OpenUniStreamSync
// waits instead). Safe for concurrent use.
func (s *Session) OpenUniStream() (*SendStream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.streams.openLocked(uni)
	return (*SendStream)(st), err
}

// OpenUniStreamSync opens a new unidirectional stream, waiting for the
// peer's unidirectional stream credit until ctx is done or the session
// ends. Safe for concurrent use.
func (s *Session) OpenUniStreamSync(ctx context.Context) (*SendStream, error) {
	st, err := s.openSync(ctx, uni)
	return (*SendStream)(st), err
}

// AcceptUniStream waits for a unidirectional stream opened by the peer, in
// the order of their IDs, until ctx is done or the session ends (streams
// that arrived before the end are still returned). As with AcceptStream, a
// stream keeps its share of the peer's credit (Config.MaxUniStreams) until it
// was accepted and read to its end or cancelled. Safe for concurrent use.
func (s *Session) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	st, err := s.accept(ctx, uni)
	return (*ReceiveStream)(st), err
}

// ID is the stream's identifier within the session (RFC 9000 §2.1: bit 0x2
// set, bit 0x1 the initiator).
func (ss *SendStream) ID() uint64 { return ss.id }

// Write is Stream.Write.
func (ss *SendStream) Write(p []byte) (int, error) { return (*Stream)(ss).Write(p) }

// Close is Stream.Close: the peer reads io.EOF after every byte written.
func (ss *SendStream) Close() error { return (*Stream)(ss).Close() }

// CancelWrite is Stream.CancelWrite.
func (ss *SendStream) CancelWrite(code uint64) { (*Stream)(ss).CancelWrite(code) }

// SetWriteDeadline is Stream.SetWriteDeadline.
func (ss *SendStream) SetWriteDeadline(t time.Time) error { return (*Stream)(ss).SetWriteDeadline(t) }

// Context is Stream.Context: done once the stream's send side ended.
func (ss *SendStream) Context() context.Context { return (*Stream)(ss).Context() }

// ID is the stream's identifier within the session.
func (rs *ReceiveStream) ID() uint64 { return rs.id }

// Read is Stream.Read.
func (rs *ReceiveStream) Read(p []byte) (int, error) { return (*Stream)(rs).Read(p) }

// CancelRead is Stream.CancelRead.
func (rs *ReceiveStream) CancelRead(code uint64) { (*Stream)(rs).CancelRead(code) }

// SetReadDeadline is Stream.SetReadDeadline.
func (rs *ReceiveStream) SetReadDeadline(t time.Time) error { return (*Stream)(rs).SetReadDeadline(t) }

// canRecv reports whether records of the peer's sending part may name
// stream id: not a unidirectional stream this end opened (RFC 9000 §19.8:
// "An endpoint MUST terminate the connection with error STREAM_STATE_ERROR
// if it receives a STREAM frame for ... a send-only stream"; §19.4 says the
// same of RESET_STREAM).
func (ss *streamSet) canRecv(id uint64) bool { return streamType(id) == bidi || !ss.isLocal(id) }

// canSend reports whether records of the peer's receiving part
// (MAX_STREAM_DATA, STOP_SENDING) may name stream id: not a unidirectional
// stream the peer opened (RFC 9000 §19.10: "An endpoint that receives a
// MAX_STREAM_DATA frame for a receive-only stream MUST terminate the
// connection with error STREAM_STATE_ERROR"; §19.5 says the same of
// STOP_SENDING).
func (ss *streamSet) canSend(id uint64) bool { return streamType(id) == bidi || ss.isLocal(id) }
