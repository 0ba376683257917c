"""Shared Mininet helpers for mpqsched: topologies without switches, link
shaping (TCLink/netem where the kernel has sch_netem, else tbf + iptables
statistic + mpq-delayd), RTT/rate verification, MPTCP setup, payload runs and
handoff schedules.

Addressing follows pkg/netem (mpq-netns): path p (from 1) gives the client
10.10.p.2/24; the server's service address is 10.20.0.1/32 on lo and its
link on path p is 10.20.p.2/24. The client routes by source address (table
100+p). Links between routers of a chain use 10.30.<link>.0/24.

Units: rates in Mbit/s, delays in ms (one way, per direction), loss in
percent, times in seconds.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time

from mininet.link import Link, TCLink
from mininet.log import info, setLogLevel
from mininet.net import Mininet
from mininet.node import Host

import linkcheck

SERVER_ADDR = "10.20.0.1"


def die(msg):
    """Print msg loudly to stderr and exit 1."""
    sys.stderr.write("\n*** FAILED: %s\n" % msg)
    sys.exit(1)


def run(host, cmd):
    """Run cmd (a list) on host; raise with its output on failure."""
    line = " ".join(shlex.quote(c) for c in cmd)
    out = host.cmd(line + "; echo __rc=$?")
    m = re.search(r"__rc=(\d+)\s*$", out)
    rc = int(m.group(1)) if m else -1
    out = out[: m.start()] if m else out
    if rc != 0:
        raise RuntimeError("%s: %s (exit %d): %s" % (host.name, line, rc, out.strip()))
    return out


def tbf_args(rate, queue):
    """tbf parameters as in pkg/netem: burst >= 20 kB, limit queue frames or 50 ms."""
    bps = rate * 1e6
    burst = max(20000, int(bps / 8 * 0.002))
    args = ["tbf", "rate", "%dbit" % bps, "burst", str(burst)]
    if queue:
        return args + ["limit", str(queue * 1514 + burst)]
    return args + ["latency", "50ms"]


class Hop:
    """The impairment of one direction of one link, applied in router `at`:
    packets enter on in_intf and leave on out_intf."""

    def __init__(self, at, in_intf, out_intf, rate=0.0, delay=0.0, loss=0.0, jitter=0.0, queue=0):
        self.at, self.in_intf, self.out_intf = at, in_intf, out_intf
        self.rate, self.delay, self.loss, self.jitter, self.queue = rate, delay, loss, jitter, queue
        self.chain = "MPQ-" + in_intf.replace("-", "")[-20:]
        self.daemon = None  # Popen of mpq-delayd
        self.qnum = None


class Shaper:
    """Applies and changes Hop impairments with the nfq substitute (tbf,
    iptables statistic, NFQUEUE + mpq-delayd). Each hop gets its own iptables
    chain whose rule 1 is the loss and rule 2 the delay, so both can be
    replaced in place while traffic flows."""

    def __init__(self, bin_dir):
        self.delayd = os.path.join(bin_dir, "mpq-delayd")
        if not os.access(self.delayd, os.X_OK):
            die("mpq-delayd not found in %s (go build -o %s/ ./cmd/mpq-delayd)" % (bin_dir, bin_dir))
        self.hops = []
        self.next_q = 1
        self.daemons = []

    def start_daemon(self, hop, delay, jitter):
        q = self.next_q
        self.next_q += 1
        log = open("/tmp/mpq-delayd-%s-q%d.txt" % (hop.at.name, q), "w")
        p = hop.at.popen([self.delayd, "-queue", str(q), "-delay", "%.3fms" % delay, "-jitter", "%.3fms" % jitter],
                         stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 3
        while time.time() < deadline:
            if p.poll() is not None:
                die("mpq-delayd on %s queue %d exited: %s" % (hop.at.name, q, open(log.name).read()))
            if "bound" in open(log.name).read():
                self.daemons.append(p)
                return p, q
            time.sleep(0.02)
        die("mpq-delayd on %s queue %d did not bind" % (hop.at.name, q))

    def delay_rule(self, hop):
        if hop.delay > 0:
            return ["-j", "NFQUEUE", "--queue-num", str(hop.qnum)]
        return ["-j", "RETURN"]

    def loss_rule(self, hop):
        return ["-m", "statistic", "--mode", "random", "--probability", "%.6f" % (hop.loss / 100.0), "-j", "DROP"]

    def apply(self, hop):
        h = hop.at
        run(h, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        if hop.rate > 0:
            run(h, ["tc", "qdisc", "replace", "dev", hop.out_intf, "root", "handle", "1:"] + tbf_args(hop.rate, hop.queue))
        if hop.delay > 0:
            hop.daemon, hop.qnum = self.start_daemon(hop, hop.delay, hop.jitter)
        run(h, ["iptables", "-N", hop.chain])
        run(h, ["iptables", "-A", hop.chain] + self.loss_rule(hop))
        run(h, ["iptables", "-A", hop.chain] + self.delay_rule(hop))
        run(h, ["iptables", "-A", "FORWARD", "-i", hop.in_intf, "-j", hop.chain])
        self.hops.append(hop)

    def change(self, hop, rate=None, delay=None, loss=None, jitter=None):
        """Change a hop's impairment in place while traffic flows."""
        h = hop.at
        if rate is not None and rate != hop.rate:
            hop.rate = rate
            run(h, ["tc", "qdisc", "replace", "dev", hop.out_intf, "root", "handle", "1:"] + tbf_args(rate, hop.queue))
        if loss is not None and loss != hop.loss:
            hop.loss = loss
            run(h, ["iptables", "-R", hop.chain, "1"] + self.loss_rule(hop))
        if (delay is not None and delay != hop.delay) or (jitter is not None and jitter != hop.jitter):
            hop.delay = hop.delay if delay is None else delay
            hop.jitter = hop.jitter if jitter is None else jitter
            old = hop.daemon
            if hop.delay > 0:
                hop.daemon, hop.qnum = self.start_daemon(hop, hop.delay, hop.jitter)
            run(h, ["iptables", "-R", hop.chain, "2"] + self.delay_rule(hop))
            if old is not None:
                old.terminate()  # it accepts every packet it still holds, then exits

    def stop(self):
        for p in self.daemons:
            if p.poll() is None:
                p.terminate()
        for p in self.daemons:
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                p.kill()


