package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/cc"
	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/pathmgr"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
)

// clientSynopsis is the start of mpquic-client's help.
const clientSynopsis = `usage: mpquic-client -ca CERT.pem [flags] get https://HOST:PORT/PATH [-o OUT]
       mpquic-client -addr HOST:PORT -ca CERT.pem [flags] get PATH [-o OUT]
       mpquic-client -addr HOST:PORT -h3-addr HOST:PORT2 -ca CERT.pem [flags] compare PATH
       mpquic-client -h3-addr HOST:PORT2 -ca CERT.pem [flags] h3-get PATH

Downloads a file from mpquic-server over HTTP/3 (pkg/h3) on a multipath
QUIC session, one path per local address or interface (or one per usable
address, following the interfaces, with -paths auto), checks its SHA-256
against the response's Repr-Digest (without one the file is kept and the
result says "unverified": true; -require-digest fails instead) and prints
one metrics.Result JSON line on stdout, whose "mode" is multipath or
single-path. get's first handshake offers both the session's ALPN and
plain HTTP/3 (h3): a server that speaks only HTTP/3 is answered on that
connection, over the first path alone, with no extra round trip (not with
-paths auto, which needs a session). get takes an https URL (the session goes to its HOST:PORT, or
to -addr if given; the port defaults to 443) or a bare PATH on -addr;
redirects on the same server are followed. http-get is an alias of get,
kept for scripts (it ran HTTP/1.1 over the session, which is retired).
compare runs get over the multipath session and then plain single-path
HTTP/3 (quic-go's http3) on each path in turn (the server's -h3-addr), one
JSON line per run (multipath first) and a summary on stderr; h3-get runs
only the single-path part, on the first of -paths (plain quic-go with its
own NewReno: the baseline without the session).

Flags may come before or after the command. -paths takes local IP
addresses, IP:port or interface names (an interface stands for its first
IPv4 address), comma-separated: one UDP socket is bound per path, the first
carries the session's handshake, the others join while the download runs.
-paths auto (Linux) follows the interfaces over netlink: the first path is
the first usable address (not a -backup interface, lowest interface index),
and a path joins when an interface with a usable address comes up and is
removed when its address or interface goes (200 ms debounce); each event
is one line on stderr and the paths are listed at the end. With auto,
-backup takes interface names or patterns (wwan0,eth2, wwan*, or cellular
for wwan*, wwp*, rmnet*, ppp*).
Verification is never skipped: -ca pins the server's certificate (the
server's -dev-cert DIR/cert.pem) or a CA, checked for -server-name.

Exit status: 0 on success; 1 if the download failed, the server refused
(its message is printed) or the data did not verify; 2 on bad flags (an
unknown -scheduler lists the registered ones); 130 on SIGINT.`

// exitInterrupted is the client's exit status after SIGINT or SIGTERM.
const exitInterrupted = 130 // 128 + SIGINT

// clientOptions are the client's flags.
type clientOptions struct {
	addr, h3Addr   string
	ca, serverName string
	paths, backup  string
	scheduler      string
	coupling       string // session.Config.Coupling: a name of package cc
	renoFriendly   bool   // session.Config.RenoFriendly
	scenario       string
	seed           int64
	capacity       float64 // bits/s
	out            string
	qlog           string
	connectTimeout time.Duration
	timeout        time.Duration
	quiet          bool
	verbose        bool
	recvWindow     int  // bytes
	requireDigest  bool // fail (and remove the file) when the server sends no Repr-Digest
}

