// Package session is mpqsched's multipath transport: one upstream quic-go
// connection per network path (a subflow with its own congestion control,
// RTT and loss recovery, like an MPTCP subflow) and, above them, segments
// of whole stream and control frames (RFC 9000's model: protocol version 4,
// pkg/wire/frame.go) with connection-level sequence numbers for
// acknowledgement and reinjection only, per-stream reassembly and flow
// control, reinjection from failed paths, path management and multiplexed
// streams. A segment is processed as it arrives, whatever its place in the
// sequence, so a segment late on a slow path delays only the streams whose
// bytes it carries.
//
// The scheduler (package sched) decides which path carries which segment.
// Each path carries its segments on one unidirectional QUIC stream per
// direction, so quic-go retransmits a lost packet on the path that lost it
// (as an MPTCP subflow does); the session reinjects on other paths the data
// of a path that stops making progress. Connection-level acknowledgements and
// window updates (Ack) and receiver reports travel as QUIC datagrams on the
// fastest live path.
//
// A client Dials with its first path and adds more with AddPath; every join
// is authenticated with an HMAC keyed by the TLS exporter of the first path's
// connection, so nobody without that key can attach a path to the session.
//
// # Lifecycle and errors
//
// A session is open until Close (graceful: it waits for its data to be
// acknowledged), CloseWithError (an abort with an application's code and
// reason, which the peer sees as an *ApplicationError with Remote set), the
// peer's close, or an error of its own (ErrProtocol, ErrAckTimeout, ...).
// Then Done is closed, Context is cancelled with the reason as its cause,
// Err returns it, every blocked call returns, and the sockets the session
// owns close after a short drain (lifecycle.go). A peer's clean close while
// data written here is unacknowledged ends the session with
// ErrUnacknowledged, never silently.
//
// # Concurrency
//
// Every method of Session, Listener and Stream is safe for concurrent use
// by several goroutines, with these rules:
//   - A Stream's Read may run beside its Write, and beside calls on other
//     streams; two concurrent Reads (or two Writes) on one stream interleave
//     unpredictably, as on a net.Conn.
//   - Close, CloseWithError and Listener.Close may be called from any
//     goroutine, any number of times; only the first counts. They must not
//     be called from Config.Logf (they wait for the log queue to empty), a
//     scheduler or an observer.
//   - Config.Logf runs on a goroutine of its own, with no lock of the
//     session or listener held: it may call Stats, Paths, Refused and the
//     like. Messages wait in a bounded queue (256; more are counted and
//     dropped).
//   - The PathEvents channel is never written with a blocking send: an
//     application that does not keep up loses the oldest events
//     (PathEvent.Dropped counts them).
//   - The scheduler (Config.Scheduler, NewScheduler) and its observers are
//     called one at a time, from the send pass, a path's writer (when its
//     path asks for data: pull.go) or a SendDatagram caller,
//     with no lock held that Read, Write or the path readers need: a slow
//     Decide delays sending only. They may call Stats, Paths and the like,
//     but not Close, SendDatagram or another method that sends.
package session

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/sched"
	_ "github.com/mpqsched/mpqsched/sched/minrtt" // the default scheduler is always available
)

// ALPN is the TLS application protocol of an mpqsched session.
const ALPN = "mpqsched/1"

