#!/usr/bin/python3
"""The LLHD paper's emulation scenarios (Electronics 2022, section 4.1,
Figure 1): two subflows, each through a chain of two routers (Router-1 to
Router-2 and Router-3 to Router-4); the bottleneck is the link between the
two routers of a chain. Path latency is the one-way delay of that link.

  s1  SF1 10 Mbit/s, 10 ms, 1% loss; SF2 5 Mbit/s, 5 ms, 2% loss
  s2  both 10 Mbit/s, 5 ms; SF1 2% loss; SF2 loss steps 2,4,6,8,10% during the run
  s3  both 10 Mbit/s, 2% loss; SF1 5 ms; SF2 delay steps 5,10,15,20,25 ms during the run
  s5  both links vary during the run: 10-30 Mbit/s, 10-30 ms, 2-10% (seeded)

Steps happen every --step seconds from the download's start. Example (root):
  /usr/bin/python3 mininet/llhd.py --scenario-id s1 --bin-dir bin
"""

import argparse
import random
import sys

from mininet.log import setLogLevel

import mpqnet


def scenario(sid, step, seed):
    if sid == "s1":
        return [dict(rate=10, delay=10, loss=1), dict(rate=5, delay=5, loss=2)], []
    if sid == "s2":
        sched = [(i * step, "loss:2:%g" % l) for i, l in enumerate([4, 6, 8, 10], 1)]
        return [dict(rate=10, delay=5, loss=2), dict(rate=10, delay=5, loss=2)], sched
    if sid == "s3":
        sched = [(i * step, "delay:2:%g" % d) for i, d in enumerate([10, 15, 20, 25], 1)]
        return [dict(rate=10, delay=5, loss=2), dict(rate=10, delay=5, loss=2)], sched
    if sid == "s5":
        rng = random.Random(seed)
        sched = []
        for i in range(1, 30):
            for p in (1, 2):
                sched.append((i * step, "rate:%d:%d" % (p, rng.randint(10, 30))))
                sched.append((i * step, "delay:%d:%d" % (p, rng.randint(10, 30))))
                sched.append((i * step, "loss:%d:%d" % (p, rng.randint(2, 10))))
        return [dict(rate=20, delay=20, loss=2), dict(rate=20, delay=20, loss=2)], sched
    raise SystemExit("unknown scenario %r" % sid)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario-id", default="s1", choices=["s1", "s2", "s3", "s5"])
    ap.add_argument("--step", type=float, default=3.0, help="seconds between scheduled changes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--schedule", default="", help="extra handoff schedule, e.g. '5:down:1,9:up:1'")
    mpqnet.add_payload_flags(ap)
    args = ap.parse_args()
    setLogLevel("info")
    links, sched = scenario(args.scenario_id, args.step, args.seed)
    sched += mpqnet.parse_schedule(args.schedule)
    args.scenario = args.scenario or "llhd-" + args.scenario_id
    mpqnet.make_payload(args)
    pn = mpqnet.PathNet(links, routers_per_path=2, backend=args.backend, bin_dir=args.bin_dir)
    try:
        if not args.no_verify:
            # The delay is judged by the median of >= 20 ping replies (more
            # pings are sent on lossy paths), not by the mean, which a few
            # pings queued behind a busy CPU raise; rates are measured with
            # a UDP probe offered above the bottleneck.
            mpqnet.verify(pn.client, pn.server, pn.want(), args.bin_dir)
        mpqnet.run_payload(args, pn.client, pn.server, len(links), pn.capacity_bps(), sched, pn.action)
    finally:
        pn.stop()


if __name__ == "__main__":
    sys.exit(main())
