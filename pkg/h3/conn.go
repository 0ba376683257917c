package h3

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// Conn is the transport connection HTTP/3 runs on: a QUIC connection or a
// multipath session (RFC 9114 §3). FromSession and FromQUIC adapt the two
// transports of this project. Implementations must be safe for concurrent
// use by many goroutines. Every method that waits takes a context or returns
// at once.
//
// The stream-count credit of the transport (how many request streams a peer
// may have open at once) is this package's bound on concurrent requests:
// OpenStreamSync waits for it, the peer cannot raise it.
type Conn interface {
	// OpenStreamSync opens a bidirectional stream, waiting for the peer's
	// stream credit until ctx is done.
	OpenStreamSync(ctx context.Context) (Stream, error)
	// AcceptStream waits for a bidirectional stream the peer opened.
	AcceptStream(ctx context.Context) (Stream, error)
	// OpenUniStream opens a unidirectional stream without waiting.
	OpenUniStream() (SendStream, error)
	// AcceptUniStream waits for a unidirectional stream the peer opened.
	AcceptUniStream(ctx context.Context) (ReceiveStream, error)
	// CloseWithError closes the connection with an application error code
	// (here an ErrCode) and a reason phrase.
	CloseWithError(code uint64, reason string) error
	// Context is done once the connection ended.
	Context() context.Context
	// ConnectionState gives the TLS state (peer certificates, ALPN).
	ConnectionState() quic.ConnectionState
	// LocalAddr and RemoteAddr are the addresses of the (first) path.
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
}

// ReceiveStream is the receiving part of a stream. Read returns io.EOF at
// the peer's end of stream and an error carrying the code after a reset.
// Safe for concurrent use.
type ReceiveStream interface {
	ID() uint64
	io.Reader
	CancelRead(code uint64)
	SetReadDeadline(t time.Time) error
}

// SendStream is the sending part of a stream. Close ends it cleanly (FIN);
// Context is done once the send side ended, including by the peer's
// STOP_SENDING. Safe for concurrent use.
type SendStream interface {
	ID() uint64
	io.Writer
	Close() error
	CancelWrite(code uint64)
	SetWriteDeadline(t time.Time) error
	Context() context.Context
}

// Stream is a bidirectional stream: a request stream.
type Stream interface {
	ReceiveStream
	SendStream
}

// prioritySetter is the optional priority hook (RFC 9218): a stream that
// implements it learns the urgency (0, most urgent, to 7) and incremental
// flag of the response it carries.
type prioritySetter interface {
	SetPriority(urgency uint8, incremental bool)
}

// FromSession adapts a multipath session to Conn. The session's own ALPN
// ("mpqsched/1") stands for "h3" on it.
func FromSession(s *session.Session) Conn { return sessionConn{s} }

type sessionConn struct{ s *session.Session }

// DeliveryState implements deliveryReporter: the session still holds data
// to deliver (unsent or unacknowledged), and a counter that grows while
// data moves either way.
func (c sessionConn) DeliveryState() (pending bool, progress uint64) {
	st := c.s.Stats()
	return st.UnackedSegments > 0 || st.SendBufferedBytes > 0, st.SentBytes + st.DeliveredBytes
}

