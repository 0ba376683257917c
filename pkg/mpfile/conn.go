package mpfile

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// aLongTimeAgo is a deadline in the past: it unblocks pending I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is a session stream seen as a net.Conn, so that net/http can run over
// it. Its addresses are the session's (first current path).
type Conn struct {
	st *session.Stream
	s  *session.Session
	r  io.Reader // st, or a reader holding bytes already taken from st

	// writeTimeout, if positive, renews the write deadline before every
	// Write (progress-based, see progressWriter); stalled is called once
	// when a Write fails on it. The server sets both.
	writeTimeout time.Duration
	stalled      func()
	stallOnce    sync.Once

	once sync.Once
}

// NewConn wraps st, a stream of s. If r is not nil, reads come from r (which
// must end up reading st), e.g. a bufio.Reader that peeked at the stream.
func NewConn(s *session.Session, st *session.Stream, r io.Reader) *Conn {
	if r == nil {
		r = st
	}
	return &Conn{st: st, s: s, r: r}
}

// Read reads stream data. After the peer reset the stream it fails with
// an error wrapping the *session.StreamError (and ErrWriteTimeout for
// CodeWriteTimeout), never io.EOF, so net/http sees a broken response,
// not a complete one.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		err = streamErr(err)
	}
	return n, err
}

// Write writes stream data.
func (c *Conn) Write(p []byte) (int, error) {
	if c.writeTimeout <= 0 {
		return c.st.Write(p)
	}
	n, err := progressWriter{w: c.st, timeout: c.writeTimeout, now: time.Now}.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) && c.stalled != nil {
		c.stallOnce.Do(c.stalled)
	}
	return n, err
}

// Close ends the stream both ways: its write side ends after the data
// written, its unread data is discarded.
func (c *Conn) Close() error {
	var err error
	c.once.Do(func() { err = closeStream(c.st) })
	return err
}

// closeStream discards st's unread data (telling the peer to stop sending)
// and ends its write side; the session forgets the stream once the peer
// has ended or reset its side too.
func closeStream(st *session.Stream) error {
	st.CloseRead()
	return st.Close()
}

// unknownAddr stands in for an address once the session has no path left.
type unknownAddr struct{}

func (unknownAddr) Network() string { return "mpquic" }
func (unknownAddr) String() string  { return "mpquic:closed" }

// LocalAddr is the session's local address on its first current path.
func (c *Conn) LocalAddr() net.Addr {
	if a := c.s.LocalAddr(); a != nil {
		return a
	}
	return unknownAddr{}
}

// RemoteAddr is the peer's address on the session's first current path.
func (c *Conn) RemoteAddr() net.Addr {
	if a := c.s.RemoteAddr(); a != nil {
		return a
	}
	return unknownAddr{}
}

// SetDeadline sets the stream's read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error { return c.st.SetDeadline(t) }

// SetReadDeadline sets the stream's read deadline.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.st.SetReadDeadline(t) }

// SetWriteDeadline sets the stream's write deadline.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.st.SetWriteDeadline(t) }

// Session is the session the stream belongs to.
func (c *Conn) Session() *session.Session { return c.s }

var _ net.Conn = (*Conn)(nil)

// connListener is a net.Listener fed with Conns by the server's stream
// dispatcher: the net/http server's Accept side.
type connListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnListener() *connListener {
	return &connListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the next HTTP stream.
func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// push hands c to the HTTP server; false if the listener is closed.
func (l *connListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

// Close stops Accept.
func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a placeholder: streams of many sessions arrive here.
func (l *connListener) Addr() net.Addr { return unknownAddr{} }

// Transport returns an http.Transport that opens one stream of s per HTTP
// connection; request URLs are http://ANY-HOST/PATH. While the server's
// stream credit is used up, a new connection waits for credit (until the
// request's context ends) instead of failing. A response whose stream the
// server resets fails with an error wrapping the *session.StreamError.
func Transport(s *session.Session) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			st, err := s.OpenStreamSync(ctx)
			if err != nil {
				return nil, err
			}
			return NewConn(s, st, nil), nil
		},
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
}

// errNoSession is returned by the stats handler outside a session stream.
var errNoSession = errors.New("not on a session stream")
