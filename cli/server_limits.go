package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// serverLimits are mpquic-server's bounds on what a client can hold: the
// request deadlines of the HTTP/3 server (pkg/h3), the session
// limits of pkg/session's Listener (sessions in total, per source address
// and in handshake; idle, handshake and acknowledgement timeouts; data kept
// for retransmission; address validation), and how often a reached limit
// may be logged. Every limit of the server is set up here; SECURITY.md
// lists them with their defaults.
type serverLimits struct {
	requestTimeout time.Duration // h3.Server.HeaderTimeout
	writeTimeout   time.Duration // h3.Server.WriteTimeout
	idleTimeout    time.Duration // -http-idle-timeout: parsed and checked, but ignored (HTTP/1.1 keep-alive is retired)
	logInterval    time.Duration // at most one log line per kind of limit event per interval
	listing        bool          // mpfile.Files.Listing

	maxSessions      int           // session.Config.MaxSessions
	maxSessionsPerIP int           // session.Config.MaxSessionsPerIP
	maxHandshakes    int           // session.Config.MaxHandshakes
	sessionIdle      time.Duration // session.Config.IdleTimeout; 0: off
	handshakeTimeout time.Duration // session.Config.HandshakeTimeout
	ackTimeout       time.Duration // session.Config.AckTimeout
	maxUnacked       int           // session.Config.MaxUnackedBytes, bytes
	validation       string        // session.Config.AddressValidation: auto, always or never
	retryAbove       int           // session.Config.RetryAbove, new connections per second
}

// Defaults of the request limits' flags.
const (
	// defaultRequestTimeout is -request-timeout's: a request stream must
	// send its HTTP/3 HEADERS within it.
	defaultRequestTimeout = 10 * time.Second
	// defaultWriteTimeout is -write-timeout's: the longest a response may
	// wait for the client's credit (a client that stopped reading) before
	// its stream is reset; renewed by every write that completes, so a slow
	// download that keeps moving is never cut.
	defaultWriteTimeout = 30 * time.Second
	// defaultHTTPIdleTimeout is -http-idle-timeout's, a flag kept so that
	// old command lines still parse.
	defaultHTTPIdleTimeout = 30 * time.Second
)

// Ranges of the session limits' flags.
const (
	maxSessionsFlag    = 1 << 24  // -max-sessions and -max-sessions-per-ip
	maxHandshakesFlag  = 1 << 20  // -max-handshakes
	minUnackedFlag     = 64 << 10 // -max-unacked: session.InitialWindow, the least the session keeps anyway
	maxUnackedFlag     = 1 << 34  // -max-unacked, bytes
	maxRetryAboveFlag  = 1 << 30  // -retry-above, connections per second
	maxSessionIdleFlag = 24 * time.Hour
	maxTimeoutFlag     = time.Hour // -handshake-timeout, -ack-timeout
)

// validations maps -address-validation's values to the session's.
var validations = map[string]session.AddressValidation{
	"auto":   session.ValidateUnderLoad,
	"always": session.ValidateAlways,
	"never":  session.ValidateNever,
}

