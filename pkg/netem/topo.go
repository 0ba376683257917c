package netem

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options are the host-side settings of Up, Down and friends.
type Options struct {
	StateDir   string    // where the resolved spec, daemon pid files and logs live; default /run/mpq-netns
	DelaydPath string    // the mpq-delayd binary, needed by the nfq backend; default: next to this executable, then $PATH
	ToolPath   string    // the mpq-netns binary, run inside namespaces by Verify; default: this executable
	Log        io.Writer // receives every command run; nil: silent
}

func (o Options) stateDir(prefix string) string {
	d := o.StateDir
	if d == "" {
		d = "/run/mpq-netns"
	}
	return filepath.Join(d, prefix)
}

// LoadState returns the spec that Up recorded for prefix (with the backend
// resolved), or an error if no topology with that prefix is up.
func LoadState(o Options, prefix string) (Spec, error) {
	b, err := os.ReadFile(filepath.Join(o.stateDir(prefix), "spec.json"))
	if err != nil {
		return Spec{}, fmt.Errorf("netem: no topology %q is up (%w)", prefix, err)
	}
	return ParseSpec(b)
}

// nsExists reports whether a named network namespace exists.
func nsExists(name string) bool {
	_, err := os.Stat(filepath.Join("/run/netns", name))
	return err == nil
}

// Up creates the namespaces, links, routes and impairments of s. On any
// failure it tears down what it built and returns the error. It needs root.
// It returns the spec as built, with the backend resolved.
func Up(s Spec, o Options) (Spec, error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return s, err
	}
	if os.Geteuid() != 0 {
		return s, errors.New("netem: Up needs root")
	}
	for _, n := range s.Namespaces() {
		if nsExists(n) {
			return s, fmt.Errorf("netem: namespace %s already exists; run `mpq-netns down -prefix %s` first", n, s.Prefix)
		}
	}
	r := runner{log: o.Log}
	if s.Backend == BackendAuto {
		b, err := DetectBackend(s.Prefix, o)
		if err != nil {
			return s, err
		}
		s.Backend = b
	}
	if s.Backend == BackendNFQ {
		p, err := o.delayd()
		if err != nil {
			return s, err
		}
		o.DelaydPath = p
	}
	if err := os.MkdirAll(o.stateDir(s.Prefix), 0o755); err != nil {
		return s, err
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(filepath.Join(o.stateDir(s.Prefix), "spec.json"), b, 0o644); err != nil {
		return s, err
	}
	if err := build(r, s, o); err != nil {
		_ = Down(s, o)
		return s, err
	}
	return s, nil
}

