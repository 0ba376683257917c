package netns

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/netem"
)

// The shared-bottleneck topology of issue 12 ("two client paths (20 and 60
// ms RTT) and one competing client (20 ms) shared one 20 Mbit/s tbf
// bottleneck (drop-tail, 50 ms queue)"), built on pkg/netem's three-path
// topology:
//
//	client ─c1─ r1 (10 ms each way) ─s1─┐
//	client ─c2─ r2 (30 ms each way) ─s2─┤ split ─spb──bsp─ bn ─bv──sv0─ server
//	client ─c3─ r3 (10 ms each way) ─s3─┘        tbf 20 Mbit/s, 50 ms, on bsp
//
// netem.Up builds the client, the routers (delay only, mpq-delayd) and the
// server with s1..s3; the server's s1..s3 then move into a splitter
// namespace, and the server reaches the splitter through a bottleneck
// namespace whose egress towards the clients (bsp) is the one tbf queue
// every download crosses. Paths 1 and 2 are the multipath flow's (its
// client binds 10.10.1.2 and 10.10.2.2), path 3 the competitor's
// (10.10.3.2): they share the client namespace but not an interface, so
// the client's rx counters of c1+c2 and c3 split the bottleneck's output
// between them. Uploads (requests, ACKs) cross the bottleneck unshaped.
const (
	sharedPrefix    = "mpqsb"
	sharedRateMbit  = 20    // bottleneck rate, Mbit/s on L2 frames
	sharedQueueMs   = 50    // tbf latency: the drop-tail queue, ms at the rate
	sharedBurst     = 20000 // tbf burst, bytes (as pkg/netem's nfq backend)
	competitorPath  = 3     // the competing TCP flow's path
	sharedSplitName = "split"
	sharedBnName    = "bn"
)

// sharedEnv is the shared-bottleneck topology, up.
type sharedEnv struct {
	*env
	split, bn string // namespaces of the splitter and the bottleneck
}

// sharedSpec is the netem part: three delay-only paths.
func sharedSpec() netem.Spec {
	return netem.Spec{
		Name:   "shared-bottleneck",
		Prefix: sharedPrefix,
		Paths: []netem.Path{
			{Name: "p20", Link: &netem.Link{DelayMs: 10}},
			{Name: "p60", Link: &netem.Link{DelayMs: 30}},
			{Name: "competitor", Link: &netem.Link{DelayMs: 10}},
		},
	}
}

