package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mpqsched/mpqsched/pkg/cc"
	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
)

// serverSynopsis is the first line of mpquic-server's help.
const serverSynopsis = `usage: mpquic-server -dir DIR [-addr :4433] [-scheduler minrtt [-edar-model FILE]]
                     [-coupling none|lia|olia|balia|reno-friendly] [-reno-friendly]
                     (-cert FILE -key FILE | -dev-cert DIR [-name HOST])
                     [-h3-addr :4434] [-qlog DIR] [-v] [limits]

Serves the files of DIR over HTTP/3 (pkg/h3) on multipath QUIC sessions,
to any number of concurrent sessions: GET and HEAD with Range and
conditional requests, a Repr-Digest (SHA-256) header on every 200, and
/.mpq/stats (the session's sender counters). The same -addr serves any
plain HTTP/3 client (ALPN h3: browsers, curl, quic-go, ngtcp2) with the
same handler and limits, its responses advertising multipath by Alt-Svc;
-v logs each connection and every handshake refused for want of a common
ALPN. With -h3-addr, also over plain single-path HTTP/3 with quic-go's own
http3 (the baseline of mpquic-client compare, kept to measure that
implementation rather than this one). The FILE protocol and HTTP/1.1 on
the session's streams are retired. The server's
scheduler decides the paths of every download, and its -coupling (and
-reno-friendly) the congestion response of every path that carries one
(docs/coupling.md). -dev-cert DIR makes a self-signed certificate for
-name once, keeps it in DIR/cert.pem and DIR/key.pem (mode 0600) and reuses
it on later starts while it is valid for -name, so the client's pinned
-ca DIR/cert.pem stays good. SIGINT or SIGTERM stops accepting, closes
every session and exits 0. Exit status 2: bad flags (an unknown -scheduler
lists the registered ones); 1: any other failure.`

// serverOptions are mpquic-server's flags.
type serverOptions struct {
	addr, dir, h3Addr, qlog string
	scheduler, edarModel    string
	policy                  string // -policy, for -scheduler learned
	certFile, keyFile       string
	devCert, name           string
	list, verbose           bool
	opportunistic           bool
	datagramData            bool   // session.Config.DatagramData
	coupling                string // session.Config.Coupling: a name of package cc
	renoFriendly            bool   // session.Config.RenoFriendly
	failureTimeout          time.Duration
	segmentSize             int // bytes
	limits                  serverLimits
}