// Defaults for Config fields left zero.
const (
	DefaultSegmentSize = 1216     // segment payload, bytes: one segment ≈ one QUIC packet; a 1,200-byte Write and its STREAM frame header fit in one (the header takes at most 15 bytes below stream ID 2^30), and so does the segment with its header (at most 19 bytes) in a 1280-byte packet's datagram (MaxDatagramSegment)
	DefaultRecvWindow  = 4 << 20  // receive window (stream data held by the streams, in order or not, unread), bytes
	InitialWindow      = 64 << 10 // the smallest RecvWindow allowed, bytes (until protocol version 5, the window both ends assumed before the first Ack)
	DefaultSendBuffer  = 1 << 20  // application bytes buffered before Write blocks
	// DefaultMaxSendBuffered bounds what all of a session's streams buffer
	// for sending together, bytes (or SendBuffer if larger): the default
	// receive window, since the session frames no more than the peer's
	// window anyway, and 4 streams' full buffers.
	DefaultMaxSendBuffered = 4 << 20
	// DefaultMaxListenerSendBuffered bounds what all of a Listener's
	// sessions buffer for sending together, bytes: 64 sessions with full
	// buffers, whatever MaxSessions and MaxStreams allow.
	DefaultMaxListenerSendBuffered = 256 << 20
	DefaultMaxPaths                = 8         // paths per session
	DefaultMaxStreams              = 256       // concurrently open peer-initiated streams
	DefaultMaxUniStreams           = 100       // concurrently open peer-initiated unidirectional streams (quic-go's default)
	DefaultStreamWindow            = 512 << 10 // initial receive window of each stream, bytes (quic-go's initial stream window)
	DefaultAckDelay                = 5 * time.Millisecond
	DefaultAckEvery                = 8 // segments received before an immediate Ack
	DefaultReportInterval          = 100 * time.Millisecond
	DefaultSeriesInterval          = 100 * time.Millisecond
	DefaultFailureTimeout          = 300 * time.Millisecond // floor of the no-progress time that marks a path potentially failed
	DefaultCloseTimeout            = 10 * time.Second

	DefaultMaxUnackedBytes = 16 << 20        // bytes kept for retransmission at most, whatever the peer's window
	DefaultAckTimeout      = time.Minute     // data outstanding with no acknowledgement progress this long ends the session
	DefaultIdleTimeout     = 5 * time.Minute // a Listener's session with no stream and nothing in flight this long ends (Dial: off)
	// DefaultHandshakeTimeout bounds a path's session handshake after QUIC's
	// own: as long as quic-go's default idle timeout, since a slow, lossy path
	// in and out of outages can back its PTO off past 10 s (edar-setting-v's
	// 0.1-0.5 Mbit/s, 1-2% loss handoff path took longer than that for one
	// seed in 5).
	DefaultHandshakeTimeout = 30 * time.Second
	DefaultMaxSessions      = 4096 // a Listener's concurrent sessions
	DefaultMaxSessionsPerIP = 256  // a Listener's concurrent sessions from one source address
	DefaultMaxHandshakes    = 256  // a Listener's concurrent session handshakes
	DefaultRetryAbove       = 64   // new connections per second above which a Listener validates addresses
)

// AddressValidation says when a Listener makes clients prove their address
// with a QUIC Retry (one more round trip) before it keeps any state for them.
type AddressValidation int

const (
	ValidateUnderLoad AddressValidation = iota // when new connections arrive faster than Config.RetryAbove per second (default)
	ValidateAlways                             // for every new connection
	ValidateNever                              // never
)

