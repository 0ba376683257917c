#!/usr/bin/python3
"""Two paths between client and server, one router each (the topology of
mpq-netns and the root CI test), shaped per path, verified, then one
download (kernel MPTCP by default, multipath QUIC with --payload mpquic;
--payload both runs one after the other on the same topology and schedule
and prints them side by side) while an optional handoff schedule runs.

Example (root):
  /usr/bin/python3 mininet/two_path.py --bin-dir bin --schedule 4:down:2,8:up:2 --payload both
"""

import argparse
import sys

from mininet.log import setLogLevel

import mpqnet


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", default="20,10", help="per-path bottleneck rates, Mbit/s")
    ap.add_argument("--delay", default="10,30", help="per-path one-way delays, ms")
    ap.add_argument("--loss", default="0,0", help="per-path loss, percent, each direction")
    ap.add_argument("--schedule", default="", help="handoff schedule, e.g. '4:down:2,8:up:2,10:delay:1:50' (t in s from the download's start)")
    mpqnet.add_payload_flags(ap)
    args = ap.parse_args()
    setLogLevel("info")
    rates, delays, losses = ([float(x) for x in v.split(",")] for v in (args.rate, args.delay, args.loss))
    links = [dict(rate=r, delay=d, loss=l) for r, d, l in zip(rates, delays, losses)]
    args.scenario = args.scenario or "mininet-two-path"
    mpqnet.make_payload(args)
    pn = mpqnet.PathNet(links, routers_per_path=1, backend=args.backend, bin_dir=args.bin_dir)
    try:
        if not args.no_verify:
            mpqnet.verify(pn.client, pn.server, pn.want(), args.bin_dir)
        payloads = ["kernel-mptcp", "mpquic"] if args.payload == "both" else [args.payload]
        results = []
        for payload in payloads:
            args.payload = payload
            results.append((payload, mpqnet.run_payload(args, pn.client, pn.server, len(links), pn.capacity_bps(),
                                                        mpqnet.parse_schedule(args.schedule), pn.action)))
        if len(results) > 1:
            print(side_by_side(results, pn.capacity_bps()))
    finally:
        pn.stop()


def side_by_side(results, capacity_bps):
    """A table of the runs' figures, one column per payload."""
    rows = [
        ("goodput (Mbit/s)", lambda r: "%.2f" % (r["goodput_bps"] / 1e6)),
        ("of capacity (%)", lambda r: "%.1f" % (100 * r["goodput_bps"] / capacity_bps) if capacity_bps else "n/a"),
        ("FCT (s)", lambda r: "%.2f" % r["fct_s"]),
        ("longest stall (s)", lambda r: "%.2f" % r["max_stall_s"] if r.get("max_stall_s") is not None else "n/a"),
        ("bytes per path (MB)", lambda r: "/".join("%.1f" % (b / 1e6) for b in (r.get("per_path_bytes") or [])) or "n/a"),
        ("SHA-256", lambda r: "ok" if r.get("sha256_ok") else "MISMATCH"),
    ]
    names = [p for p, _ in results]
    w = max(len(n) for n, _ in rows)
    out = ["%-*s  %s" % (w, "", "  ".join("%14s" % n for n in names))]
    for name, f in rows:
        out.append("%-*s  %s" % (w, name, "  ".join("%14s" % f(r) for _, r in results)))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