// register adds the limits' flags to fs.
func (l *serverLimits) register(fs *flag.FlagSet) {
	fs.DurationVar(&l.requestTimeout, "request-timeout", defaultRequestTimeout, "a request stream must send its HTTP/3 HEADERS within this (h3.Server.HeaderTimeout)")
	fs.DurationVar(&l.writeTimeout, "write-timeout", defaultWriteTimeout, "reset a response stream whose writes wait this long for the client's credit (a client that stopped reading; h3.Server.WriteTimeout)")
	fs.DurationVar(&l.idleTimeout, "http-idle-timeout", defaultHTTPIdleTimeout, "ignored: HTTP/1.1 keep-alive streams are retired (HTTP/3 opens one stream per request); kept so that old command lines still parse")
	fs.DurationVar(&l.logInterval, "limit-log-interval", defaultLogInterval, "log each kind of reached request limit at most once per interval, with a count of the rest (session refusals: once per 10s)")
	fs.BoolVar(&l.listing, "http-listing", false, "HTTP lists directories that have no index.html (default: 404)")
	fs.IntVar(&l.maxSessions, "max-sessions", session.DefaultMaxSessions, fmt.Sprintf("concurrent sessions; more are refused (1..%d)", maxSessionsFlag))
	fs.IntVar(&l.maxSessionsPerIP, "max-sessions-per-ip", session.DefaultMaxSessionsPerIP, fmt.Sprintf("concurrent sessions from one source IP address (1..%d)", maxSessionsFlag))
	fs.IntVar(&l.maxHandshakes, "max-handshakes", session.DefaultMaxHandshakes, fmt.Sprintf("concurrent session handshakes; more are refused (1..%d)", maxHandshakesFlag))
	fs.DurationVar(&l.sessionIdle, "idle-timeout", session.DefaultIdleTimeout, "end a session that runs no HTTP/3 request, with no other open stream and nothing in flight, for this long (0: never; at most 24h)")
	fs.DurationVar(&l.handshakeTimeout, "handshake-timeout", session.DefaultHandshakeTimeout, "a path's session handshake must complete within this after QUIC's (at most 1h)")
	fs.DurationVar(&l.ackTimeout, "ack-timeout", session.DefaultAckTimeout, "end a session whose acknowledgements stop progressing this long while data is outstanding (at most 1h)")
	fs.IntVar(&l.maxUnacked, "max-unacked", session.DefaultMaxUnackedBytes, fmt.Sprintf("bytes a session keeps for retransmission at most, whatever window the client announces (%d..%d)", minUnackedFlag, int64(maxUnackedFlag)))
	fs.StringVar(&l.validation, "address-validation", "auto", "when clients must prove their address with a QUIC Retry: auto (when new connections exceed -retry-above per second), always or never")
	fs.IntVar(&l.retryAbove, "retry-above", session.DefaultRetryAbove, fmt.Sprintf("new connections per second above which -address-validation auto sends Retries (1..%d)", maxRetryAboveFlag))
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
		{"-handshake-timeout", l.handshakeTimeout},
		{"-ack-timeout", l.ackTimeout},
	} {
		if d.v <= 0 {
			return fmt.Errorf("%s %v: want a positive duration", d.flag, d.v)
		}
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"-handshake-timeout", l.handshakeTimeout}, {"-ack-timeout", l.ackTimeout}} {
		if d.v > maxTimeoutFlag {
			return fmt.Errorf("%s %v: at most %v", d.flag, d.v, maxTimeoutFlag)
		}
	}
	if l.sessionIdle < 0 || l.sessionIdle > maxSessionIdleFlag {
		return fmt.Errorf("-idle-timeout %v: want 0 (never) or a duration up to %v", l.sessionIdle, maxSessionIdleFlag)
	}
	for _, n := range []struct {
		flag      string
		v, lo, hi int64
	}{
		{"-max-sessions", int64(l.maxSessions), 1, maxSessionsFlag},
		{"-max-sessions-per-ip", int64(l.maxSessionsPerIP), 1, maxSessionsFlag},
		{"-max-handshakes", int64(l.maxHandshakes), 1, maxHandshakesFlag},
		{"-max-unacked", int64(l.maxUnacked), minUnackedFlag, maxUnackedFlag},
		{"-retry-above", int64(l.retryAbove), 1, maxRetryAboveFlag},
	} {
		if n.v < n.lo || n.v > n.hi {
			return fmt.Errorf("%s %d: want %d..%d", n.flag, n.v, n.lo, n.hi)
		}
	}
	if _, ok := validations[l.validation]; !ok {
		return fmt.Errorf("-address-validation %q: want auto, always or never", l.validation)
	}
	return nil
}

// apply sets the limits on the file handler and on the sessions' config,
// and returns the log of reached limits: lines go to logf, rate-limited.
// The request timeouts go to the HTTP/3 server (newH3Server).
func (l *serverLimits) apply(files *mpfile.Files, cfg *session.Config, logf func(string, ...any)) *rateLog {
	files.Listing = l.listing
	cfg.MaxSessions = l.maxSessions
	cfg.MaxSessionsPerIP = l.maxSessionsPerIP
	cfg.MaxHandshakes = l.maxHandshakes
	cfg.IdleTimeout = l.sessionIdle
	if l.sessionIdle == 0 {
		cfg.IdleTimeout = -1 // the session's "off"
	}
	cfg.HandshakeTimeout = l.handshakeTimeout
	cfg.AckTimeout = l.ackTimeout
	cfg.MaxUnackedBytes = l.maxUnacked
	cfg.AddressValidation = validations[l.validation]
	cfg.RetryAbove = l.retryAbove
	if cfg.Logf == nil {
		cfg.Logf = refusalsOnly(logf)
	}
	return &rateLog{Interval: l.logInterval, Logf: logf}
}

// refusalsOnly passes on only the Listener's refusal lines (a limit of
// sessions, sessions per address or handshakes reached), which pkg/session
// already rate-limits to one per 10 s and kind; the session's other log
// lines are for -v.
func refusalsOnly(logf func(string, ...any)) func(string, ...any) {
	return func(format string, args ...any) {
		if strings.HasPrefix(format, "session: refused a connection") {
			logf(format, args...)
		}
	}
}
