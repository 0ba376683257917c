// Command mpq-attack runs the hostile-peer attacks of issue 10 against an
// mpquic-server on this host (loopback only), bounded in sessions, bytes
// and time, and prints one JSON line: what the attack sent, what the
// server did to it, and (with -pid) the server process's peak RSS, CPU time
// and threads read from /proc while the attack ran.
//
//	mpq-attack overlap  -addr 127.0.0.1:4433 -ca cert.pem -pid PID [-sessions 2 -duration 20s -max-bytes 1200000000]
//	mpq-attack ackreq   -addr ... -ca ... -pid PID [-sessions 2 -duration 20s -rate 1000 -holes 31]
//	mpq-attack window   -addr ... -ca ... -pid PID -file big [-sessions 10 -duration 20s]
//	mpq-attack wideack  -addr ... -ca ... -pid PID -file big [-sessions 2 -duration 10s -rate 1000]   Acks naming every segment again and again
//	mpq-attack idle     -addr ... -ca ... [-sessions 100 -duration 20s]
//	mpq-attack joins    -addr ... -ca ... [-forged 20]
//	mpq-attack initials -addr ... -ca ... -pid PID [-count 10000 -garbage 10000 -sessions 64 -duration 3s]
//	mpq-attack initials -inproc DIR [...]   serve DIR in this process and flood it (goroutines counted)
//	mpq-attack h3-second-control -addr ... -ca ... [-sessions 2]   two HTTP/3 control streams (want close 0x103)
//	mpq-attack h3-data-first     -addr ... -ca ... [-sessions 2]   DATA before HEADERS (want close 0x105)
//	mpq-attack h3-big-headers    -addr ... -ca ... [-sessions 2 -file big]   a field section past the server's limit (want 431)
//	mpq-attack h3-cancel         -addr ... -ca ... -pid PID [-sessions 1 -requests 10000 -file big]   requests cancelled at once
//
// The HTTP/3 attacks (protocol version 3) make one round per session and
// report the server's answers in h3_answers (e.g. "close 0x103": the
// session closed with that H3 code; "status 431"; "stop 0x107").
//
// The source uses only what every version of pkg/wire has, so a copy of
// this directory builds in an older checkout to measure the server before
// a fix (see SECURITY.md). Exit 0 after an attack, 1 if it could not run,
// 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/mpqsched/mpqsched/cmd/mpq-attack/attack"
	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Bounds of the flags.
const (
	maxDuration = time.Minute
	maxSessions = 1000
	maxCount    = 100000
)