// upShared builds the topology and registers its teardown (before netem's).
func upShared(t *testing.T, bin, data, certDir string) *sharedEnv {
	t.Helper()
	split, bn := sharedPrefix+"-"+sharedSplitName, sharedPrefix+"-"+sharedBnName
	delNS(split, bn) // leftovers of an interrupted run
	e := up(t, sharedSpec(), bin, data, certDir)
	se := &sharedEnv{env: e, split: split, bn: bn}
	t.Cleanup(func() { delNS(split, bn) })
	sv := e.spec.ServerNS()
	cmds := [][]string{
		{"ip", "netns", "add", split},
		{"ip", "netns", "add", bn},
		{"ip", "-n", split, "link", "set", "dev", "lo", "up"},
		{"ip", "-n", bn, "link", "set", "dev", "lo", "up"},
		{"ip", "netns", "exec", split, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		{"ip", "netns", "exec", bn, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
	}
	for p := 1; p <= len(e.spec.Paths); p++ {
		dev := netem.ServerDev(p)
		cmds = append(cmds,
			[]string{"ip", "-n", sv, "link", "set", "dev", dev, "netns", split},
			[]string{"ip", "-n", split, "addr", "add", netem.ServerPathAddr(p) + "/24", "dev", dev},
			[]string{"ip", "-n", split, "link", "set", "dev", dev, "up"},
			[]string{"ip", "-n", split, "route", "add", fmt.Sprintf("10.10.%d.0/24", p), "via", fmt.Sprintf("10.20.%d.1", p)},
		)
	}
	cmds = append(cmds,
		[]string{"ip", "link", "add", "name", "sv0", "netns", sv, "type", "veth", "peer", "name", "bv", "netns", bn},
		[]string{"ip", "link", "add", "name", "bsp", "netns", bn, "type", "veth", "peer", "name", "spb", "netns", split},
		[]string{"ip", "-n", sv, "addr", "add", "10.30.0.2/24", "dev", "sv0"},
		[]string{"ip", "-n", bn, "addr", "add", "10.30.0.1/24", "dev", "bv"},
		[]string{"ip", "-n", bn, "addr", "add", "10.30.1.1/24", "dev", "bsp"},
		[]string{"ip", "-n", split, "addr", "add", "10.30.1.2/24", "dev", "spb"},
		[]string{"ip", "-n", sv, "link", "set", "dev", "sv0", "up"},
		[]string{"ip", "-n", bn, "link", "set", "dev", "bv", "up"},
		[]string{"ip", "-n", bn, "link", "set", "dev", "bsp", "up"},
		[]string{"ip", "-n", split, "link", "set", "dev", "spb", "up"},
		[]string{"ip", "-n", sv, "route", "add", "10.10.0.0/16", "via", "10.30.0.1"},
		[]string{"ip", "-n", bn, "route", "add", "10.10.0.0/16", "via", "10.30.1.2"},
		[]string{"ip", "-n", bn, "route", "add", netem.ServerAddr + "/32", "via", "10.30.0.2"},
		[]string{"ip", "-n", split, "route", "add", netem.ServerAddr + "/32", "via", "10.30.1.1"},
		// The one queue: drop-tail, sharedQueueMs at the rate.
		[]string{"tc", "-n", bn, "qdisc", "add", "dev", "bsp", "root", "tbf",
			"rate", strconv.Itoa(sharedRateMbit*1e6) + "bit", "burst", strconv.Itoa(sharedBurst), "latency", strconv.Itoa(sharedQueueMs) + "ms"},
	)
	// Per-flow packet counters before the queue (drops = in − received).
	for p := 1; p <= len(e.spec.Paths); p++ {
		cmds = append(cmds, []string{"ip", "netns", "exec", bn, "iptables", "-A", "FORWARD", "-i", "bv", "-d", fmt.Sprintf("10.10.%d.0/24", p)})
	}
	for _, nd := range [][2]string{{sv, "sv0"}, {bn, "bv"}, {bn, "bsp"}, {split, "spb"}} {
		cmds = append(cmds, []string{"ip", "netns", "exec", nd[0], "ethtool", "-K", nd[1], "tso", "off", "gso", "off", "gro", "off", "tx-udp-segmentation", "off"})
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	return se
}

// delNS stops every process in the named namespaces and deletes them;
// missing ones are skipped.
func delNS(names ...string) {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join("/run/netns", n)); err != nil {
			continue
		}
		if out, err := exec.Command("ip", "netns", "pids", n).Output(); err == nil {
			for _, f := range strings.Fields(string(out)) {
				if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
					if p, err := os.FindProcess(pid); err == nil {
						_ = p.Kill()
					}
				}
			}
		}
		_ = exec.Command("ip", "netns", "del", n).Run()
	}
}