func (c sessionConn) OpenStreamSync(ctx context.Context) (Stream, error) {
	st, err := c.s.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (c sessionConn) AcceptStream(ctx context.Context) (Stream, error) {
	st, err := c.s.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (c sessionConn) OpenUniStream() (SendStream, error) {
	st, err := c.s.OpenUniStream()
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (c sessionConn) AcceptUniStream(ctx context.Context) (ReceiveStream, error) {
	st, err := c.s.AcceptUniStream(ctx)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (c sessionConn) CloseWithError(code uint64, reason string) error {
	return c.s.CloseWithError(session.ApplicationErrorCode(code), reason)
}

func (c sessionConn) Context() context.Context              { return c.s.Context() }
func (c sessionConn) ConnectionState() quic.ConnectionState { return c.s.ConnectionState() }
func (c sessionConn) LocalAddr() net.Addr                   { return c.s.LocalAddr() }
func (c sessionConn) RemoteAddr() net.Addr                  { return c.s.RemoteAddr() }

// FromQUIC adapts a quic-go connection (ALPN "h3") to Conn.
func FromQUIC(c *quic.Conn) Conn { return quicConn{c} }

type quicConn struct{ c *quic.Conn }

func (c quicConn) OpenStreamSync(ctx context.Context) (Stream, error) {
	st, err := c.c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return quicStream{st}, nil
}

func (c quicConn) AcceptStream(ctx context.Context) (Stream, error) {
	st, err := c.c.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return quicStream{st}, nil
}

func (c quicConn) OpenUniStream() (SendStream, error) {
	st, err := c.c.OpenUniStream()
	if err != nil {
		return nil, err
	}
	return quicSendStream{st}, nil
}

func (c quicConn) AcceptUniStream(ctx context.Context) (ReceiveStream, error) {
	st, err := c.c.AcceptUniStream(ctx)
	if err != nil {
		return nil, err
	}
	return quicRecvStream{st}, nil
}

func (c quicConn) CloseWithError(code uint64, reason string) error {
	return c.c.CloseWithError(quic.ApplicationErrorCode(code), reason)
}

func (c quicConn) Context() context.Context              { return c.c.Context() }
func (c quicConn) ConnectionState() quic.ConnectionState { return c.c.ConnectionState() }
func (c quicConn) LocalAddr() net.Addr                   { return c.c.LocalAddr() }
func (c quicConn) RemoteAddr() net.Addr                  { return c.c.RemoteAddr() }

type quicStream struct{ *quic.Stream }

func (s quicStream) ID() uint64              { return uint64(s.StreamID()) }
func (s quicStream) CancelRead(code uint64)  { s.Stream.CancelRead(quic.StreamErrorCode(code)) }
func (s quicStream) CancelWrite(code uint64) { s.Stream.CancelWrite(quic.StreamErrorCode(code)) }

type quicSendStream struct{ *quic.SendStream }

func (s quicSendStream) ID() uint64 { return uint64(s.StreamID()) }
func (s quicSendStream) CancelWrite(code uint64) {
	s.SendStream.CancelWrite(quic.StreamErrorCode(code))
}

type quicRecvStream struct{ *quic.ReceiveStream }

func (s quicRecvStream) ID() uint64 { return uint64(s.StreamID()) }
func (s quicRecvStream) CancelRead(code uint64) {
	s.ReceiveStream.CancelRead(quic.StreamErrorCode(code))
}

// Listener yields connections for Server.Serve. SessionListener and
// QUICListener adapt this project's two listeners.
type Listener interface {
	// Accept waits for the next connection until ctx is done.
	Accept(ctx context.Context) (Conn, error)
	// Close stops listening. It may end the connections it accepted (a
	// session listener does; a quic-go listener does not), so
	// Server.Shutdown calls it last.
	Close() error
}

// SessionListener adapts a session listener to Listener. On a listener
// whose session.Config.PlainALPNs hold NextProtoH3, it yields the plain
// HTTP/3 connections of its socket too (session.Listener.AcceptAny), so
// that one Server serves every HTTP/3 client on one port, with the same
// handler and limits.
func SessionListener(ln *session.Listener) Listener { return sessionListener{ln} }

type sessionListener struct{ ln *session.Listener }

func (l sessionListener) Accept(ctx context.Context) (Conn, error) {
	for {
		s, plain, err := l.ln.AcceptAny(ctx)
		if err != nil {
			return nil, err
		}
		if s != nil {
			return FromSession(s), nil
		}
		if plain.ConnectionState().TLS.NegotiatedProtocol == NextProtoH3 {
			return FromQUIC(plain), nil
		}
		// RFC 7301 §3.2: a protocol this package does not speak.
		plain.CloseWithError(quic.ApplicationErrorCode(ErrCodeVersionFallback), "not HTTP/3")
	}
}

func (l sessionListener) Close() error { return l.ln.Close() }

// QUICListener adapts a quic-go listener (its TLS configuration offering
// ALPN "h3") to Listener.
func QUICListener(ln *quic.Listener) Listener { return quicListener{ln} }

type quicListener struct{ ln *quic.Listener }

func (l quicListener) Accept(ctx context.Context) (Conn, error) {
	c, err := l.ln.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return FromQUIC(c), nil
}

func (l quicListener) Close() error { return l.ln.Close() }