// Config configures a session. The zero value is usable.
type Config struct {
	Scheduler       string                 // registered scheduler name; "" means sched.DefaultName (minrtt)
	NewScheduler    func() sched.Scheduler // if set, overrides Scheduler; Listen calls it once more, at once, to ask whether the scheduler needs per-ACK signals (sched.PerAckSignals)
	SegmentSize     int                    // segment payload, bytes (≤ 16 KiB)
	RecvWindow      int                    // bound on the stream data the streams hold (out of order or unread), bytes
	SendBuffer      int                    // application bytes buffered before Stream.Write blocks
	MaxSendBuffered int                    // bytes all of a session's streams buffer for sending together before Write blocks (0: the larger of DefaultMaxSendBuffered and SendBuffer)
	MaxPaths        int                    // largest number of paths (≤ sched.MaxPaths)
	MaxStreams      int                    // bidirectional streams the peer may open that the application has not both accepted and finished (the peer waits for credit beyond it)
	MaxUniStreams   int                    // the same for unidirectional streams, with its own credit (0: DefaultMaxUniStreams)
	StreamWindow    int                    // initial receive window of each stream, bytes (≤ MaxStreamWindow; auto-tuned up to MaxStreamWindow)
	MaxStreamWindow int                    // largest receive window of one stream, bytes (≤ 2/3 of RecvWindow, the default: see maxStreamWindow)
	AckDelay        time.Duration          // longest wait before acknowledging received segments
	ReportInterval  time.Duration          // receiver report period; negative disables reports; an interval in which nothing arrived is not reported
	ReportPerMinRTT bool                   // with reports on: report once per the smallest MinRTT this end's paths measure when that is shorter than ReportInterval (at least every MinReportInterval), as EdAR's receiver observes once per decision interval (report.go)
	SeriesInterval  time.Duration          // sampling step of the metrics time series
	FailureTimeout  time.Duration          // floor of the no-progress time before a path is potentially failed
	CloseTimeout    time.Duration          // longest graceful Close waits without acknowledgement progress
	QUIC            *quic.Config           // base per-path quic-go config (cloned; datagrams are always enabled); nil: MaxIdleTimeout 30 s, and keep-alives every 15 s from a client, none from a Listener

	// Bounds against hostile peers (SECURITY.md). Zero means the default.
	MaxUnackedBytes   int               // most bytes kept for retransmission, whatever window the peer announces
	AckTimeout        time.Duration     // data outstanding with no acknowledgement progress this long ends the session
	IdleTimeout       time.Duration     // no open stream and nothing in flight this long ends the session (Listen: DefaultIdleTimeout; Dial: off; negative: off)
	HandshakeTimeout  time.Duration     // bound on a path's session handshake, after QUIC's own
	MaxSessions       int               // Listener: concurrent sessions; more are refused
	MaxSessionsPerIP  int               // Listener: concurrent sessions from one source IP address
	MaxHandshakes     int               // Listener: concurrent session handshakes; more are refused
	AddressValidation AddressValidation // Listener: when to send QUIC Retries
	RetryAbove        int               // Listener: new connections per second above which ValidateUnderLoad sends Retries
	// MaxListenerSendBuffered is the most bytes all of a Listener's sessions
	// buffer for sending together (0: DefaultMaxListenerSendBuffered; at
	// least MaxSendBuffered); beyond it Writes wait for room.
	MaxListenerSendBuffered int

	// QlogDir, if set, is where one qlog file per path connection is
	// written. It turns on the per-packet tracer of every path, which
	// otherwise runs only for a coupled congestion control or a scheduler
	// that needs per-ACK signals (signals.go, Stats.Traced).
	QlogDir string
	// Logf, if set, receives the session's (or Listener's) log messages,
	// in order, on a goroutine of its own with no lock of the session or
	// listener held, so it may call Stats, Refused and the like. At most
	// 256 messages wait; more are dropped and counted.
	Logf func(format string, args ...any)

	// OpportunisticReinjection, when the peer's receive window blocks new
	// data, sends the segments holding the window back again on a path
	// with room and a lower smoothed RTT than every path that carried them,
	// and halves the session window (window.go) of the slower paths that
	// carried them, at most once per their RTT: Linux MPTCP's opportunistic
	// retransmission with penalisation. Off by default, as in the MPQUIC
	// schedulers' papers.
	OpportunisticReinjection bool

	// DatagramData carries this end's segments in QUIC DATAGRAM frames
	// (RFC 9221) instead of each path's reliable QUIC stream (dgdata.go):
	// quic-go keeps congestion control, pacing and encryption, and the
	// session alone detects loss (RFC 9002 §6.1's time threshold, per path,
	// on its own Acks) and offers what was lost to the scheduler again, for
	// any path. Experimental, off by default: docs/data-plane.md compares
	// both transports. It needs SegmentSize at most MaxDatagramSegment.
	// A peer of protocol version 4 takes either transport.
	DatagramData bool

	// Coupling names the coupled congestion control of the session windows
	// (coupling.go, package cc): "" or "none" (quic-go's uncoupled NewReno
	// alone, the default), "lia", "olia", "balia", or "reno-friendly"
	// (standard Reno's response on each path: halve on loss, no undo).
	Coupling string
	// RenoFriendly is the TCP-friendly mode: every path gets a session
	// window that reacts to loss as TCP Reno does (β = 0.5, never undone),
	// even where quic-go keeps 0.7 and undoes spurious cutbacks. Alone (or
	// with Coupling "none") it is Coupling "reno-friendly"; with a coupled
	// rule, the rule's increase with Reno's decrease (not scaled to
	// quic-go's 0.7) and no undo.
	RenoFriendly bool

	// PlainALPNs are application protocols this end also speaks over one
	// plain QUIC connection, such as "h3" (listener_plain.go). A Listener
	// offers them after ALPN on its socket, so a client that offers only
	// one of them (any HTTP/3 client) is served there too (AcceptAny); a
	// client's DialAny offers them after ALPN on its first path and falls
	// back to a plain connection when the server picks one. Each must be
	// 1 to 255 bytes and differ from ALPN.
	PlainALPNs []string
}