class NetemShaper:
    """Applies Hop impairments with tc netem (+ tbf child) where the kernel
    has sch_netem; the equivalent of TCLink(bw, delay, loss) per direction."""

    def __init__(self):
        self.hops = []

    def args(self, hop):
        a = ["netem", "limit", "100000"]
        if hop.delay > 0:
            a += ["delay", "%.3fms" % hop.delay] + (["%.3fms" % hop.jitter] if hop.jitter else [])
        if hop.loss > 0:
            a += ["loss", "%g%%" % hop.loss]
        return a

    def apply(self, hop):
        run(hop.at, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        run(hop.at, ["tc", "qdisc", "replace", "dev", hop.out_intf, "root", "handle", "1:"] + self.args(hop))
        if hop.rate > 0:
            run(hop.at, ["tc", "qdisc", "replace", "dev", hop.out_intf, "parent", "1:1", "handle", "10:"] + tbf_args(hop.rate, hop.queue))
        self.hops.append(hop)

    def change(self, hop, rate=None, delay=None, loss=None, jitter=None):
        for k, v in (("rate", rate), ("delay", delay), ("loss", loss), ("jitter", jitter)):
            if v is not None:
                setattr(hop, k, v)
        run(hop.at, ["tc", "qdisc", "change", "dev", hop.out_intf, "root", "handle", "1:"] + self.args(hop))
        if rate is not None and hop.rate > 0:
            run(hop.at, ["tc", "qdisc", "change", "dev", hop.out_intf, "parent", "1:1", "handle", "10:"] + tbf_args(hop.rate, hop.queue))

    def stop(self):
        pass


def has_netem(host):
    """True if the kernel accepts a netem qdisc (tried on host's lo)."""
    out = host.cmd("tc qdisc add dev lo root netem delay 1ms; echo __rc=$?")
    ok = "__rc=0" in out
    if ok:
        host.cmd("tc qdisc del dev lo root")
    return ok


def make_shaper(backend, host, bin_dir):
    if backend == "auto":
        backend = "netem" if has_netem(host) else "nfq"
    info("*** shaping backend: %s\n" % backend)
    return (NetemShaper() if backend == "netem" else Shaper(bin_dir)), backend


def new_net():
    """A Mininet with no controller and no switch: hosts and routers are
    joined directly by veth links (the kernel here has no OVS)."""
    return Mininet(topo=None, build=False, controller=None, link=Link, host=Host, autoSetMacs=True)


def endpoint_setup(client, server, npaths, tcp_cc="reno"):
    """Offloads off, TCP congestion control, client policy routing, server
    service address and MPTCP endpoints/limits."""
    for h in (client, server):
        for intf in h.intfNames():
            if intf != "lo":
                h.cmd("ethtool -K %s tso off gso off gro off tx-udp-segmentation off" % intf)
        run(h, ["sysctl", "-qw", "net.ipv4.tcp_congestion_control=" + tcp_cc])
        run(h, ["sysctl", "-qw", "net.mptcp.enabled=1"])
        h.cmd("ip mptcp endpoint flush")
        run(h, ["ip", "mptcp", "limits", "set", "subflows", str(npaths), "add_addr_accepted", str(npaths)])
    run(server, ["ip", "addr", "add", SERVER_ADDR + "/32", "dev", "lo"])
    for p in range(2, npaths + 1):
        run(client, ["ip", "mptcp", "endpoint", "add", "10.10.%d.2" % p, "dev", "c-eth%d" % (p - 1), "subflow"])


def routers_offloads_off(routers):
    for r in routers:
        for intf in r.intfNames():
            if intf != "lo":
                r.cmd("ethtool -K %s tso off gso off gro off tx-udp-segmentation off" % intf)


# --- verification -----------------------------------------------------------

def ping_rtts(client, p, count):
    """(sent, rtts in ms) of count pings from path p's client address to the
    server; exits 1 if ping could not run."""
    out = client.cmd("ping -n -c %d -i 0.02 -W 2 -I 10.10.%d.2 %s" % (count, p, SERVER_ADDR))
    sent, rtts = linkcheck.parse_ping(out)
    if sent is None:
        die("ping on path %d failed: %s" % (p, out))
    return sent, rtts


def udp_rate(tool, rx_host, rx_addr, port, tx_host, tx_addr, want_mbit, dur=2.0):
    """L2 rate in Mbit/s of a UDP probe at 1.3x want_mbit (mpq-netns probes)."""
    rx = rx_host.popen(["chrt", "-f", "30", tool, "_udprecv", "-addr", "%s:%d" % (rx_addr, port), "-idle", "500ms",
                        "-max", "%ds" % (dur + 5)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if rx.stdout.readline().strip() != "ready":
        die("rate receiver on %s did not start: %s" % (rx_host.name, rx.stderr.read()))
    tx_host.cmd("chrt -f 30 %s _udpsend -from %s -to %s:%d -rate %d -size 1400 -for %.1fs" %
                (tool, tx_addr, rx_addr, port, want_mbit * 1.3e6, dur))
    out, err = rx.communicate(timeout=dur + 10)
    try:
        return json.loads(out.strip().splitlines()[-1])["wire_bps"] / 1e6
    except Exception:
        die("rate receiver on %s: %r %r" % (rx_host.name, out, err))


def verify(client, server, paths, bin_dir, rtt_abs=1.5, rtt_rel=0.05, rate_rel=0.05, pings=40):
    """paths: list of dicts with want_rtt (ms), jitter (ms, sum of both
    directions' half-widths), deliver (fraction of round trips the loss
    lets through), up and down (Mbit/s, 0 = not measured). The delay is
    judged by linkcheck.judge_rtt (median RTT of at least 20 replies); the
    minimum and the mean are only printed. Exits 1 naming every figure out
    of tolerance."""
    tool = os.path.join(bin_dir, "mpq-netns")
    if not os.access(tool, os.X_OK):
        die("mpq-netns not found in %s (it carries the rate probes)" % bin_dir)
    bad = []
    print("path  want_rtt  rtt_med  rtt_min  rtt_avg  replies   want_up      up  want_down    down")
    for i, pth in enumerate(paths, 1):
        sent, rtts = ping_rtts(client, i, linkcheck.ping_count(pings, deliver=pth.get("deliver", 1.0)))
        tol = max(rtt_abs, rtt_rel * pth["want_rtt"])
        _, tol, problem = linkcheck.judge_rtt(rtts, sent, pth["want_rtt"], pth.get("jitter", 0.0), tol)
        if problem:
            bad.append("path %d: %s" % (i, problem))
        nan = float("nan")
        mn, med, avg = (min(rtts), linkcheck.median(rtts), sum(rtts) / len(rtts)) if rtts else (nan, nan, nan)
        up = udp_rate(tool, server, SERVER_ADDR, 5300 + 2 * i, client, "10.10.%d.2" % i, pth["up"]) if pth["up"] else 0
        down = udp_rate(tool, client, "10.10.%d.2" % i, 5301 + 2 * i, server, SERVER_ADDR, pth["down"]) if pth["down"] else 0
        print("%-4d %8.2f %8.2f %8.2f %8.2f %4d/%-4d %9.3f %7.3f %10.3f %7.3f" % (
            i, pth["want_rtt"], med, mn, avg, len(rtts), sent, pth["up"], up, pth["down"], down))
        for name, got, want in (("up", up, pth["up"]), ("down", down, pth["down"])):
            if want and abs(got - want) > rate_rel * want:
                bad.append("path %d: %s rate %.3f Mbit/s, want %.3f +- %.0f%%" % (i, name, got, want, rate_rel * 100))
    if bad:
        die("link verification:\n  " + "\n  ".join(bad))
    print("verify: ok")


# --- payload and schedules --------------------------------------------------

def payload_cmds(args, npaths, capacity_bps):
    """Server and client command lines; {placeholders} come from the flags."""
    port = 4433
    fields = dict(bin=args.bin_dir, server=SERVER_ADDR, port=port, dir=args.data_dir, file="payload",
                  scenario=args.scenario, capacity_bps=int(capacity_bps), scheduler=args.scheduler,
                  path_addrs=",".join("10.10.%d.2" % p for p in range(1, npaths + 1)), npaths=npaths,
                  certdir=cert_dir(args), certname=CERT_NAME)
    if args.payload == "kernel-mptcp":
        srv = "{bin}/mptcp-baseline serve -dir {dir} -addr {server}:{port}"
        cli = ("{bin}/mptcp-baseline get -addr {server}:{port} -file {file} -o /dev/null -scenario {scenario} "
               "-capacity-bps {capacity_bps} -path-addrs {path_addrs}")
    else:  # mpquic: the server makes a development certificate, the client pins it
        srv = "{bin}/mpquic-server -dir {dir} -addr {server}:{port} -scheduler {scheduler} -dev-cert {certdir} -name {certname}"
        cli = ("{bin}/mpquic-client -addr {server}:{port} -ca {certdir}/cert.pem -server-name {certname} -paths {path_addrs} "
               "-scheduler {scheduler} -scenario {scenario} -capacity-bps {capacity_bps} -q get {file} -o /dev/null")
    if args.server_cmd:
        srv = args.server_cmd
    if args.client_cmd:
        cli = args.client_cmd
    return srv.format(**fields), cli.format(**fields)


CERT_NAME = "mpqsched.test"  # name of mpquic-server's -dev-cert certificate


def cert_dir(args):
    """Where mpquic-server writes its development certificate (cert.pem)."""
    return os.path.join(args.data_dir, "cert")


def add_payload_flags(ap):
    ap.add_argument("--bin-dir", default=os.path.abspath("bin"), help="directory with mpq-delayd, mpq-netns, mptcp-baseline (and mpquic-*)")
    ap.add_argument("--backend", default="auto", choices=["auto", "netem", "nfq"])
    ap.add_argument("--payload", default="kernel-mptcp", choices=["kernel-mptcp", "mpquic", "both"], help="both: kernel MPTCP, then multipath QUIC, on the same topology and schedule (two_path.py)")
    ap.add_argument("--scheduler", default="minrtt", help="scheduler name passed to mpquic-* ({scheduler})")
    ap.add_argument("--server-cmd", default="", help="server command template; placeholders {bin} {server} {port} {dir} {file} {scheduler} {certdir} {certname} ...")
    ap.add_argument("--client-cmd", default="", help="client command template; must print one metrics.Result JSON line")
    ap.add_argument("--size", type=int, default=20 << 20, help="payload size, bytes")
    ap.add_argument("--data-dir", default="/tmp/mpq-mininet-data")
    ap.add_argument("--scenario", default="")
    ap.add_argument("--no-verify", action="store_true", help="skip the RTT/rate check (not recommended)")
    ap.add_argument("--out", default="", help="append the result JSON line to this file")


def make_payload(args):
    os.makedirs(args.data_dir, exist_ok=True)
    path = os.path.join(args.data_dir, "payload")
    if not os.path.exists(path) or os.path.getsize(path) != args.size:
        subprocess.check_call([os.path.join(args.bin_dir, "mptcp-baseline"), "mkfile", "-o", path, "-size", str(args.size)])


def run_payload(args, client, server, npaths, capacity_bps, schedule=None, apply_action=None):
    """Start the server, run the client while a thread applies `schedule`
    (list of (t_seconds, action) from the client's start), return the
    client's result dict. Exits 1 if the client fails."""
    srv_cmd, cli_cmd = payload_cmds(args, npaths, capacity_bps)
    info("*** server: %s\n*** client: %s\n" % (srv_cmd, cli_cmd))
    cert = os.path.join(cert_dir(args), "cert.pem")
    if args.payload == "mpquic" and os.path.exists(cert):
        os.remove(cert)  # the server writes a fresh one
    srv = server.popen(shlex.split(srv_cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.5)
    if args.payload == "mpquic" and not args.server_cmd:
        for _ in range(50):  # the client pins the certificate the server just made
            if os.path.exists(cert):
                break
            time.sleep(0.1)
    stop = threading.Event()
    t0 = time.time()

    def scheduler():
        for t, action in sorted(schedule or [], key=lambda x: x[0]):
            if stop.wait(max(0.0, t0 + t - time.time())):
                return
            info("*** t=%.1fs: %s\n" % (time.time() - t0, action))
            apply_action(action)

    th = threading.Thread(target=scheduler, daemon=True)
    th.start()
    cli = client.popen(shlex.split(cli_cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = cli.communicate()
    stop.set()
    srv.terminate()
    try:
        srv.wait(timeout=3)
    except subprocess.TimeoutExpired:
        srv.kill()
    lines = [l for l in out.splitlines() if l.startswith("{")]
    if not lines:
        die("client printed no result (exit %s): %s %s" % (cli.returncode, out, err))
    res = json.loads(lines[-1])
    print(lines[-1])
    if args.out:
        with open(args.out, "a") as f:
            f.write(lines[-1] + "\n")
    if cli.returncode != 0:
        die("client exit %d: %s %s" % (cli.returncode, res.get("error", ""), err))
    if capacity_bps:
        print("goodput %.2f Mbit/s = %.1f%% of %.1f Mbit/s capacity" % (res["goodput_bps"] / 1e6, 100 * res["goodput_bps"] / capacity_bps, capacity_bps / 1e6))
    return res


def parse_schedule(text):
    """Parse a handoff schedule: items 't:action' separated by ','. Actions:
    'down:P', 'up:P' (path P's client interface), 'delay:P:MS', 'loss:P:PCT',
    'rate:P:MBIT' (path P's bottleneck, both directions)."""
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        t, action = item.split(":", 1)
        out.append((float(t), action))
    return out


# --- topology ---------------------------------------------------------------

class PathNet:
    """Client, server and per-path router chains built on a switchless
    Mininet. links[p-1] = dict(rate, delay, loss, jitter, queue) is path p's
    bottleneck, applied in both directions: client->server in the path's
    first router, server->client in its last router."""

    def __init__(self, links, routers_per_path=1, backend="auto", bin_dir="bin", tcp_cc="reno"):
        self.links = links
        self.k = routers_per_path
        self.net = new_net()
        net = self.net
        self.client = net.addHost("c", ip=None)
        self.server = net.addHost("s", ip=None)
        self.routers = []  # per path: list of router hosts
        n = 0
        for p in range(1, len(links) + 1):
            chain = []
            for _ in range(self.k):
                n += 1
                chain.append(net.addHost("r%d" % n, ip=None))
            self.routers.append(chain)
            first, last = chain[0], chain[-1]
            net.addLink(self.client, first, intfName1="c-eth%d" % (p - 1), intfName2="%s-cli" % first.name)
            for a, b in zip(chain, chain[1:]):
                net.addLink(a, b, intfName1="%s-srv" % a.name, intfName2="%s-cli" % b.name)
            net.addLink(last, self.server, intfName1="%s-srv" % last.name, intfName2="s-eth%d" % (p - 1))
        net.build()
        net.start()
        self._address()
        endpoint_setup(self.client, self.server, len(links), tcp_cc)
        routers_offloads_off([r for ch in self.routers for r in ch])
        self.shaper, self.backend = make_shaper(backend, self.client, bin_dir)
        self.hops = []  # per path: (c2s hop, s2c hop)
        for p, l in enumerate(links, 1):
            first, last = self.routers[p - 1][0], self.routers[p - 1][-1]
            up = Hop(first, "%s-cli" % first.name, "%s-srv" % first.name, **l)
            down = Hop(last, "%s-srv" % last.name, "%s-cli" % last.name, **l)
            self.shaper.apply(up)
            self.shaper.apply(down)
            self.hops.append((up, down))

    def _address(self):
        c, s = self.client, self.server
        for h in [c, s] + [r for ch in self.routers for r in ch]:
            for intf in h.intfNames():
                if intf != "lo":
                    h.cmd("ip addr flush dev %s" % intf)
        for p, chain in enumerate(self.routers, 1):
            first, last = chain[0], chain[-1]
            run(c, ["ip", "addr", "add", "10.10.%d.2/24" % p, "dev", "c-eth%d" % (p - 1)])
            run(first, ["ip", "addr", "add", "10.10.%d.1/24" % p, "dev", "%s-cli" % first.name])
            for i, (a, b) in enumerate(zip(chain, chain[1:])):
                run(a, ["ip", "addr", "add", "10.30.%d.%d/24" % (p, 2 * i + 1), "dev", "%s-srv" % a.name])
                run(b, ["ip", "addr", "add", "10.30.%d.%d/24" % (p, 2 * i + 2), "dev", "%s-cli" % b.name])
            run(last, ["ip", "addr", "add", "10.20.%d.1/24" % p, "dev", "%s-srv" % last.name])
            run(s, ["ip", "addr", "add", "10.20.%d.2/24" % p, "dev", "s-eth%d" % (p - 1)])
            for i, r in enumerate(chain):
                run(r, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
                if r is not last:  # towards the server: next router in the chain
                    run(r, ["ip", "route", "add", "10.20.0.0/16", "via", "10.30.%d.%d" % (p, 2 * i + 2)])
                else:
                    run(r, ["ip", "route", "add", SERVER_ADDR + "/32", "via", "10.20.%d.2" % p])
                if r is not first:  # towards the client: previous router
                    run(r, ["ip", "route", "add", "10.10.%d.0/24" % p, "via", "10.30.%d.%d" % (p, 2 * i - 1)])
            run(s, ["ip", "route", "add", "10.10.%d.0/24" % p, "via", "10.20.%d.1" % p])
            run(c, ["ip", "rule", "add", "from", "10.10.%d.2" % p, "table", str(100 + p), "priority", str(100 + p)])
            run(c, ["ip", "route", "add", "default", "via", "10.10.%d.1" % p, "dev", "c-eth%d" % (p - 1), "table", str(100 + p)])
        run(c, ["ip", "route", "add", "10.20.0.0/16", "via", "10.10.1.1", "dev", "c-eth0"])

    def capacity_bps(self):
        return sum(l["rate"] for l in self.links) * 1e6

    def want(self):
        """Per-path expected RTT (ms), jitter (ms), delivery ratio and rates
        (Mbit/s) for verify()."""
        out = []
        for up, down in self.hops:
            ser = sum(98 * 8 / (h.rate * 1e6) * 1e3 for h in (up, down) if h.rate)
            out.append(dict(want_rtt=up.delay + down.delay + ser, jitter=up.jitter + down.jitter,
                            deliver=(1 - up.loss / 100.0) * (1 - down.loss / 100.0), up=up.rate, down=down.rate))
        return out

    def action(self, action):
        """Apply one schedule action (see parse_schedule)."""
        parts = action.split(":")
        kind, p = parts[0], int(parts[1])
        dev = "c-eth%d" % (p - 1)
        if kind == "down":
            run(self.client, ["ip", "link", "set", "dev", dev, "down"])
        elif kind == "up":
            run(self.client, ["ip", "link", "set", "dev", dev, "up"])
            run(self.client, ["ip", "route", "replace", "default", "via", "10.10.%d.1" % p, "dev", dev, "table", str(100 + p)])
            if p == 1:
                run(self.client, ["ip", "route", "replace", "10.20.0.0/16", "via", "10.10.1.1", "dev", dev])
        elif kind in ("delay", "loss", "rate"):
            v = float(parts[2])
            for hop in self.hops[p - 1]:
                self.shaper.change(hop, **{kind: v})
        else:
            raise ValueError("unknown schedule action %r" % action)

    def stop(self):
        try:
            self.shaper.stop()
        finally:
            self.net.stop()
