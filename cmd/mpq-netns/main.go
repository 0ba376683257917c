// Command mpq-netns builds, checks and tears down multipath test networks
// made of Linux network namespaces (package pkg/netem): a client namespace,
// one router namespace per path and a server namespace. It needs root.
//
// Usage:
//
//	mpq-netns up (-spec FILE | -preset NAME) [-backend auto|netem|nfq] [-prefix P] [-delayd PATH] [-v]
//	mpq-netns verify [-prefix P] [-pings N] [-rate-dur D] [-rtt-tol D] [-rate-tol F] [-json]
//	mpq-netns down [-prefix P]
//	mpq-netns exec [-prefix P] -ns client|server|rN -- CMD [ARG...]
//	mpq-netns set-path [-prefix P] N down|up
//	mpq-netns mptcp-setup [-prefix P]
//	mpq-netns presets
//
// The spec file format is documented in pkg/netem/README.md. Every command
// but up finds the topology through the state directory (-state, default
// /run/mpq-netns/PREFIX). Exit status: 0 on success, 1 on failure (verify
// prints every figure out of tolerance), 2 on a usage error.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/mpqsched/mpqsched/pkg/netem"
)

func usage() {
	fmt.Fprint(os.Stderr, `usage: mpq-netns COMMAND [flags]
commands:
  up          -spec FILE | -preset NAME   build the topology (see pkg/netem/README.md)
  verify      measure RTT and rate of every path against the spec
  down        tear everything down (idempotent)
  exec        -ns client|server|rN -- CMD ARGS...   run a command in a namespace
  set-path    N down|up   take path N's client interface down or up
  mptcp-setup enable kernel MPTCP endpoints and limits
  presets     list the preset topologies
common flags: -prefix P (default mpq), -state DIR (default /run/mpq-netns), -v
`)
	os.Exit(2)
}

type common struct {
	prefix string
	state  string
	delayd string
	v      bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.prefix, "prefix", "mpq", "namespace name prefix")
	fs.StringVar(&c.state, "state", "/run/mpq-netns", "state directory")
	fs.StringVar(&c.delayd, "delayd", "", "path of mpq-delayd (nfq backend); default: next to mpq-netns, then $PATH")
	fs.BoolVar(&c.v, "v", false, "print every command run")
}

func (c *common) opts() netem.Options {
	o := netem.Options{StateDir: c.state, DelaydPath: c.delayd}
	if c.v {
		o.Log = os.Stderr
	}
	return o
}

func (c *common) spec() netem.Spec {
	s, err := netem.LoadState(c.opts(), c.prefix)
	if err != nil {
		fail(err)
	}
	return s
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mpq-netns:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	var c common
	c.register(fs)
	switch cmd {
	case "up":
		specPath := fs.String("spec", "", "topology spec file (JSON)")
		preset := fs.String("preset", "", "preset topology name (see presets)")
		backend := fs.String("backend", "", "override the spec's backend: auto, netem or nfq")
		_ = fs.Parse(args)
		var s netem.Spec
		switch {
		case *specPath != "" && *preset == "":
			var err error
			if s, err = netem.LoadSpec(*specPath); err != nil {
				fail(err)
			}
		case *preset != "" && *specPath == "":
			p, ok := netem.Presets[*preset]
			if !ok {
				fail(fmt.Errorf("no preset %q (have %v)", *preset, netem.PresetNames()))
			}
			s = p
		default:
			fail(errors.New("up needs exactly one of -spec and -preset"))
		}
		if flagSet(fs, "prefix") || s.Prefix == "" {
			s.Prefix = c.prefix
		}
		if *backend != "" {
			s.Backend = *backend
		}
		s, err := netem.Up(s, c.opts())
		if err != nil {
			fail(err)
		}
		fmt.Printf("up: %s, %d paths, backend %s, namespaces %v\n", s.Name, len(s.Paths), s.Backend, s.Namespaces())
	case "verify":
		var v netem.VerifyOptions
		fs.IntVar(&v.Pings, "pings", 40, "pings per path (more on lossy paths, so that about 1.5 × -min-replies come back)")
		fs.IntVar(&v.MinReplies, "min-replies", 20, "ping replies needed to judge a path's delay (their median RTT)")
		fs.DurationVar(&v.RateDur, "rate-dur", 2*time.Second, "duration of each rate probe")
		fs.DurationVar(&v.RTTAbsTol, "rtt-tol", 1500*time.Microsecond, "absolute RTT tolerance (the larger of this and -rtt-rel applies)")
		fs.Float64Var(&v.RTTRelTol, "rtt-rel", 0.05, "relative RTT tolerance")
		fs.Float64Var(&v.RateRelTol, "rate-tol", 0.05, "relative rate tolerance")
		asJSON := fs.Bool("json", false, "print the checks as JSON lines")
		_ = fs.Parse(args)
		s := c.spec()
		cs, err := netem.Verify(s, c.opts(), v)
		if *asJSON {
			for _, x := range cs {
				_ = netem.WriteJSON(os.Stdout, x)
			}
		} else {
			fmt.Print(netem.FormatChecks(cs))
		}
		if err != nil {
			fail(err)
		}
		fmt.Println("verify: ok")
	case "down":
		_ = fs.Parse(args)
		if err := netem.DownPrefix(c.prefix, c.opts()); err != nil {
			fail(err)
		}
	case "exec":
		role := fs.String("ns", "client", "namespace role: client, server, r1, r2, …")
		_ = fs.Parse(args)
		err := netem.Exec(c.spec(), *role, fs.Args(), os.Stdin, os.Stdout, os.Stderr)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.ExitCode())
		} else if err != nil {
			fail(err)
		}
	case "set-path":
		_ = fs.Parse(args)
		if fs.NArg() != 2 || (fs.Arg(1) != "up" && fs.Arg(1) != "down") {
			fail(errors.New("usage: set-path N down|up"))
		}
		p, err := strconv.Atoi(fs.Arg(0))
		if err != nil {
			fail(err)
		}
		if err := netem.SetPath(c.spec(), c.opts(), p, fs.Arg(1) == "up"); err != nil {
			fail(err)
		}
	case "mptcp-setup":
		_ = fs.Parse(args)
		if err := netem.MPTCPSetup(c.spec(), c.opts()); err != nil {
			fail(err)
		}
	case "presets":
		for _, n := range netem.PresetNames() {
			b, _ := json.Marshal(netem.Presets[n])
			fmt.Printf("%s\t%s\n", n, b)
		}
	case "_udpsend": // internal: the rate probe's sender, run inside a namespace
		from := fs.String("from", "", "local address")
		to := fs.String("to", "", "destination host:port")
		rate := fs.Float64("rate", 1e6, "send rate, bits/s on L2")
		size := fs.Int("size", 1400, "UDP payload, bytes")
		dur := fs.Duration("for", 2*time.Second, "duration")
		_ = fs.Parse(args)
		if err := netem.UDPSend(*from, *to, *rate, *size, *dur); err != nil {
			fail(err)
		}
	case "_udprecv": // internal: the rate probe's receiver
		addr := fs.String("addr", "", "listen host:port")
		idle := fs.Duration("idle", 500*time.Millisecond, "stop after this long without a datagram")
		max := fs.Duration("max", 10*time.Second, "stop after this long in total")
		skip := fs.Duration("skip", 500*time.Millisecond, "measure from this long after the first datagram")
		_ = fs.Parse(args)
		res, err := netem.UDPRecv(*addr, *idle, *max, *skip, os.Stdout)
		if err != nil {
			fail(err)
		}
		_ = netem.WriteJSON(os.Stdout, res)
	default:
		usage()
	}
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
