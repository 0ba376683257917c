package cli

import (
	"flag"
	"fmt"
	"time"

	"github.com/mpqsched/mpqsched/pkg/mpfile"
)

// serverLimits are mpquic-server's bounds on what a client can hold: the
// request deadlines of pkg/mpfile's FILE and HTTP servers, and how often a
// reached limit may be logged. The session-level limits (sessions in total
// and per source address, session idle and handshake timeouts) belong to
// session.Config / the listener's configuration: their fields go into this
// struct, their flags into register, their range checks into check, and
// apply gains the session config to copy them into, so that every limit of
// the server is set up in this one place and logged through the same
// rate-limited log (srv.Limits).
type serverLimits struct {
	requestTimeout time.Duration // mpfile.Server.RequestTimeout
	writeTimeout   time.Duration // mpfile.Server.WriteTimeout
	idleTimeout    time.Duration // mpfile.Server.IdleTimeout (HTTP keep-alive)
	logInterval    time.Duration // at most one log line per kind of limit event per interval
	listing        bool          // mpfile.Server.Listing
}

// register adds the limits' flags to fs.
func (l *serverLimits) register(fs *flag.FlagSet) {
	fs.DurationVar(&l.requestTimeout, "request-timeout", mpfile.DefaultRequestTimeout, "a stream must send its whole request (FILE line, HTTP header) within this")
	fs.DurationVar(&l.writeTimeout, "write-timeout", mpfile.DefaultWriteTimeout, "drop a client whose download made no progress for this long (renewed by every write that goes through)")
	fs.DurationVar(&l.idleTimeout, "http-idle-timeout", mpfile.DefaultIdleTimeout, "close an HTTP stream that waits this long for its next request")
	fs.DurationVar(&l.logInterval, "limit-log-interval", mpfile.DefaultLogInterval, "log each kind of reached limit at most once per interval, with a count of the rest")
	fs.BoolVar(&l.listing, "http-listing", false, "HTTP lists directories that have no index.html (default: 404)")
}

// check refuses out-of-range values.
func (l *serverLimits) check() error {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"-request-timeout", l.requestTimeout},
		{"-write-timeout", l.writeTimeout},
		{"-http-idle-timeout", l.idleTimeout},
		{"-limit-log-interval", l.logInterval},
	} {
		if d.v <= 0 {
			return fmt.Errorf("%s %v: want a positive duration", d.flag, d.v)
		}
	}
	return nil
}

// apply sets the limits on the file server; reached limits are logged
// through logf, rate-limited.
func (l *serverLimits) apply(srv *mpfile.Server, logf func(string, ...any)) {
	srv.RequestTimeout = l.requestTimeout
	srv.WriteTimeout = l.writeTimeout
	srv.IdleTimeout = l.idleTimeout
	srv.Listing = l.listing
	srv.Limits = &mpfile.RateLog{Interval: l.logInterval, Logf: logf}
}
