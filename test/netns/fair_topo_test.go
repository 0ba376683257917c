package netns

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/netem"
)

// The fairness matrix's topology (issue 23): the shared bottleneck of
// shared_topo_test.go with five client paths, so that one topology serves
// every cell of the matrix, and the competitor served from a namespace of
// its own, so that each namespace's kernel counters (nstat) belong to one
// flow:
//
//	client ─c1─ r1 (10 ms each way) ─s1─┐
//	client ─c2─ r2 (10 ms each way) ─s2─┤
//	client ─c3─ r3 (10 ms each way) ─s3─┤ split ─spb──bsp─ bn ─bv──sv0─ server  (10.20.0.1: the flow under test)
//	client ─c4─ r4 (30 ms each way) ─s4─┤            tbf on bsp   └─bc──cv0─ comp    (10.20.0.2: the competitor)
//	client ─c5─ r5 (30 ms each way) ─s5─┘
//
// Paths 1 and 2 are the flow under test's when its RTT equals the
// competitor's (20 ms), paths 4 and 5 when it is 3× longer (60 ms); path 3
// is the competitor's. A one-path flow uses the first of its pair. The
// one queue is the tbf on bsp (bn's egress towards the clients), changed
// between cells with `tc qdisc replace`. Uploads (requests, ACKs) cross
// the bottleneck unshaped.
const (
	fairPrefix     = "mpqf"
	fairRateMbit   = 20           // bottleneck rate, Mbit/s on L2 frames (the issue's)
	fairCompRTTms  = 20           // the competitor's RTT, ms: the BDP's RTT
	fairBDPBytes   = 50000        // fairRateMbit × fairCompRTTms: 20e6/8 × 0.020
	fairBurst      = 5000         // tbf bucket, bytes: 3 frames, so that the queue is the limit alone (shared_topo_test.go's 20 kB would be most of a 0.5-BDP queue)
	fairCompPath   = 3            // the competitor's path
	fairServerAddr = "10.20.0.1"  // the flow under test's server (netem.ServerAddr)
	fairCompAddr   = "10.20.0.2"  // the competitor's server
	fairTCPPort    = "4433"       // mptcp-baseline serve, in both server namespaces
	fairSplit      = "mpqf-split" // namespace of the splitter
	fairBn         = "mpqf-bn"    // namespace of the bottleneck
	fairComp       = "mpqf-comp"  // namespace of the competitor's server
)

// fairPaths are the paths of the flow under test for an RTT factor (1 or
// 3, or fairRTTMixed: one 20 ms path and one 60 ms path), the first one
// for a one-path flow.
func fairPaths(rttX int) [2]int {
	switch rttX {
	case 3:
		return [2]int{4, 5}
	case fairRTTMixed:
		return [2]int{1, 4}
	}
	return [2]int{1, 2}
}

// fairEnv is the matrix's topology, up.
type fairEnv struct {
	*env
	sleepers     map[string]int // namespace → pid of a process sleeping in it (its /proc/PID/net shows the namespace's counters)
	qlogRoot     string         // the servers' qlog directories: one per session mode, and quic-go
	capDir       string         // the packet captures, one per run (removed once read)
	modes        []fairFlow     // the session's coupling modes
	sessionPorts map[string]int // mode → its mpquic-server's port
	idleWaited   time.Duration  // normal-class runs' total wait for a quiet machine (fairIdleGate)
}

// fairSpec is the netem part: five delay-only paths.
func fairSpec() netem.Spec {
	return netem.Spec{
		Name:   "fairness-matrix",
		Prefix: fairPrefix,
		Paths: []netem.Path{
			{Name: "p20a", Link: &netem.Link{DelayMs: 10}},
			{Name: "p20b", Link: &netem.Link{DelayMs: 10}},
			{Name: "competitor", Link: &netem.Link{DelayMs: 10}},
			{Name: "p60a", Link: &netem.Link{DelayMs: 30}},
			{Name: "p60b", Link: &netem.Link{DelayMs: 30}},
		},
	}
}