// ServerMain is mpquic-server: it serves until SIGINT or SIGTERM and exits
// the process with the status described in the command's help (-h).
func ServerMain() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := serverRun(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// serverRun is ServerMain without the process: it serves until ctx ends
// (a signal) and returns the exit status.
func serverRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o serverOptions
	fs := flag.NewFlagSet("mpquic-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.addr, "addr", ":4433", "UDP address of the multipath listener")
	fs.StringVar(&o.dir, "dir", ".", "directory whose files are served")
	fs.StringVar(&o.scheduler, "scheduler", sched.DefaultName, "packet scheduler of every session (see -list)")
	fs.StringVar(&o.edarModel, "edar-model", "", "EdAR model file for -scheduler edar (the repository ships testdata/edar.onnx)")
	fs.StringVar(&o.policy, "policy", "", "ONNX policy exported by python/mpqgym, for -scheduler learned")
	fs.BoolVar(&o.list, "list", false, "list the registered schedulers and exit")
	fs.StringVar(&o.certFile, "cert", "", "TLS certificate chain, PEM")
	fs.StringVar(&o.keyFile, "key", "", "TLS private key, PEM")
	fs.StringVar(&o.devCert, "dev-cert", "", "use a self-signed certificate kept in DIR (cert.pem for the client's -ca, key.pem), made on the first start")
	fs.StringVar(&o.name, "name", "localhost", "host name of the -dev-cert certificate (the client's -server-name)")
	fs.StringVar(&o.h3Addr, "h3-addr", "", "also serve the files over plain single-path QUIC on this UDP address (baseline)")
	fs.StringVar(&o.qlog, "qlog", "", "write one qlog file per path connection into this directory")
	fs.BoolVar(&o.verbose, "v", false, "log every session and request")
	fs.DurationVar(&o.failureTimeout, "failure-timeout", 0, "floor of the no-progress time that marks a path potentially failed (0: session default, 300ms)")
	fs.BoolVar(&o.opportunistic, "opportunistic", false, "opportunistic reinjection: when a client's window blocks new data, send the segments holding it again on a faster path (Linux MPTCP's opportunistic retransmission; see docs/opportunistic.md)")
	fs.StringVar(&o.coupling, "coupling", cc.DefaultName, "coupled congestion control of each session's paths, on top of quic-go's NewReno: "+strings.Join(cc.Names(), ", ")+" (docs/coupling.md)")
	fs.BoolVar(&o.renoFriendly, "reno-friendly", false, "TCP-friendly mode: every path's session window reacts to loss as standard Reno (halve, no undo), even on one path; alone it is -coupling reno-friendly")
	fs.BoolVar(&o.datagramData, "datagram-data", false, "send each session's segments in QUIC datagrams, with the session's own loss detection, instead of each path's QUIC stream (session.Config.DatagramData; experimental, docs/data-plane.md)")
	fs.IntVar(&o.segmentSize, "segment-size", 0, "segment payload, bytes (0: session default, 1216; larger segments span QUIC packets once the path MTU allows bigger packets)")
	o.limits.register(fs)
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "%s\n\nFlags:\n", serverSynopsis)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	bad := func(err error) int {
		fmt.Fprintln(stderr, "mpquic-server:", err)
		fmt.Fprintln(stderr, "run mpquic-server -h for help")
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return exitOK
		}
		return bad(err)
	}
	if o.list {
		for _, n := range sched.Names() {
			fmt.Fprintln(stdout, n)
		}
		return exitOK
	}
	if fs.NArg() > 0 {
		return bad(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if o.failureTimeout < 0 {
		return bad(fmt.Errorf("-failure-timeout %v: want 0 (default) or a positive duration", o.failureTimeout))
	}
	if o.segmentSize < 0 {
		return bad(fmt.Errorf("-segment-size %d: want 0 (default) or a positive number of bytes", o.segmentSize))
	}
	if _, err := cc.New(o.coupling); err != nil {
		return bad(fmt.Errorf("-coupling: %w", err))
	}
	if err := o.limits.check(); err != nil {
		return bad(err)
	}
	if fi, err := os.Stat(o.dir); err != nil || !fi.IsDir() {
		return bad(fmt.Errorf("-dir %q is not a directory", o.dir))
	}
	logger := log.New(stderr, "mpquic-server: ", log.LstdFlags|log.Lmicroseconds)
	cfg := &session.Config{Scheduler: o.scheduler, QlogDir: o.qlog, SegmentSize: o.segmentSize,
		FailureTimeout: o.failureTimeout, OpportunisticReinjection: o.opportunistic, DatagramData: o.datagramData,
		Coupling: sessionCoupling(o.coupling, o.renoFriendly), RenoFriendly: o.renoFriendly}
	if err := serverScheduler(cfg, o.scheduler, o.edarModel, func(s string) { logger.Print(s) }); err != nil {
		return bad(err)
	}
	if err := serverPolicy(cfg, o.scheduler, o.policy, func(s string) { logger.Print(s) }); err != nil {
		return bad(err)
	}
	tlsConf, err := serverTLS(o.certFile, o.keyFile, o.devCert, o.name, logger.Printf)
	if err != nil {
		return bad(err)
	}
	if o.qlog != "" {
		if err := os.MkdirAll(o.qlog, 0o755); err != nil {
			logger.Print(err)
			return exitFail
		}
	}
	if o.verbose {
		cfg.Logf = logger.Printf
	}
	files := &mpfile.Files{Dir: o.dir}
	limits := o.limits.apply(files, cfg, logger.Printf)
	var logf func(string, ...any)
	if o.verbose {
		logf = logger.Printf
	}
	if err := serve(ctx, o, cfg, files, limits, tlsConf, logger, logf); err != nil {
		logger.Print(err)
		return exitFail
	}
	return exitOK
}

// sessionCoupling is session.Config.Coupling for -coupling name and
// -reno-friendly: the session reads RenoFriendly only when Coupling is
// empty, so "none" (the flag's default) with -reno-friendly becomes
// "reno-friendly"; a coupled rule keeps its name and RenoFriendly goes
// along with it.
func sessionCoupling(name string, renoFriendly bool) string {
	if renoFriendly && (name == "" || name == cc.NameNone) {
		return cc.NameRenoFriendly
	}
	return name
}

// serve serves files over HTTP/3 on the multipath listener (and on the
// baseline) until ctx ends or serving fails; reached limits go to limits;
// logf, if not nil, logs every session and request.
func serve(ctx context.Context, o serverOptions, cfg *session.Config, files *mpfile.Files, limits *rateLog, tlsConf *tls.Config, logger *log.Logger, logf func(string, ...any)) error {
	ua, err := net.ResolveUDPAddr("udp", o.addr)
	if err != nil {
		return err
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return err
	}
	defer pc.Close()
	ln, err := listenOnePort(pc, tlsConf, cfg)
	if err != nil {
		return err
	}
	if o.h3Addr != "" {
		ha, err := net.ResolveUDPAddr("udp", o.h3Addr)
		if err != nil {
			ln.Close()
			return err
		}
		hpc, err := net.ListenUDP("udp", ha)
		if err != nil {
			ln.Close()
			return err
		}
		defer hpc.Close()
		sp, err := serveSinglePath(hpc, tlsConf, fileHandler(files, logf))
		if err != nil {
			ln.Close()
			return err
		}
		defer sp.Close()
		logger.Printf("single-path baseline (%s, ALPN %s) on %v", singlePathProto, singlePathALPN, sp.Addr())
	}
	logger.Printf("serving %s on %v (multipath QUIC, scheduler %s, coupling %s, reno-friendly %v; HTTP/3 on the session, and plain HTTP/3 (ALPN h3) on the same port, advertising multipath by Alt-Svc)", o.dir, ln.Addr(), o.scheduler, o.coupling, o.renoFriendly)
	hl := &h3sessionListener{ln: ln, logf: logf}
	hs := newH3Server(serverHandler(files, logf), o.limits, limits)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(hl) }()
	select {
	case <-ctx.Done():
		logger.Printf("%v: closing %d sessions", context.Cause(ctx), hl.sessions.Load())
		if err := hs.Close(); err != nil {
			logger.Printf("close: %v", err)
		}
		<-errc
		return nil
	case err := <-errc:
		hs.Close()
		if errors.Is(err, h3.ErrServerClosed) || errors.Is(err, session.ErrClosed) {
			return nil
		}
		return err
	}
}
