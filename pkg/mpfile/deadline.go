package mpfile

import (
	"errors"
	"io"
	"time"
)

// Server timeouts when the Server's fields are zero.
const (
	// DefaultRequestTimeout bounds the time from a stream's first byte
	// being awaited to the end of its request: the FILE line, an HTTP
	// request's header, the STATS line after the data.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultWriteTimeout is the longest a response may go without
	// progress (no write accepted by the session) before the client is
	// dropped: like net/http's WriteTimeout, but renewed by every write
	// that completes, so a slow download that keeps moving is never cut.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long an HTTP stream may wait for its next
	// request (keep-alive).
	DefaultIdleTimeout = 30 * time.Second
)

// ErrWriteTimeout is the error a session is closed with when a response
// on it made no progress for the server's WriteTimeout (a client that
// stopped reading).
var ErrWriteTimeout = errors.New("mpfile: client stopped reading: no write progress within the write timeout")

// writeDeadliner is the part of a session stream progressWriter drives.
type writeDeadliner interface {
	io.Writer
	SetWriteDeadline(t time.Time) error
}

// progressWriter renews w's write deadline to now+timeout before every
// Write, so each write (io.Copy's 32 KiB chunks) must be accepted within
// timeout. now is the clock (time.Now; virtual inside a synctest bubble).
type progressWriter struct {
	w       writeDeadliner
	timeout time.Duration
	now     func() time.Time
}

// Write writes p with a fresh deadline.
func (pw progressWriter) Write(p []byte) (int, error) {
	pw.w.SetWriteDeadline(pw.now().Add(pw.timeout))
	return pw.w.Write(p)
}

// orDefault returns d, or def if d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
