// Command mpquic-server serves the files of a directory over multipath QUIC
// sessions (pkg/session): the FILE protocol of package mpfile and HTTP/1.1
// on the session's streams, to any number of concurrent sessions; and,
// with -h3-addr, the same files over plain single-path QUIC (the baseline
// `mpquic-client compare` measures against).
//
// Usage:
//
//	mpquic-server -dir DIR [-addr :4433] [-scheduler minrtt]
//	              (-cert FILE -key FILE | -dev-cert DIR [-name HOST])
//	              [-h3-addr :4434] [-qlog DIR] [-v]
//
// -dev-cert generates a self-signed certificate for -name, writes DIR/cert.pem
// (give it to the client as -ca DIR/cert.pem) and uses it; the key never
// leaves the process. SIGINT or SIGTERM stops accepting, closes every
// session and exits 0. Exit status 2: bad flags (an unknown -scheduler lists
// the registered ones); 1: any other failure.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	_ "github.com/mpqsched/mpqsched/sched/all"
)

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("mpquic-server: ")
	fs := flag.NewFlagSet("mpquic-server", flag.ExitOnError)
	addr := fs.String("addr", ":4433", "UDP address of the multipath listener")
	dir := fs.String("dir", ".", "directory whose files are served")
	schedName := fs.String("scheduler", sched.DefaultName, "packet scheduler of every session (see -list)")
	list := fs.Bool("list", false, "list the registered schedulers and exit")
	certFile := fs.String("cert", "", "TLS certificate chain, PEM")
	keyFile := fs.String("key", "", "TLS private key, PEM")
	devCert := fs.String("dev-cert", "", "generate a self-signed certificate, write DIR/cert.pem for the client's -ca, and use it")
	name := fs.String("name", "localhost", "host name of the -dev-cert certificate (the client's -server-name)")
	h3Addr := fs.String("h3-addr", "", "also serve the files over plain single-path QUIC on this UDP address (baseline)")
	qlog := fs.String("qlog", "", "write one qlog file per path connection into this directory")
	verbose := fs.Bool("v", false, "log every session and request")
	failTO := fs.Duration("failure-timeout", 0, "floor of the no-progress time that marks a path potentially failed (0: session default, 300ms)")
	opportunistic := fs.Bool("opportunistic", false, "opportunistic reinjection: when a client's window blocks new data, send the segments holding it again on a faster path (Linux MPTCP's opportunistic retransmission; see docs/opportunistic.md)")
	segSize := fs.Int("segment-size", 0, "segment payload, bytes (0: session default, 1200; larger segments span QUIC packets once the path MTU allows bigger packets)")
	_ = fs.Parse(os.Args[1:])
	if *list {
		for _, n := range sched.Names() {
			fmt.Println(n)
		}
		return
	}
	if fs.NArg() > 0 {
		usageErr(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if _, err := sched.New(*schedName); err != nil {
		usageErr(err)
	}
	if fi, err := os.Stat(*dir); err != nil || !fi.IsDir() {
		usageErr(fmt.Errorf("-dir %q is not a directory", *dir))
	}
	tlsConf, err := serverTLS(*certFile, *keyFile, *devCert, *name)
	if err != nil {
		usageErr(err)
	}
	if *qlog != "" {
		if err := os.MkdirAll(*qlog, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	cfg := &session.Config{Scheduler: *schedName, QlogDir: *qlog, SegmentSize: *segSize, FailureTimeout: *failTO, OpportunisticReinjection: *opportunistic}
	if err := run(*addr, *dir, *h3Addr, *verbose, cfg, tlsConf); err != nil {
		log.Fatal(err)
	}
}

func usageErr(err error) {
	fmt.Fprintln(os.Stderr, "mpquic-server:", err)
	os.Exit(2)
}

// serverTLS loads -cert/-key or makes the -dev-cert certificate.
func serverTLS(certFile, keyFile, devDir, name string) (*tls.Config, error) {
	switch {
	case devDir != "" && (certFile != "" || keyFile != ""):
		return nil, errors.New("give either -cert/-key or -dev-cert, not both")
	case devDir != "":
		pair, err := certs.SelfSigned(name)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(devDir, 0o755); err != nil {
			return nil, err
		}
		p := filepath.Join(devDir, "cert.pem")
		if err := os.WriteFile(p, pair.CertPEM, 0o644); err != nil {
			return nil, err
		}
		log.Printf("development certificate for %q written to %s (client: -ca %s -server-name %s)", name, p, p, name)
		return pair.Server, nil
	case certFile == "" || keyFile == "":
		return nil, errors.New("TLS needs -cert and -key, or -dev-cert DIR")
	}
	c, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	k, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	pair, err := certs.FromPEM(c, k, name)
	if err != nil {
		return nil, fmt.Errorf("-cert/-key: %w", err)
	}
	return pair.Server, nil
}

func run(addr, dir, h3Addr string, verbose bool, cfg *session.Config, tlsConf *tls.Config) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return err
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return err
	}
	defer pc.Close()
	if verbose {
		cfg.Logf = log.Printf
	}
	ln, err := session.Listen(pc, tlsConf, cfg)
	if err != nil {
		return err
	}
	srv := &mpfile.Server{Dir: dir}
	if verbose {
		srv.Logf = log.Printf
	}
	if h3Addr != "" {
		ha, err := net.ResolveUDPAddr("udp", h3Addr)
		if err != nil {
			return err
		}
		hpc, err := net.ListenUDP("udp", ha)
		if err != nil {
			return err
		}
		defer hpc.Close()
		sp, err := mpfile.ServeSinglePath(hpc, tlsConf, srv.Handler())
		if err != nil {
			return err
		}
		defer sp.Close()
		log.Printf("single-path baseline (%s, ALPN %s) on %v", mpfile.SinglePathProto, mpfile.SinglePathALPN, sp.Addr())
	}
	log.Printf("serving %s on %v (multipath QUIC, scheduler %s; FILE and HTTP on session streams)", dir, ln.Addr(), cfg.Scheduler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case s := <-sig:
		log.Printf("%v: closing %d sessions", s, srv.Sessions())
		signal.Stop(sig)
		if err := srv.Close(); err != nil {
			log.Printf("close: %v", err)
		}
		return nil
	case err := <-errc:
		srv.Close()
		return err
	}
}
