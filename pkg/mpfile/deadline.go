package mpfile

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
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

// CodeWriteTimeout is the stream error code (session.Stream.CancelWrite)
// with which the server resets a response that made no write progress for
// its WriteTimeout (a client that stopped reading). Only that stream ends;
// the session and its other streams go on.
const CodeWriteTimeout uint64 = 0x6d70_0001

// ErrWriteTimeout is what Get and HTTPGet return when the server reset the
// response's stream with CodeWriteTimeout.
var ErrWriteTimeout = errors.New("mpfile: the server reset the response: no write progress within its write timeout (a client that stopped reading)")

// streamErr turns the error of a stream the peer reset with
// CodeWriteTimeout into one that also wraps ErrWriteTimeout; other errors
// are returned unchanged.
func streamErr(err error) error {
	var se *session.StreamError
	if errors.As(err, &se) && se.Remote && se.ErrorCode == CodeWriteTimeout {
		return fmt.Errorf("%w (%w)", ErrWriteTimeout, err)
	}
	return err
}

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