// simpleAttacks are the attacks that need nothing beyond Options.
var simpleAttacks = map[string]func(context.Context, attack.Options) attack.Result{
	"overlap":           attack.Overlap,
	"ackreq":            attack.AckReqs,
	"wideack":           attack.WideAcks,
	"window":            attack.Window,
	"idle":              attack.Idle,
	"h3-second-control": attack.H3SecondControl,
	"h3-data-first":     attack.H3DataFirst,
	"h3-big-headers":    attack.H3BigHeaders,
	"h3-cancel":         attack.H3Cancel,
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "mpq-attack: "+format+"\n", a...)
		fmt.Fprintln(stderr, "usage: mpq-attack overlap|ackreq|wideack|window|idle|joins|initials|h3-second-control|h3-data-first|h3-big-headers|h3-cancel [flags]; mpq-attack CMD -h")
		return 2
	}
	if len(args) == 0 {
		return bad("no attack given")
	}
	cmd := args[0]
	fs := flag.NewFlagSet("mpq-attack "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:4433", "the server's UDP address (loopback only)")
	ca := fs.String("ca", "", "the server's certificate, PEM (mpquic-server -dev-cert DIR/cert.pem)")
	name := fs.String("server-name", "localhost", "the certificate's host name")
	pid := fs.Int("pid", 0, "server process to sample in /proc while attacking (0: none)")
	sessions := fs.Int("sessions", 2, fmt.Sprintf("hostile sessions at once (initials: source sockets), 1..%d", maxSessions))
	dur := fs.Duration("duration", 20*time.Second, fmt.Sprintf("how long to attack, up to %v", maxDuration))
	maxBytes := fs.Int64("max-bytes", 1200<<20, "overlap: payload bytes per session at most")
	file := fs.String("file", "big", "window: the file to request")
	rate := fs.Int("rate", 1000, "ackreq: AckReqs per second per session (0: as fast as QUIC takes them); wideack: Acks per second per session")
	holes := fs.Int("holes", 31, fmt.Sprintf("ackreq: holes spread over the receive window, 1..%d (31: a per-sequence-number scan reads the whole window per Ack; %d: the most ranges)", attack.MaxHoles, attack.MaxHoles))
	forged := fs.Int("forged", 20, "joins: forged joins to try")
	count := fs.Int("count", 10000, fmt.Sprintf("initials: genuine Initials to send, 0..%d", maxCount))
	garbage := fs.Int("garbage", 10000, fmt.Sprintf("initials: garbage Initial-shaped datagrams to send, 0..%d", maxCount))
	requests := fs.Int("requests", 10000, fmt.Sprintf("h3-cancel: requests opened and cancelled per session, 1..%d", attack.MaxRequests))
	inproc := fs.String("inproc", "", "initials: serve this directory in this process on 127.0.0.1:0 and flood that (goroutines are counted)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected arguments %q", fs.Args())
	case *sessions < 1 || *sessions > maxSessions:
		return bad("-sessions %d: want 1..%d", *sessions, maxSessions)
	case *dur <= 0 || *dur > maxDuration:
		return bad("-duration %v: want up to %v", *dur, maxDuration)
	case *count < 0 || *count > maxCount || *garbage < 0 || *garbage > maxCount:
		return bad("-count and -garbage: want 0..%d", maxCount)
	case *rate < 0 || *rate > 1000000:
		return bad("-rate %d: want 0..1000000", *rate)
	case *holes < 1 || *holes > attack.MaxHoles:
		return bad("-holes %d: want 1..%d", *holes, attack.MaxHoles)
	case *forged < 0 || *forged > maxCount:
		return bad("-forged %d: want 0..%d", *forged, maxCount)
	case *requests < 1 || *requests > attack.MaxRequests:
		return bad("-requests %d: want 1..%d", *requests, attack.MaxRequests)
	}
	ua, err := net.ResolveUDPAddr("udp", *addr)
	if err != nil {
		return bad("-addr: %v", err)
	}
	o := attack.Options{Addr: ua, Sessions: *sessions, Duration: *dur, MaxBytes: *maxBytes, File: *file, Rate: *rate, Holes: *holes, Requests: *requests}
	ctx := context.Background()
	if *inproc != "" {
		if cmd != "initials" {
			return bad("-inproc is for initials")
		}
		stop, err := serveInproc(*inproc, &o)
		if err != nil {
			fmt.Fprintln(stderr, "mpq-attack:", err)
			return 1
		}
		defer stop()
	} else {
		if *ca == "" {
			return bad("-ca FILE is needed")
		}
		if o.TLS, err = certs.ClientPinned(*ca, *name); err != nil {
			return bad("-ca: %v", err)
		}
	}
	if err := attack.CheckLoopback(ua); err != nil && *inproc == "" {
		return bad("%v", err)
	}
	var initials [][]byte
	if cmd == "initials" {
		if initials, err = attack.CaptureInitials(ctx, o, *count); err != nil {
			fmt.Fprintln(stderr, "mpq-attack:", err)
			return 1
		}
	}
	var s *attack.Sampler
	if *pid > 0 || *inproc != "" {
		s = attack.Sample(*pid, 50*time.Millisecond)
	}
	var res attack.Result
	switch run := simpleAttacks[cmd]; {
	case run != nil:
		res = run(ctx, o)
	case cmd == "joins":
		res, err = attack.Joins(ctx, o, *forged)
	case cmd == "initials":
		res, err = attack.Initials(ctx, o, initials, *garbage)
		if err == nil {
			time.Sleep(2 * time.Second) // what the flood left behind
		}
	default:
		return bad("unknown attack %q", cmd)
	}
	out := struct {
		attack.Result
		Version int           `json:"protocol_version"`
		Server  *attack.Usage `json:"server,omitempty"`
	}{Result: res, Version: attack.Version()}
	if s != nil {
		u := s.Stop()
		out.Server = &u
	}
	b, _ := json.Marshal(out)
	fmt.Fprintln(stdout, string(b))
	if err != nil {
		fmt.Fprintln(stderr, "mpq-attack:", err)
		return 1
	}
	return 0
}

// serveInproc serves dir over HTTP/3 on multipath sessions, as
// mpquic-server does, on 127.0.0.1:0 in this process with a fresh
// self-signed certificate (session defaults), and points o at it.
func serveInproc(dir string, o *attack.Options) (func(), error) {
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	ln, err := session.Listen(pc, pair.Server, nil)
	if err != nil {
		pc.Close()
		return nil, err
	}
	hs := &h3.Server{Handler: &mpfile.Files{Dir: dir}}
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(h3.SessionListener(ln)) }()
	o.Addr = pc.LocalAddr().(*net.UDPAddr)
	o.TLS = pair.Client
	return func() { hs.Close(); <-done; pc.Close() }, nil
}