// ClientMain is mpquic-client: it runs the command line of os.Args and
// exits the process with the status described in the command's help (-h).
func ClientMain() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := clientRun(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// clientUsage prints the help to w.
func clientUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nFlags:\n", clientSynopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// clientRun is ClientMain without the process: ctx ending is SIGINT.
func clientRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o clientOptions
	fs := flag.NewFlagSet("mpquic-client", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.addr, "addr", "", "server's multipath UDP address, HOST:PORT (default: the URL's)")
	fs.StringVar(&o.h3Addr, "h3-addr", "", "server's single-path baseline UDP address (compare)")
	fs.StringVar(&o.ca, "ca", "", "PEM certificate (or CA) that the server's certificate must verify against")
	fs.StringVar(&o.serverName, "server-name", "localhost", "name the server's certificate must carry (default: the URL's host name if it is not an IP address, else localhost)")
	fs.StringVar(&o.paths, "paths", "", "local IP addresses, IP:port or interface names, comma-separated, one path each, or auto: follow the interfaces (Linux) (default: one path, routing decides)")
	fs.StringVar(&o.backup, "backup", "", "path numbers (from 1) that are backup paths, comma-separated; with -paths auto, interface names or patterns (wwan0,eth2, wwan*, cellular)")
	fs.StringVar(&o.scheduler, "scheduler", sched.DefaultName, "client-side scheduler (the server's decides the download's paths; the result records the server's)")
	fs.StringVar(&o.coupling, "coupling", cc.DefaultName, "coupled congestion control of the client's paths, on top of quic-go's NewReno: "+strings.Join(cc.Names(), ", ")+" (governs what the client sends; the server's -coupling governs a download; docs/coupling.md)")
	fs.BoolVar(&o.renoFriendly, "reno-friendly", false, "TCP-friendly mode for what the client sends: every path's session window reacts to loss as standard Reno (halve, no undo)")
	fs.StringVar(&o.scenario, "scenario", "", "scenario name recorded in the result")
	fs.Int64Var(&o.seed, "seed", 0, "seed recorded in the result")
	fs.Float64Var(&o.capacity, "capacity-bps", 0, "sum of the paths' bottleneck rates recorded in the result, bits/s")
	fs.StringVar(&o.out, "o", "", "output file (default: the file's base name, index.html for a directory; - for standard output, the JSON result then on stderr; /dev/null to discard)")
	fs.StringVar(&o.qlog, "qlog", "", "write one qlog file per path connection into this directory")
	fs.DurationVar(&o.connectTimeout, "connect-timeout", 10*time.Second, "give up if a path's handshake takes longer")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up if the whole download takes longer")
	fs.IntVar(&o.recvWindow, "recv-window", 0, "session receive window (reorder buffer + unread data), bytes (0: session default, 4 MiB)")
	fs.BoolVar(&o.quiet, "q", false, "no progress display")
	fs.BoolVar(&o.verbose, "v", false, "log path events: one line per path that joins or does not, and the mode the server chose")
	fs.BoolVar(&o.requireDigest, "require-digest", false, "fail, and remove the file, when the server sends no Repr-Digest (default: keep the file and report it unverified)")
	bad := func(err error) int {
		fmt.Fprintln(stderr, "mpquic-client:", err)
		fmt.Fprintln(stderr, "run mpquic-client -h for help")
		return exitUsage
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) || err == nil && len(pos) == 1 && pos[0] == "help" {
		clientUsage(stdout, fs)
		return exitOK
	}
	if err != nil {
		return bad(err)
	}
	if len(pos) != 2 {
		return bad(fmt.Errorf("want a command and its target (get URL|PATH, http-get URL|PATH, compare URL|PATH or h3-get PATH), got %q", pos))
	}
	cmd, arg := pos[0], pos[1]
	switch cmd {
	case "get", "http-get", "compare", "h3-get":
	default:
		return bad(fmt.Errorf("unknown command %q (commands: get, http-get, compare, h3-get, help)", cmd))
	}
	if _, err := sched.New(o.scheduler); err != nil {
		return bad(err)
	}
	if _, err := cc.New(o.coupling); err != nil {
		return bad(fmt.Errorf("-coupling: %w", err))
	}
	tgt, err := parseTarget(arg, o.addr)
	if err != nil {
		return bad(err)
	}
	if tgt.host != "" {
		if cmd == "h3-get" {
			return bad(errors.New("h3-get takes a PATH on -h3-addr, not a URL"))
		}
		if o.addr == "" {
			o.addr = tgt.authority
		}
		named := false
		fs.Visit(func(f *flag.Flag) { named = named || f.Name == "server-name" })
		if !named && net.ParseIP(tgt.host) == nil {
			o.serverName = tgt.host
		}
	}
	target := tgt.path
	if err := missingFlags(o.addr == "" && cmd != "h3-get", o.ca == ""); err != nil {
		return bad(err)
	}
	for _, a := range [][2]string{{"-addr", o.addr}, {"-h3-addr", o.h3Addr}} {
		if err := checkAddr(a[0], a[1]); err != nil {
			return bad(err)
		}
	}
	if cmd == "compare" && o.out == stdoutName {
		return bad(errors.New("-o -: compare downloads the file several times; give a file name or /dev/null"))
	}
	if (cmd == "compare" || cmd == "h3-get") && o.h3Addr == "" {
		return bad(fmt.Errorf("%s needs -h3-addr (the server's single-path baseline address)", cmd))
	}
	if cmd != "compare" && cmd != "h3-get" && o.h3Addr != "" {
		return bad(fmt.Errorf("-h3-addr is only used by compare, not %s", cmd))
	}
	if o.connectTimeout <= 0 || o.timeout <= 0 {
		return bad(fmt.Errorf("-connect-timeout %v and -timeout %v: want positive durations", o.connectTimeout, o.timeout))
	}
	if o.recvWindow < 0 {
		return bad(fmt.Errorf("-recv-window %d: want 0 (default) or a positive number of bytes", o.recvWindow))
	}
	var backup []bool
	var backupNames []string
	if isAuto(o.paths) {
		if cmd == "compare" || cmd == "h3-get" {
			return bad(fmt.Errorf("%s needs fixed -paths (it runs single-path QUIC), not auto", cmd))
		}
		backupNames, err = parseBackupNames(o.backup)
	} else {
		backup, err = parseBackup(o.backup)
	}
	if err != nil {
		return bad(err)
	}
	for _, it := range strings.Split(o.paths, ",") {
		if strings.TrimSpace(it) == "" || isAuto(o.paths) {
			continue
		}
		if _, err := pathmgr.ResolvePath(it); err != nil {
			return bad(fmt.Errorf("-paths: %w", err))
		}
	}
	tlsConf, err := certs.ClientPinned(o.ca, o.serverName)
	if err != nil {
		return bad(fmt.Errorf("-ca: %w", err))
	}
	if o.out == "" {
		o.out = localName(target)
	}
	if o.qlog != "" {
		if err := os.MkdirAll(o.qlog, 0o755); err != nil {
			fmt.Fprintln(stderr, "mpquic-client:", err)
			return exitFail
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	logf := func(string, ...any) {}
	if o.verbose {
		logf = log.New(stderr, "mpquic-client: ", log.Lmicroseconds).Printf
	}
	c := &clientCmd{o: o, tgt: tgt, tls: tlsConf, backup: backup, backupNames: backupNames, stdout: stdout, stderr: stderr, logf: logf}
	resultOut := stdout
	if o.out == stdoutName {
		resultOut = stderr // stdout carries the file
	}
	var results []metrics.Result
	switch cmd {
	case "get", "http-get":
		results = []metrics.Result{c.download(ctx, target)}
	case "compare":
		results = c.compare(ctx, target)
	case "h3-get":
		results = []metrics.Result{c.singlePath(ctx, target, 1, strings.TrimSpace(strings.Split(o.paths, ",")[0]))}
	}
	status := exitOK
	for i, r := range results {
		b, _ := json.Marshal(r)
		fmt.Fprintln(resultOut, string(b))
		if r.Error == "" {
			continue
		}
		status = exitFail
		switch {
		case cmd != "compare":
			fmt.Fprintf(stderr, "mpquic-client: %s\n", r.Error)
		case i == 0:
			fmt.Fprintf(stderr, "mpquic-client: multipath: %s\n", r.Error)
		default:
			fmt.Fprintf(stderr, "mpquic-client: single path %d: %s\n", i, r.Error)
		}
		if h := errorHint(r.Error); h != "" {
			fmt.Fprintln(stderr, "mpquic-client:", h)
		}
	}
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded) && status != 0 {
		return exitInterrupted
	}
	return status
}

// parseInterleaved parses flags anywhere among the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parseBackup turns "2,3" into backup flags indexed by path (0-based).
func parseBackup(s string) ([]bool, error) {
	var out []bool
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > sched.MaxPaths {
			return nil, fmt.Errorf("-backup: %q is not a path number from 1 to %d", f, sched.MaxPaths)
		}
		if n == 1 {
			return nil, errors.New("-backup: path 1 carries the session's handshake and cannot be a backup")
		}
		for len(out) < n {
			out = append(out, false)
		}
		out[n-1] = true
	}
	return out, nil
}