func build(r runner, s Spec, o Options) error {
	nl := newNlink(r.log)
	defer nl.close()
	for _, n := range s.Namespaces() {
		if _, err := r.run("ip", "netns", "add", n); err != nil {
			return err
		}
		if err := nl.setLink(n, "lo", true); err != nil {
			return err
		}
	}
	cl, sv := s.ClientNS(), s.ServerNS()
	for p := 1; p <= len(s.Paths); p++ {
		if err := buildPath(r, nl, s, p); err != nil {
			return err
		}
	}
	if err := nl.addAddr(sv, ServerAddr+"/32", "lo"); err != nil {
		return err
	}
	if err := nl.route(cl, false, "10.20.0.0/16", routerClientAddr(1), ClientDev(1), 0); err != nil {
		return err
	}
	for _, n := range []string{cl, sv} {
		if _, err := r.ns(n, "sysctl", "-qw", "net.ipv4.tcp_congestion_control="+s.TCPCC); err != nil {
			return err
		}
	}
	for p := 1; p <= len(s.Paths); p++ {
		for _, c2s := range []bool{true, false} {
			if err := shape(r, s, o, p, c2s); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildPath joins path p's router to the client and the server with veth
// pairs, addresses and routes them, and turns segmentation offloads off.
func buildPath(r runner, nl *nlink, s Spec, p int) error {
	cl, sv, rt := s.ClientNS(), s.ServerNS(), s.RouterNS(p)
	table := 100 + p
	devs := [][2]string{{cl, ClientDev(p)}, {rt, routerClientDev(p)}, {rt, routerServerDev(p)}, {sv, ServerDev(p)}}
	steps := []func() error{
		func() error { return nl.veth(cl, ClientDev(p), rt, routerClientDev(p)) },
		func() error { return nl.veth(sv, ServerDev(p), rt, routerServerDev(p)) },
		func() error { return nl.addAddr(cl, ClientAddr(p)+"/24", ClientDev(p)) },
		func() error { return nl.addAddr(rt, routerClientAddr(p)+"/24", routerClientDev(p)) },
		func() error { return nl.addAddr(rt, routerServerAddr(p)+"/24", routerServerDev(p)) },
		func() error { return nl.addAddr(sv, ServerPathAddr(p)+"/24", ServerDev(p)) },
	}
	for _, d := range devs {
		steps = append(steps, func() error { return nl.setLink(d[0], d[1], true) })
	}
	steps = append(steps,
		func() error { _, err := r.ns(rt, "sysctl", "-qw", "net.ipv4.ip_forward=1"); return err },
		func() error { return nl.route(rt, false, ServerAddr+"/32", ServerPathAddr(p), "", 0) },
		func() error { return nl.route(sv, false, fmt.Sprintf("10.10.%d.0/24", p), routerServerAddr(p), "", 0) },
		func() error { return nl.ruleFrom(cl, ClientAddr(p), table) },
		func() error { return nl.route(cl, false, "default", routerClientAddr(p), ClientDev(p), table) },
	)
	// No segmentation offloads: loss and the queue must see real packets.
	for _, d := range devs {
		steps = append(steps, func() error {
			_, err := r.ns(d[0], "ethtool", "-K", d[1], "tso", "off", "gso", "off", "gro", "off", "tx-udp-segmentation", "off")
			return err
		})
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// Down tears the topology of s down: it stops every process left in its
// namespaces (including the mpq-delayd daemons), deletes the namespaces
// (and with them every link, qdisc and iptables rule) and the state
// directory. It is idempotent: missing pieces are not errors.
func Down(s Spec, o Options) error {
	s = s.WithDefaults()
	r := runner{log: o.Log}
	var errs []error
	for _, n := range s.Namespaces() {
		if !nsExists(n) {
			continue
		}
		if err := killNS(r, n); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range s.Namespaces() {
		if !nsExists(n) {
			continue
		}
		if _, err := r.run("ip", "netns", "del", n); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(o.stateDir(s.Prefix)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// DownPrefix tears down whatever topology with the given prefix is recorded
// in the state directory, or, without state, the namespaces named
// <prefix>-client, <prefix>-server and <prefix>-r1..r8.
func DownPrefix(prefix string, o Options) error {
	s, err := LoadState(o, prefix)
	if err != nil {
		s = Spec{Prefix: prefix, Paths: make([]Path, MaxPaths)}
	}
	return Down(s, o)
}

// killNS sends SIGTERM to every process in namespace n, waits up to 2 s, then
// sends SIGKILL to the survivors. Only processes inside the namespace are
// touched: they were started in a namespace this package created.
func killNS(r runner, n string) error {
	pids := func() []int {
		out, err := runner{}.run("ip", "netns", "pids", n)
		if err != nil {
			return nil
		}
		var ps []int
		for _, f := range strings.Fields(out) {
			if p, err := strconv.Atoi(f); err == nil && p != os.Getpid() {
				ps = append(ps, p)
			}
		}
		return ps
	}
	ps := pids()
	if len(ps) == 0 {
		return nil
	}
	if r.log != nil {
		fmt.Fprintf(r.log, "+ kill -TERM %v (processes in %s)\n", ps, n)
	}
	for _, p := range ps {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	for i := 0; i < 40; i++ {
		time.Sleep(50 * time.Millisecond)
		if len(pids()) == 0 {
			return nil
		}
	}
	for _, p := range pids() {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return nil
}

// SetPath takes path p's client interface down (up=false), as when a radio
// disappears, or brings it back up and restores its routes (up=true).
func SetPath(s Spec, o Options, p int, up bool) error {
	s = s.WithDefaults()
	if p < 1 || p > len(s.Paths) {
		return fmt.Errorf("%w: %d (have 1..%d)", errNoPath, p, len(s.Paths))
	}
	nl := newNlink(o.Log)
	defer nl.close()
	cl := s.ClientNS()
	if err := nl.setLink(cl, ClientDev(p), up); err != nil || !up {
		return err
	}
	if err := nl.route(cl, true, "default", routerClientAddr(p), ClientDev(p), 100+p); err != nil {
		return err
	}
	if p == 1 {
		return nl.route(cl, true, "10.20.0.0/16", routerClientAddr(1), ClientDev(1), 0)
	}
	return nil
}

// MPTCPSetup enables kernel MPTCP in the client and server namespaces: limits
// of len(paths) subflows and accepted addresses on both ends, and a
// "subflow" endpoint on the client for every path but the first (the first
// carries the initial subflow).
func MPTCPSetup(s Spec, o Options) error {
	s = s.WithDefaults()
	r := runner{log: o.Log}
	n := strconv.Itoa(len(s.Paths))
	cmds := [][]string{}
	for _, ns := range []string{s.ClientNS(), s.ServerNS()} {
		cmds = append(cmds,
			[]string{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.mptcp.enabled=1"},
			[]string{"ip", "-n", ns, "mptcp", "endpoint", "flush"},
			[]string{"ip", "-n", ns, "mptcp", "limits", "set", "subflows", n, "add_addr_accepted", n},
		)
	}
	for p := 2; p <= len(s.Paths); p++ {
		cmds = append(cmds, []string{"ip", "-n", s.ClientNS(), "mptcp", "endpoint", "add", ClientAddr(p), "dev", ClientDev(p), "subflow"})
	}
	return r.all(cmds...)
}

// Exec runs argv inside the namespace of role ("client", "server", "r1", …),
// connected to this process's standard streams, and returns its error.
func Exec(s Spec, role string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ns, err := s.NS(role)
	if err != nil {
		return err
	}
	if len(argv) == 0 {
		return errors.New("netem: exec: no command")
	}
	cmd := execCommand("ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	return cmd.Run()
}