// Upper bounds that Config values must respect.
const (
	maxRecvWindow = 1 << 30 // bytes
	maxStreamsCap = 1 << 20 // open peer streams
	maxDuration   = MaxDuration
)

// MaxDuration is the longest duration any Config field accepts
// (CloseTimeout, FailureTimeout, AckTimeout, ...): one hour. A constant;
// safe to read from any goroutine.
const MaxDuration = time.Hour

func (c *Config) withDefaults() (Config, error) {
	var d Config
	if c != nil {
		d = *c
	}
	if err := d.checkRanges(); err != nil {
		return d, err
	}
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	set(&d.SegmentSize, DefaultSegmentSize)
	set(&d.RecvWindow, DefaultRecvWindow)
	set(&d.SendBuffer, DefaultSendBuffer)
	set(&d.MaxSendBuffered, max(DefaultMaxSendBuffered, d.SendBuffer))
	set(&d.MaxListenerSendBuffered, max(DefaultMaxListenerSendBuffered, d.MaxSendBuffered))
	set(&d.MaxPaths, DefaultMaxPaths)
	set(&d.MaxStreams, DefaultMaxStreams)
	set(&d.MaxUniStreams, DefaultMaxUniStreams)
	set(&d.MaxStreamWindow, maxStreamWindow(d.RecvWindow))
	set(&d.StreamWindow, min(DefaultStreamWindow, d.MaxStreamWindow))
	if d.AckDelay == 0 {
		d.AckDelay = DefaultAckDelay
	}
	if d.ReportInterval == 0 {
		d.ReportInterval = DefaultReportInterval
	}
	if d.SeriesInterval == 0 {
		d.SeriesInterval = DefaultSeriesInterval
	}
	if d.FailureTimeout == 0 {
		d.FailureTimeout = DefaultFailureTimeout
	}
	if d.CloseTimeout == 0 {
		d.CloseTimeout = DefaultCloseTimeout
	}
	set(&d.MaxUnackedBytes, DefaultMaxUnackedBytes)
	set(&d.MaxSessions, DefaultMaxSessions)
	set(&d.MaxSessionsPerIP, DefaultMaxSessionsPerIP)
	set(&d.MaxHandshakes, DefaultMaxHandshakes)
	set(&d.RetryAbove, DefaultRetryAbove)
	if d.AckTimeout == 0 {
		d.AckTimeout = DefaultAckTimeout
	}
	if d.HandshakeTimeout == 0 {
		d.HandshakeTimeout = DefaultHandshakeTimeout
	}
	switch {
	case d.SegmentSize < 64 || d.SegmentSize > 16<<10:
		return d, fmt.Errorf("session: SegmentSize %d outside [64, 16384]", d.SegmentSize)
	case d.DatagramData && d.SegmentSize > MaxDatagramSegment:
		return d, fmt.Errorf("session: SegmentSize %d over MaxDatagramSegment %d with DatagramData", d.SegmentSize, MaxDatagramSegment)
	case d.RecvWindow < InitialWindow:
		return d, fmt.Errorf("session: RecvWindow %d smaller than %d bytes", d.RecvWindow, InitialWindow)
	case d.MaxPaths < 1 || d.MaxPaths > sched.MaxPaths:
		return d, fmt.Errorf("session: MaxPaths %d outside [1, %d]", d.MaxPaths, sched.MaxPaths)
	case d.SendBuffer < d.SegmentSize:
		return d, fmt.Errorf("session: SendBuffer %d smaller than a segment", d.SendBuffer)
	case d.MaxSendBuffered < d.SendBuffer:
		return d, fmt.Errorf("session: MaxSendBuffered %d smaller than SendBuffer %d", d.MaxSendBuffered, d.SendBuffer)
	case d.MaxListenerSendBuffered < d.MaxSendBuffered:
		return d, fmt.Errorf("session: MaxListenerSendBuffered %d smaller than MaxSendBuffered %d", d.MaxListenerSendBuffered, d.MaxSendBuffered)
	case d.MaxStreamWindow > maxStreamWindow(d.RecvWindow):
		return d, fmt.Errorf("session: MaxStreamWindow %d above 2/3 of RecvWindow %d: one unread stream could block the others", d.MaxStreamWindow, d.RecvWindow)
	case d.StreamWindow < d.SegmentSize || d.StreamWindow > d.MaxStreamWindow:
		return d, fmt.Errorf("session: StreamWindow %d outside [SegmentSize %d, MaxStreamWindow %d]", d.StreamWindow, d.SegmentSize, d.MaxStreamWindow)
	}
	if d.Logf == nil {
		d.Logf = func(string, ...any) {}
	}
	var cp coupler
	if err := cp.init(d); err != nil {
		return d, fmt.Errorf("session: Coupling: %w", err)
	}
	return d, nil
}