// clientCmd is one run of the client.
type clientCmd struct {
	o      clientOptions
	tgt    target // what get fetches
	tls    *tls.Config
	backup []bool
	// backupNames are -backup's interface names and patterns under -paths auto.
	backupNames []string
	stdout      io.Writer // the file, for -o -
	stderr      io.Writer
	logf        func(string, ...any)
}

func (c *clientCmd) meta() mpfile.Meta {
	return mpfile.Meta{Scheduler: c.o.scheduler, Scenario: c.o.scenario, Seed: c.o.seed, CapacityBps: c.o.capacity}
}

// output opens the output file; finish removes it after a failure unless
// it is not a regular file (/dev/null).
func (c *clientCmd) output() (io.Writer, func(ok bool), error) {
	if c.o.out == stdoutName {
		return c.stdout, func(bool) {}, nil
	}
	f, err := os.Create(c.o.out)
	if err != nil {
		return nil, nil, fmt.Errorf("local output file (-o): %w", err)
	}
	return f, func(ok bool) {
		f.Close()
		if fi, err := os.Stat(c.o.out); !ok && err == nil && fi.Mode().IsRegular() {
			os.Remove(c.o.out)
		}
	}, nil
}

// progress is the progress display of a download: update for HTTPGet,
// and done, which ends the bar before anything else is printed.
func (c *clientCmd) progress(label string) (update func(got, size int64), done func()) {
	if c.o.quiet {
		return nil, func() {}
	}
	var p *downloadProgress
	if f, ok := c.stderr.(*os.File); ok {
		p = newDownloadProgress(f, label)
	} else {
		p = &downloadProgress{W: c.stderr, Label: label}
	}
	return p.Update, p.Done
}