// mptcpSetup enables kernel MPTCP for a two-subflow connection on paths 1
// and 2: limits of 2 on both ends and a subflow endpoint on c2 only (path 3
// is the competitor's and carries no subflow).
func (se *sharedEnv) mptcpSetup(t *testing.T) {
	t.Helper()
	cl, sv := se.spec.ClientNS(), se.spec.ServerNS()
	var cmds [][]string
	for _, ns := range []string{cl, sv} {
		cmds = append(cmds,
			[]string{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.mptcp.enabled=1"},
			[]string{"ip", "-n", ns, "mptcp", "endpoint", "flush"},
			[]string{"ip", "-n", ns, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2"},
		)
	}
	cmds = append(cmds, []string{"ip", "-n", cl, "mptcp", "endpoint", "add", netem.ClientAddr(2), "dev", netem.ClientDev(2), "subflow"})
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
}

// pktCounters is one snapshot of per-path packet counts: entering the
// bottleneck (iptables in bn) and received by the client (c1..c3).
type pktCounters struct {
	in, rx [competitorPath]uint64
}

// counters reads the snapshot; a failure is a test error and a zero
// snapshot.
func (se *sharedEnv) counters(t *testing.T) pktCounters {
	t.Helper()
	var c pktCounters
	out, err := exec.Command("ip", "netns", "exec", se.bn, "iptables", "-nvxL", "FORWARD").Output()
	if err != nil {
		t.Errorf("iptables counters: %v", err)
		return c
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// pkts bytes target? prot opt in out source destination: with no
		// target the rule has 8 fields.
		if len(f) < 8 {
			continue
		}
		for p := 1; p <= competitorPath; p++ {
			if f[len(f)-1] == fmt.Sprintf("10.10.%d.0/24", p) {
				c.in[p-1], _ = strconv.ParseUint(f[0], 10, 64)
			}
		}
	}
	dev, err := exec.Command("ip", "netns", "exec", se.spec.ClientNS(), "cat", "/proc/net/dev").Output()
	if err != nil {
		t.Errorf("client /proc/net/dev: %v", err)
		return c
	}
	for _, l := range strings.Split(string(dev), "\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		for p := 1; p <= competitorPath; p++ {
			if strings.TrimSpace(name) == netem.ClientDev(p) && len(f) > 1 {
				c.rx[p-1], _ = strconv.ParseUint(f[1], 10, 64)
			}
		}
	}
	return c
}

// lossBetween is the fraction of the packets that entered the bottleneck
// for paths ps between snapshots a and b and never reached the client
// (drops in the tbf queue; the paths past it are lossless); 0 if none
// entered.
func lossBetween(a, b pktCounters, ps ...int) float64 {
	return dropFraction(a.in[:], a.rx[:], b.in[:], b.rx[:], ps)
}

// dropFraction is the fraction of the packets counted in (1-based paths ps)
// between the snapshots (aIn, aRx) and (bIn, bRx) that were not counted
// in rx; 0 if none entered or the counters are inconsistent. The shared
// and the fairness topologies both count this way.
func dropFraction(aIn, aRx, bIn, bRx []uint64, ps []int) float64 {
	var in, rx uint64
	for _, p := range ps {
		in += bIn[p-1] - aIn[p-1]
		rx += bRx[p-1] - aRx[p-1]
	}
	if in == 0 || rx > in {
		return 0
	}
	return float64(in-rx) / float64(in)
}

// tcpCounters reads the server namespace's TCP counters (/proc/net/netstat
// and /proc/net/snmp, "TcpExt:" and "Tcp:" lines) by name, e.g.
// "TcpExtTCPTimeouts", "TcpRetransSegs".
func (se *sharedEnv) tcpCounters(t *testing.T) map[string]uint64 {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", se.spec.ServerNS(), "cat", "/proc/net/netstat", "/proc/net/snmp").Output()
	if err != nil {
		t.Errorf("server TCP counters: %v", err)
		return nil
	}
	return parseNetstat(string(out))
}

// parseNetstat turns /proc/net/netstat- and /proc/net/snmp-style pairs of
// lines ("Prefix: name name …" then "Prefix: value value …") into
// PrefixName → value (the colon dropped).
func parseNetstat(s string) map[string]uint64 {
	m := map[string]uint64{}
	lines := strings.Split(s, "\n")
	for i := 0; i+1 < len(lines); i++ {
		h, v := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(h) < 2 || len(h) != len(v) || h[0] != v[0] || !strings.HasSuffix(h[0], ":") {
			continue
		}
		if _, err := strconv.ParseUint(v[1], 10, 64); err != nil {
			continue // not a value line: h is the next header
		}
		pre := strings.TrimSuffix(h[0], ":")
		for k := 1; k < len(h); k++ {
			if x, err := strconv.ParseUint(v[k], 10, 64); err == nil {
				m[pre+h[k]] = x
			}
		}
		i++
	}
	return m
}

// tcpEvents sums the named counters' increase from a to b.
func tcpEvents(a, b map[string]uint64, names ...string) uint64 {
	var n uint64
	for _, k := range names {
		if b[k] >= a[k] {
			n += b[k] - a[k]
		}
	}
	return n
}

// loadAvg is the machine's 1-minute load average ("?" if unreadable).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