// checkRanges refuses negative and absurd values before defaults apply.
func (d *Config) checkRanges() error {
	for _, f := range []struct {
		name   string
		v, max int64
	}{
		{"SegmentSize", int64(d.SegmentSize), 16 << 10},
		{"RecvWindow", int64(d.RecvWindow), maxRecvWindow},
		{"SendBuffer", int64(d.SendBuffer), maxRecvWindow},
		{"MaxSendBuffered", int64(d.MaxSendBuffered), 1 << 34},
		{"MaxListenerSendBuffered", int64(d.MaxListenerSendBuffered), 1 << 40},
		{"MaxPaths", int64(d.MaxPaths), sched.MaxPaths},
		{"MaxStreams", int64(d.MaxStreams), maxStreamsCap},
		{"MaxUniStreams", int64(d.MaxUniStreams), maxStreamsCap},
		{"StreamWindow", int64(d.StreamWindow), maxRecvWindow},
		{"MaxStreamWindow", int64(d.MaxStreamWindow), maxRecvWindow},
		{"AckDelay", int64(d.AckDelay), int64(time.Second)},
		{"SeriesInterval", int64(d.SeriesInterval), int64(maxDuration)},
		{"FailureTimeout", int64(d.FailureTimeout), int64(maxDuration)},
		{"CloseTimeout", int64(d.CloseTimeout), int64(maxDuration)},
		{"ReportInterval", int64(d.ReportInterval), int64(maxDuration)},
		{"MaxUnackedBytes", int64(d.MaxUnackedBytes), 1 << 34},
		{"AckTimeout", int64(d.AckTimeout), int64(maxDuration)},
		{"IdleTimeout", int64(d.IdleTimeout), int64(24 * time.Hour)},
		{"HandshakeTimeout", int64(d.HandshakeTimeout), int64(maxDuration)},
		{"MaxSessions", int64(d.MaxSessions), 1 << 24},
		{"MaxSessionsPerIP", int64(d.MaxSessionsPerIP), 1 << 24},
		{"MaxHandshakes", int64(d.MaxHandshakes), 1 << 20},
		{"RetryAbove", int64(d.RetryAbove), 1 << 30},
		{"AddressValidation", int64(d.AddressValidation), int64(ValidateNever)},
	} {
		if f.v < 0 && f.name != "ReportInterval" && f.name != "IdleTimeout" { // negative: disabled
			return fmt.Errorf("session: %s %d is negative", f.name, f.v)
		}
		if f.v > f.max {
			return fmt.Errorf("session: %s %d larger than %d", f.name, f.v, f.max)
		}
	}
	return nil
}

func (c *Config) newScheduler() (sched.Scheduler, error) {
	if c.NewScheduler != nil {
		return c.NewScheduler(), nil
	}
	name := c.Scheduler
	if name == "" {
		name = sched.DefaultName
	}
	return sched.New(name)
}

// quicConfig returns the per-path quic-go config.
// defaultKeepAlive is a client path's quic-go keep-alive period when
// Config.QUIC is nil: half the 30 s idle timeout, as quic-go advises, so an
// idle path stays open (and its NAT binding with it) at one PING and one
// ACK per 15 s. A Listener sends none (listener.go).
const defaultKeepAlive = 15 * time.Second

func (c *Config) quicConfig() *quic.Config {
	var q *quic.Config
	if c.QUIC != nil {
		q = c.QUIC.Clone()
	} else {
		q = &quic.Config{MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: defaultKeepAlive}
	}
	q.EnableDatagrams = true
	return q
}