// download fetches c.tgt (whose path is target) over HTTP/3 on a new
// multipath session.
func (c *clientCmd) download(ctx context.Context, target string) metrics.Result {
	m := c.meta()
	fail := func(err error) metrics.Result {
		r := mpfile.NewResult(m, mpfile.Download{}, 0, session.Stats{}, nil, interrupted(ctx, err))
		return r
	}
	remote, err := net.ResolveUDPAddr("udp", c.o.addr)
	if err != nil {
		return fail(err)
	}
	var conns []*net.UDPConn // -paths auto: the path manager opens the sockets
	if !isAuto(c.o.paths) {
		if conns, err = pathmgr.ListenPaths(c.o.paths, remote); err != nil {
			return fail(err)
		}
	}
	defer func() {
		for _, pc := range conns {
			pc.Close()
		}
	}()
	pcs := make([]net.PacketConn, len(conns))
	for i, pc := range conns {
		pcs[i] = pc
	}
	w, finish, err := c.output()
	if err != nil {
		return fail(err)
	}
	cfg := &session.Config{Scheduler: c.o.scheduler, QlogDir: c.o.qlog, Logf: c.logf, RecvWindow: c.o.recvWindow,
		Coupling: sessionCoupling(c.o.coupling, c.o.renoFriendly), RenoFriendly: c.o.renoFriendly}
	start := time.Now()
	var s *session.Session
	var auto *autoPaths
	if isAuto(c.o.paths) {
		var stop func()
		if s, auto, stop, err = c.dialAuto(ctx, remote, cfg, start); err == nil {
			defer stop()
		}
	} else {
		var plain *quic.Conn
		s, plain, err = connectAny(ctx, pcs, remote, c.tls, cfg, c.o.connectTimeout)
		if plain != nil {
			return c.plainDownload(ctx, plain, pcs, w, finish, start) // client_plain.go
		}
	}
	if err != nil {
		finish(false)
		return fail(err)
	}
	c.logf("path 1 (from %v): multipath session (%s)", s.LocalAddr(), session.ALPN)
	waitEvents := func() {}
	if c.o.verbose && auto == nil {
		waitEvents = c.logPathEvents(s, pcs)
	}
	defer s.CloseWithError(0, "")
	// Further paths join while the download starts on the first one.
	joinCtx, stopJoin := context.WithCancel(ctx)
	joined := make(chan int, 1)
	var extraBackup []bool
	if len(c.backup) > 1 {
		extraBackup = c.backup[1:]
	}
	go func() {
		joined <- pathmgr.JoinPaths(joinCtx, s, pcs[min(1, len(pcs)):], remote, extraBackup, c.o.connectTimeout, c.logf)
	}()
	defer func() { stopJoin(); <-joined }()
	stopOnCancel := context.AfterFunc(ctx, func() { s.CloseWithError(0, "cancelled: "+context.Cause(ctx).Error()) })
	defer stopOnCancel()
	label := "get " + target
	d, fct, stall, unverified, err := c.timedGet(ctx, start, label, w, func(w io.Writer, update func(got, size int64)) (mpfile.Download, error) {
		return h3Get(ctx, s, c.tgt, w, update)
	})
	finish(err == nil)
	if auto != nil {
		auto.m.Close() // no path comes or goes after the data
	}
	st, series := s.Stats(), s.Series()
	if cerr := s.Close(); cerr != nil && err == nil {
		c.logf("close: %v", cerr)
	}
	waitEvents() // its lines before the summary
	r := mpfile.NewResult(m, d, fct, st, series, err)
	r.MaxStallSec = stall.Seconds()
	r.Mode, r.Unverified = metrics.ModeMultipath, unverified
	if auto != nil {
		auto.finish(st, &r)
		if !c.o.quiet {
			auto.writeTable(c.stderr)
		}
	}
	if d.Server != nil && d.Server.Scheduler != "" {
		if d.Server.Scheduler != c.o.scheduler {
			fmt.Fprintf(c.stderr, "mpquic-client: note: the server schedules with %s (client -scheduler %s); the result records %s\n", d.Server.Scheduler, c.o.scheduler, d.Server.Scheduler)
		}
		r.Scheduler = d.Server.Scheduler
	}
	if !c.o.quiet && err == nil {
		fmt.Fprintf(c.stderr, "%s: %d bytes in %.2f s, %.2f Mbit/s over %s (multipath), %s\n", label, d.Received, fct.Seconds(), r.GoodputBps/1e6, pathCount(st), verdict(unverified))
	}
	return r
}

// interrupted replaces err by the signal or timeout that caused it.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return fmt.Errorf("timed out: %w", err)
	}
	return fmt.Errorf("interrupted: %w", err)
}

func ensureSlash(p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return "/" + p
}