// upFair builds the topology and registers its teardown (before netem's,
// which stops the delay daemons and deletes the rest).
func upFair(t *testing.T, bin, data, certDir string) *fairEnv {
	t.Helper()
	delNS(fairSplit, fairBn, fairComp) // leftovers of an interrupted run
	e := up(t, fairSpec(), bin, data, certDir)
	fe := &fairEnv{env: e, sleepers: map[string]int{}}
	t.Cleanup(func() { delNS(fairSplit, fairBn, fairComp) })
	sv, cl := e.spec.ServerNS(), e.spec.ClientNS()
	cmds := [][]string{}
	for _, ns := range []string{fairSplit, fairBn, fairComp} {
		cmds = append(cmds,
			[]string{"ip", "netns", "add", ns},
			[]string{"ip", "-n", ns, "link", "set", "dev", "lo", "up"},
		)
	}
	cmds = append(cmds,
		[]string{"ip", "netns", "exec", fairSplit, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		[]string{"ip", "netns", "exec", fairBn, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		[]string{"ip", "netns", "exec", fairComp, "sysctl", "-qw", "net.ipv4.tcp_congestion_control=reno"},
	)
	for p := 1; p <= len(e.spec.Paths); p++ {
		dev := netem.ServerDev(p)
		cmds = append(cmds,
			[]string{"ip", "-n", sv, "link", "set", "dev", dev, "netns", fairSplit},
			[]string{"ip", "-n", fairSplit, "addr", "add", netem.ServerPathAddr(p) + "/24", "dev", dev},
			[]string{"ip", "-n", fairSplit, "link", "set", "dev", dev, "up"},
			[]string{"ip", "-n", fairSplit, "route", "add", fmt.Sprintf("10.10.%d.0/24", p), "via", fmt.Sprintf("10.20.%d.1", p)},
		)
	}
	// The competitor's router reaches its server through the splitter too.
	cmds = append(cmds, []string{"ip", "-n", e.spec.RouterNS(fairCompPath), "route", "add", fairCompAddr + "/32", "via", netem.ServerPathAddr(fairCompPath)})
	cmds = append(cmds,
		[]string{"ip", "link", "add", "name", "sv0", "netns", sv, "type", "veth", "peer", "name", "bv", "netns", fairBn},
		[]string{"ip", "link", "add", "name", "cv0", "netns", fairComp, "type", "veth", "peer", "name", "bc", "netns", fairBn},
		[]string{"ip", "link", "add", "name", "bsp", "netns", fairBn, "type", "veth", "peer", "name", "spb", "netns", fairSplit},
		[]string{"ip", "-n", sv, "addr", "add", "10.30.0.2/24", "dev", "sv0"},
		[]string{"ip", "-n", fairBn, "addr", "add", "10.30.0.1/24", "dev", "bv"},
		[]string{"ip", "-n", fairComp, "addr", "add", "10.30.2.2/24", "dev", "cv0"},
		[]string{"ip", "-n", fairComp, "addr", "add", fairCompAddr + "/32", "dev", "lo"},
		[]string{"ip", "-n", fairBn, "addr", "add", "10.30.2.1/24", "dev", "bc"},
		[]string{"ip", "-n", fairBn, "addr", "add", "10.30.1.1/24", "dev", "bsp"},
		[]string{"ip", "-n", fairSplit, "addr", "add", "10.30.1.2/24", "dev", "spb"},
	)
	for _, nd := range [][2]string{{sv, "sv0"}, {fairComp, "cv0"}, {fairBn, "bv"}, {fairBn, "bc"}, {fairBn, "bsp"}, {fairSplit, "spb"}} {
		cmds = append(cmds, []string{"ip", "-n", nd[0], "link", "set", "dev", nd[1], "up"})
		// No segmentation offloads: the queue must see real packets.
		// MPQ_FAIR_OFFLOAD=1 (an investigation knob) leaves them on
		// between the servers and the queue, as a topology built
		// without this care would.
		if os.Getenv("MPQ_FAIR_OFFLOAD") != "1" {
			cmds = append(cmds, []string{"ip", "netns", "exec", nd[0], "ethtool", "-K", nd[1], "tso", "off", "gso", "off", "gro", "off", "tx-udp-segmentation", "off"})
		}
	}
	cmds = append(cmds,
		[]string{"ip", "-n", sv, "route", "add", "10.10.0.0/16", "via", "10.30.0.1"},
		[]string{"ip", "-n", fairComp, "route", "add", "10.10.0.0/16", "via", "10.30.2.1"},
		[]string{"ip", "-n", fairBn, "route", "add", "10.10.0.0/16", "via", "10.30.1.2"},
		[]string{"ip", "-n", fairBn, "route", "add", fairServerAddr + "/32", "via", "10.30.0.2"},
		[]string{"ip", "-n", fairBn, "route", "add", fairCompAddr + "/32", "via", "10.30.2.2"},
		[]string{"ip", "-n", fairSplit, "route", "add", "10.20.0.0/30", "via", "10.30.1.1"},
	)
	// Per-path packet counters in the bottleneck namespace: entering the
	// queue (server → client) and crossing it the other way (the
	// client's ACKs and requests).
	for p := 1; p <= len(e.spec.Paths); p++ {
		cmds = append(cmds,
			[]string{"ip", "netns", "exec", fairBn, "iptables", "-A", "FORWARD", "-o", "bsp", "-d", fmt.Sprintf("10.10.%d.0/24", p)},
			[]string{"ip", "netns", "exec", fairBn, "iptables", "-A", "FORWARD", "-i", "bsp", "-s", fmt.Sprintf("10.10.%d.0/24", p)},
		)
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	fe.setQueue(t, 1)
	if mss := os.Getenv("MPQ_FAIR_TCP_ADVMSS"); mss != "" {
		// An investigation knob: the client advertises this MSS on the
		// flow's paths (not the competitor's), so that the TCP and MPTCP
		// flows under test send segments of that size.
		for _, p := range []int{1, 2, 4, 5} {
			c := []string{"ip", "-n", cl, "route", "change", "default", "via", fmt.Sprintf("10.10.%d.1", p), "dev", netem.ClientDev(p), "table", strconv.Itoa(100 + p), "advmss", mss}
			if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v: %s", strings.Join(c, " "), err, out)
			}
		}
	}
	for _, ns := range []string{cl, sv, fairComp} {
		sl := exec.Command("ip", "netns", "exec", ns, "sleep", "86400")
		if err := sl.Start(); err != nil {
			t.Fatalf("sleeper in %s: %v", ns, err)
		}
		t.Cleanup(func() { _ = sl.Process.Kill(); _ = sl.Wait() })
		fe.sleepers[ns] = sl.Process.Pid
	}
	return fe
}

// setQueue makes the bottleneck's drop-tail queue q BDPs long: tbf's own
// byte-limited FIFO (limit q·fairBDPBytes bytes, the bytes that wait for
// tokens), or with MPQ_FAIR_QUEUE=packets a packet-limited FIFO of
// q·fairBDPBytes/1514 full frames under the tbf (fairQueueMode).
func (fe *fairEnv) setQueue(t *testing.T, q float64) {
	t.Helper()
	limit := int(q * fairBDPBytes)
	cmds := [][]string{{"tc", "-n", fairBn, "qdisc", "replace", "dev", "bsp", "root", "handle", "1:", "tbf",
		"rate", strconv.Itoa(fairRateMbit*1e6) + "bit", "burst", strconv.Itoa(fairBurst), "limit", strconv.Itoa(limit)}}
	if fairQueueMode() == "packets" {
		cmds = append(cmds, []string{"tc", "-n", fairBn, "qdisc", "replace", "dev", "bsp", "parent", "1:1", "handle", "10:", "pfifo",
			"limit", strconv.Itoa(int(math.Round(q * fairBDPBytes / 1514)))})
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
}

// fairQueueMode is how the bottleneck's queue is limited: "bytes" (tbf's
// own FIFO, the default) or "packets" (MPQ_FAIR_QUEUE=packets).
func fairQueueMode() string {
	if os.Getenv("MPQ_FAIR_QUEUE") == "packets" {
		return "packets"
	}
	return "bytes"
}

// mptcpPaths configures kernel MPTCP for a flow on paths ps (the first
// carries the initial subflow): limits of 2 at both ends and a subflow
// endpoint on the client for the second path, if any.
func (fe *fairEnv) mptcpPaths(t *testing.T, ps []int) {
	t.Helper()
	cl, sv := fe.spec.ClientNS(), fe.spec.ServerNS()
	var cmds [][]string
	for _, ns := range []string{cl, sv} {
		cmds = append(cmds,
			[]string{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.mptcp.enabled=1"},
			[]string{"ip", "-n", ns, "mptcp", "endpoint", "flush"},
			[]string{"ip", "-n", ns, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2"},
		)
	}
	for _, p := range ps[1:] {
		cmds = append(cmds, []string{"ip", "-n", cl, "mptcp", "endpoint", "add", netem.ClientAddr(p), "dev", netem.ClientDev(p), "subflow"})
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
}

// fairCounters is one snapshot of the per-path packet counters, indexed
// by path−1: packets entering the queue towards the client (in),
// received by the client (rx), and crossing the bottleneck from the
// client (up), with the queue's own drop count.
type fairCounters struct {
	in, rx, up [5]uint64
	tcDrops    uint64
}

// counters reads the snapshot; a failure is a test error.
func (fe *fairEnv) counters(t *testing.T) fairCounters {
	t.Helper()
	var c fairCounters
	out, err := exec.Command("ip", "netns", "exec", fairBn, "iptables", "-nvxL", "FORWARD").Output()
	if err != nil {
		t.Errorf("iptables counters: %v", err)
		return c
	}
	c.in, c.up = parseFairIptables(string(out))
	dev, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/dev", fe.sleepers[fe.spec.ClientNS()]))
	if err != nil {
		t.Errorf("client /proc/net/dev: %v", err)
		return c
	}
	c.rx = parseRxPackets(string(dev))
	tc, err := exec.Command("tc", "-n", fairBn, "-s", "qdisc", "show", "dev", "bsp").Output()
	if err != nil {
		t.Errorf("tc -s: %v", err)
		return c
	}
	c.tcDrops = parseTcDrops(string(tc))
	return c
}

// parseFairIptables reads `iptables -nvxL FORWARD` of the bottleneck: the
// packet counts of the rules to 10.10.p.0/24 out of bsp (in) and from
// 10.10.p.0/24 into bsp (up).
func parseFairIptables(s string) (in, up [5]uint64) {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		// pkts bytes target? prot opt in out source destination
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		src, dst, inDev, outDev := f[len(f)-2], f[len(f)-1], f[len(f)-4], f[len(f)-3]
		for p := 1; p <= 5; p++ {
			net := fmt.Sprintf("10.10.%d.0/24", p)
			switch {
			case outDev == "bsp" && dst == net:
				in[p-1] = n
			case inDev == "bsp" && src == net:
				up[p-1] = n
			}
		}
	}
	return in, up
}

// parseRxPackets reads the rx packet counts of c1..c5 from a
// /proc/net/dev listing.
func parseRxPackets(s string) (rx [5]uint64) {
	for _, l := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		for p := 1; p <= 5; p++ {
			if strings.TrimSpace(name) == netem.ClientDev(p) && len(f) > 1 {
				rx[p-1], _ = strconv.ParseUint(f[1], 10, 64)
			}
		}
	}
	return rx
}

// parseTcDrops reads the first "dropped N" of `tc -s qdisc show`.
func parseTcDrops(s string) uint64 {
	_, rest, ok := strings.Cut(s, "dropped ")
	if !ok {
		return 0
	}
	f := strings.FieldsFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseUint(f[0], 10, 64)
	return n
}

// kernelCounters reads namespace ns's TCP and MPTCP counters
// (/proc/net/netstat and /proc/net/snmp as nstat does) by name, e.g.
// "TcpExtTCPSackRecovery", "TcpInSegs".
func (fe *fairEnv) kernelCounters(t *testing.T, ns string) map[string]uint64 {
	t.Helper()
	var b strings.Builder
	for _, f := range []string{"netstat", "snmp"} {
		s, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", fe.sleepers[ns], f))
		if err != nil {
			t.Errorf("%s counters: %v", ns, err)
			return nil
		}
		b.Write(s)
	}
	return parseNetstat(b.String())
}

// fairLoss is the fraction of the packets of paths ps that entered the
// queue between a and b and never reached the client (drops at the queue:
// the paths past it are lossless); 0 if none entered.
func fairLoss(a, b fairCounters, ps ...int) float64 {
	return dropFraction(a.in[:], a.rx[:], b.in[:], b.rx[:], ps)
}

// fairDataDir makes the matrix's download file in data.
func fairDataFile(t *testing.T, bin, data string) {
	t.Helper()
	if out, err := exec.Command(filepath.Join(bin, "mptcp-baseline"), "mkfile", "-o", filepath.Join(data, fairFile), "-size", fmt.Sprint(fairSize)).CombinedOutput(); err != nil {
		t.Fatalf("mkfile: %v %s", err, out)
	}
}