// Draining after a local close (see closeLocked): sockets a session owns stay
// open for three PTOs of its slowest path (counting max_ack_delay, so no
// shorter than quic-go's own closing period), within [minDrain, maxDrain].
const (
	maxAckDelay = 25 * time.Millisecond // quic-go's default max_ack_delay
	minDrain    = 100 * time.Millisecond
	maxDrain    = 10 * time.Second
)

// Errors a session reports.
var (
	ErrClosed       = errors.New("session: closed")
	ErrJoinRejected = errors.New("session: path join rejected")
	ErrTooManyPaths = errors.New("session: too many paths")
	ErrNoPaths      = errors.New("session: every path is gone")
	ErrProtocol     = errors.New("session: protocol violation by peer")
	// ErrFlowControl is the peer's data beyond a stream's flow-control
	// limit (RFC 9000 §4.1's FLOW_CONTROL_ERROR): a protocol violation,
	// errors.Is(err, ErrProtocol) holds, closed with its own code.
	ErrFlowControl   = fmt.Errorf("%w: flow control", ErrProtocol)
	ErrStreamLimit   = errors.New("session: too many open streams")
	ErrStreamReset   = errors.New("session: stream reset by peer")
	ErrNoSuchPath    = errors.New("session: no such path")
	errCloseTimedOut = errors.New("session: close gave up: no acknowledgement progress for CloseTimeout")
	ErrAckTimeout    = errors.New("session: no acknowledgement progress for AckTimeout while data was outstanding")
	ErrIdleTimeout   = errors.New("session: idle for IdleTimeout")
	ErrRefused       = errors.New("session: refused by the server (a limit was reached)")
)

// Application error codes used when closing path connections: the session's
// internal codes. An application's own close travels as codeApplication
// (closeerr.go), with its code in the reason phrase, so the two never mix.
const (
	codeNoError      quic.ApplicationErrorCode = 0
	codeProtocol     quic.ApplicationErrorCode = 1
	codeJoinRejected quic.ApplicationErrorCode = 2
	codePathRemoved  quic.ApplicationErrorCode = 3
	codeInternal     quic.ApplicationErrorCode = 4
	codeCloseTimeout quic.ApplicationErrorCode = 5  // a graceful Close gave up with data unacknowledged
	codeAckTimeout   quic.ApplicationErrorCode = 6  // no acknowledgement progress for AckTimeout
	codeIdleTimeout  quic.ApplicationErrorCode = 7  // idle for IdleTimeout
	codeRefused      quic.ApplicationErrorCode = 8  // a server limit refused the session
	codeFlowControl  quic.ApplicationErrorCode = 10 // the peer sent past a flow-control limit (RFC 9000's FLOW_CONTROL_ERROR); 9 is codeApplication
)

// Session is one multipath connection.
type Session struct {
	handoffs handoffCount // returns from waits on other goroutines, counted in lockcount builds only
	cfg      Config
	isClient bool
	id       [16]byte
	joinKey  [32]byte
	joinSeq  uint64     // client: early-Join counters used (guarded by mu; join_early.go)
	joinWin  joinWindow // server: early-Join counters accepted (guarded by the Listener's mu)
	tlsConf  *tls.Config
	sch      sched.Scheduler
	traced   bool                   // the path connections carry tracers (signals.go); set once, before the first path
	obs      sched.Observer         // nil if the scheduler does not observe
	robs     sched.ReceiverObserver // nil if it takes no receiver reports
	reinj    sched.Reinjector       // nil if it does not re-inject when nothing new can be sent
	quick    bool                   // the scheduler is sched.Quick: askLocked calls it with s.mu held
	quickAt  sched.QuickUntil       // nil, or a scheduler that is not Quick says when it is (decider.go)
	dec      decider                // where a scheduler that is not Quick decides (decider.go)
	start    time.Time

	mu         sessionMutex // sync.Mutex (lockcount_off.go)
	closeWait  broadcast    // wakes Close, waiting for acknowledgements, at each Ack and at the session's end
	slots      [sched.MaxPaths]*path
	allPaths   []*path        // every path the session had, for Stats (bounded)
	endPaths   []sched.PathID // the paths the session had when it ended (Paths after close; at most MaxPaths)
	npaths     int
	nextPathID uint32 // server side: the next path ID to assign
	closed     bool
	closeErr   error
	done       chan struct{} // closed when the session is closed
	wake       chan struct{} // pokes the loop's send pass (loop.go)
	ackWake    chan struct{} // pokes the loop's ack pass
	in         inbox         // control datagrams for the loop (inbox.go)
	rx         rxQueue       // the paths' segments for the loop (rxbatch.go)
	credits    creditQueue   // streams whose reads the loop has yet to credit (creditq.go)
	wg         sync.WaitGroup
	life       lifecycle  // open → closing/draining → closed, and what the session owns (lifecycle.go)
	log        logQueue   // Config.Logf, called outside every lock (logq.go)
	events     pathEvents // PathEvents (events.go)

	probeReaders    map[*quic.Transport]bool // client: sockets whose path-probe answers a goroutine reads (probe_udp.go), under mu; at most one per path socket
	lastProbeAnswer atomic.Int64             // server: when the listener last answered the session's path probe, Unix ns (probe_udp.go)

	snd sender
	rcv receiver
	cc  coupler

	now        func() time.Time // the session's clock (time.Now; tests may inject another)
	lastActive time.Time        // when a stream was last open or data in flight (IdleTimeout)
	srcIP      string           // server side: the first path's source IP (Listener.perIP)
	firstConn  *quic.Conn       // the first path's connection (ConnectionState), set once
	lastAddr   pathAddrs        // the addresses of the last path installed or removed (LocalAddr, RemoteAddr), under mu
	onDone     func()           // if set (before run), called once the session has ended, from its loop (Listener.forget)

	streams streamSet
	dgram   datagrams // application datagrams (datagram.go)

	stats  counters
	series []Sample
}

func newSession(cfg Config, isClient bool, tlsConf *tls.Config) (*Session, error) {
	sch, err := cfg.newScheduler()
	if err != nil {
		return nil, err
	}
	s := &Session{
		cfg:      cfg,
		isClient: isClient,
		tlsConf:  tlsConf,
		sch:      sch,
		start:    time.Now(),
		done:     make(chan struct{}),
		wake:     make(chan struct{}, 1),
		ackWake:  make(chan struct{}, 1),
		now:      time.Now,
	}
	s.lastActive = s.start
	s.traced, _ = tracerNeeded(&cfg, sch)
	s.life.init()
	s.log.logf = cfg.Logf
	s.obs, _ = sch.(sched.Observer)
	s.robs, _ = sch.(sched.ReceiverObserver)
	s.reinj, _ = sch.(sched.Reinjector)
	if q, ok := sch.(sched.Quick); ok {
		s.quick = q.Quick()
	}
	if !s.quick {
		s.dec.wake = make(chan struct{}, 1) // before any goroutine that pokes it
		s.quickAt, _ = sch.(sched.QuickUntil)
	}
	s.streams.init(s, cfg, isClient)
	if err := s.cc.init(cfg); err != nil {
		return nil, err
	}
	s.snd.init(cfg)
	s.rcv.init(cfg, s.start)
	s.credits.pokeAt = max(s.rcv.window/16, 1)
	return s, nil
}

// run launches the session's loop (loop.go), its one session-wide
// goroutine; each path adds its own (path.go).
func (s *Session) run() {
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.loop() }()
	s.runDecider()
}

// Scheduler returns the name of the session's scheduler.
func (s *Session) Scheduler() string { return s.sch.Name() }

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended, or nil while it runs or after a clean end:
// this end's Close once everything it wrote was acknowledged, or the peer's
// Close once everything this end wrote was acknowledged (otherwise
// ErrUnacknowledged with the count). After CloseWithError it is an
// *ApplicationError (Remote tells which end closed).
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeErr
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// fail ends the session with err (a connection error); s.mu must not be held.
func (s *Session) fail(err error) {
	s.mu.Lock()
	s.closeLocked(err, codeForErr(err))
	s.mu.Unlock()
}

// logf queues a message for Config.Logf, which runs outside every lock
// (logq.go); it may be called with s.mu held.
func (s *Session) logf(format string, args ...any) { s.log.printf(format, args...) }

func codeForErr(err error) quic.ApplicationErrorCode {
	switch {
	case err == nil:
		return codeNoError
	case errors.Is(err, ErrFlowControl):
		return codeFlowControl
	case errors.Is(err, ErrProtocol):
		return codeProtocol
	}
	return codeInternal
}

// Close ends the session gracefully: it waits until every byte written on
// every stream (and every stream's end) has been acknowledged, as long as
// acknowledgements keep coming (it gives up after Config.CloseTimeout
// without progress), then sends a last Ack on every path and closes them.
// It returns once the session's goroutines have stopped, with nil if
// everything written was acknowledged; otherwise with an error that says
// how many bytes were not: the close timeout, ErrUnacknowledged when the
// peer closed first, or the error that ended the session. From the moment
// it is called, a Write on any stream (one waiting for room included)
// fails with an error that wraps ErrClosed; a stream's end (Stream.Close)
// is still sent, and paths may still join. Safe for concurrent use; only
// the first close counts.
func (s *Session) Close() error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	s.mu.Lock()
	if s.setStateLocked(lifeFlushing) {
		for _, st := range s.streams.byID {
			st.wgate.signal() // a Write waiting for room fails now (writeErrLocked)
		}
	}
	mark := func() uint64 { return s.snd.ackedBytes + s.snd.pendOff }
	last, lastT := mark(), s.now()
	timedOut := false
	for !s.closed && !s.writtenAckedLocked() {
		now := s.now()
		if m := mark(); m != last {
			last, lastT = m, now
		}
		if now.Sub(lastT) >= s.cfg.CloseTimeout {
			timedOut = true
			break
		}
		if timer == nil {
			timer = time.NewTimer(lastT.Add(s.cfg.CloseTimeout).Sub(now))
		} else {
			timer.Reset(lastT.Add(s.cfg.CloseTimeout).Sub(now))
		}
		acked := s.closeWait.wait()
		s.mu.Unlock()
		select {
		case <-acked: // an Ack, or the session ended
		case <-timer.C:
		}
		s.mu.Lock()
	}
	var err error
	switch {
	case timedOut:
		err = fmt.Errorf("%w (%d bytes never acknowledged)", errCloseTimedOut, s.unackedBytesLocked(0))
	case s.closed && s.closeErr != nil && !s.writtenAckedLocked():
		err = s.closeErr
	}
	ack, paths := s.finalAckLocked()
	s.mu.Unlock()
	// The last Ack goes on every path, outside the lock: SendDatagram
	// blocks while quic-go's datagram queue is full.
	for _, p := range paths {
		_ = p.sendDatagram(ack)
	}
	s.mu.Lock()
	if timedOut {
		s.closeLocked(err, codeCloseTimeout) // the peer must not take this for a clean end
	} else {
		s.closeLocked(nil, codeNoError)
	}
	s.mu.Unlock()
	s.waitClosed()
	return err
}

// LocalAddr is the local address of the session's first current path.
// Once the session has no path left (it ended, or its paths failed), it is
// the local address of the last path it had, as a closed quic-go
// connection keeps its own: never nil. Safe for concurrent use.
func (s *Session) LocalAddr() net.Addr {
	l, _ := s.addrs()
	return l
}

// RemoteAddr is the peer's address on the session's first current path,
// or once the session has no path left, on the last path it had: never
// nil (issue 29: an HTTP/3 handler read it after its session had lost
// every path, and the nil crashed the server). Safe for concurrent use.
func (s *Session) RemoteAddr() net.Addr {
	_, r := s.addrs()
	return r
}

// addrs returns the local and remote addresses of the first current path,
// or the last path's (lastAddr).
func (s *Session) addrs() (local, remote net.Addr) {
	if p := s.anyPath(); p != nil {
		return p.conn.LocalAddr(), p.conn.RemoteAddr()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastAddr.local == nil { // cannot happen: Dial and Accept return sessions with a path
		return closedAddr{}, closedAddr{}
	}
	return s.lastAddr.local, s.lastAddr.remote
}

// pathAddrs is a path's pair of addresses, kept after it is gone.
type pathAddrs struct{ local, remote net.Addr }

// keepAddrs remembers p's addresses as the session's last ones; called
// with s.mu held whenever a path is installed or removed.
func (s *Session) keepAddrs(p *path) {
	s.lastAddr = pathAddrs{p.conn.LocalAddr(), p.conn.RemoteAddr()}
}

// closedAddr stands in for an address that was never known.
type closedAddr struct{}

func (closedAddr) Network() string { return "udp" }
func (closedAddr) String() string  { return "mpquic:unknown" }

func (s *Session) anyPath() *path {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.slots {
		if p != nil {
			return p
		}
	}
	return nil
}
