"""The scenario space EdAR trains on (issue 33), and the held-back settings
that training never sees.

  python space.py draw --seed 7 [--out FILE]     one training scenario as JSON
  python space.py check                          draw 2,000 and print coverage

A training episode's network is drawn here, per seed, from RANGES: 2-3
paths, each with its own down/up rate, one-way delay, Bernoulli loss, queue
size and jitter; the receiver's buffer; and, on one path at most, outages
(a Poisson process), EdAR-style handoffs or a measured LTE capacity trace.
The drawn scenario is written as a scenario file (pkg/scenario's JSON, with
its own `ranges` for the outage and handoff windows, which mpq-gym resolves
with the episode's seed) and run through mpqgym by collect_gym.py.

Held back: the scenario files in HELD_BACK_DIR (docs/edar-generalisation/
scenarios/). A draw is rejected, and drawn again, when it is *near* one of
them (`near`): the same number of paths and, paths matched in order of
rate, every rate and every RTT within a factor NEAR_FACTOR of the held-back
path's. Besides, training never uses what only the held-back settings use:
the Verizon trace and the built-in synthetic drive trace, Gilbert-Elliott
(bursty) loss, shared bottlenecks and cross traffic. The workload settings
(files with a "workload") run on the paths of bulk ones, so they reject no
draw the bulk ones do not; bulk_held_back_files lists the others.

Units follow pkg/scenario: rates bits/s, delays Go duration strings
(one-way), sizes bytes, loss a probability.
"""

import argparse
import glob
import json
import math
import os
import sys

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HELD_BACK_DIR = os.path.join(REPO, "docs", "edar-generalisation", "scenarios")
# Measured Mahimahi LTE traces (FACTS.md: used from their path, never copied
# into the project). Training draws only these two; Verizon is held back.
TRACE_DIR = os.environ.get("EDAR_TRACE_DIR", os.path.join(REPO, "..", "shared", "traces"))
TRAIN_TRACES = ("ATT-LTE-driving-2016.down", "TMobile-LTE-driving.down")
TRACE_MEAN_BPS = {}  # filled lazily: mean delivery rate of each trace, bits/s

# The ranges of the training draw. Log-uniform where the range spans more
# than a factor of 10.
RANGES = {
    "paths": (2, 3),
    "rate_bps": (2e6, 60e6),           # per path, down; up is 0.5-1x down
    "owd_ms": (2.0, 120.0),            # one-way delay, so RTT 4-240 ms
    "loss_zero_p": 0.5,                # share of lossless paths
    "loss": (1e-4, 2e-2),              # otherwise log-uniform
    "queue_bytes": (32 << 10, 1 << 20),
    "jitter_ms": (0.0, 3.0),
    "recv_default_p": 0.4,             # share of runs with the session default (4 MiB)
    "recv_buffer": (256 << 10, 8 << 20),
    "outage_p": 0.15,                  # one path gets an outage process
    "handoff_p": 0.15,                 # one path gets EdAR handoffs
    "trace_p": 0.15,                   # one path's down link follows a measured trace
    "bytes": (3_000_000, 12_000_000),
}
NEAR_FACTOR = 1.35
DURATION_S = 40


def _logu(rng, lo, hi):
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _ms(x):
    return f"{x:.3f}ms"


def trace_mean_bps(name):
    """Mean delivery rate of a Mahimahi trace, bits/s (one 1500-byte packet
    per line, each line a millisecond timestamp)."""
    if name not in TRACE_MEAN_BPS:
        with open(os.path.join(TRACE_DIR, name)) as f:
            ts = [int(x) for x in f if x.strip()]
        TRACE_MEAN_BPS[name] = len(ts) * 1500 * 8 / (max(ts) / 1000.0)
    return TRACE_MEAN_BPS[name]


def traces_available():
    return all(os.path.exists(os.path.join(TRACE_DIR, t)) for t in TRAIN_TRACES)


def _path(rng, i):
    rate = _logu(rng, *RANGES["rate_bps"])
    owd = _logu(rng, *RANGES["owd_ms"])
    loss = 0.0 if rng.random() < RANGES["loss_zero_p"] else _logu(rng, *RANGES["loss"])
    q = int(_logu(rng, *RANGES["queue_bytes"]))
    jit = rng.uniform(*RANGES["jitter_ms"])
    down = {"rate_bps": round(rate), "delay": _ms(owd), "loss": loss, "queue_bytes": q}
    if jit >= 0.5:
        down["jitter"] = _ms(jit)
    up = dict(down, rate_bps=round(rate * rng.uniform(0.5, 1.0)))
    up.pop("jitter", None)
    return {"name": f"p{i}", "up": up, "down": down}


def draw_raw(seed):
    """One scenario dict of the space for seed, before the held-back check."""
    rng = np.random.default_rng([seed, 0x33])
    n = int(rng.integers(RANGES["paths"][0], RANGES["paths"][1] + 1))
    paths = [_path(rng, i) for i in range(n)]
    sc = {"name": f"edar-space-{seed}", "description": f"EdAR training space draw, seed {seed} (training/edar/space.py)",
          "paths": paths, "bytes": int(rng.integers(RANGES["bytes"][0], RANGES["bytes"][1] + 1)),
          "duration": f"{DURATION_S}s"}
    if rng.random() >= RANGES["recv_default_p"]:
        sc["receive_buffer"] = int(_logu(rng, *RANGES["recv_buffer"]))
    # At most one of outage, handoff, trace, on one path.
    u, k = rng.random(), int(rng.integers(n))
    pr = [{} for _ in range(n)]
    if u < RANGES["outage_p"]:
        lo = rng.uniform(0.5, 3.0)
        pr[k]["outage_process"] = {"mean_gap": f"{rng.uniform(5, 15):.2f}s", "min_len": f"{lo:.2f}s",
                                   "max_len": f"{lo + rng.uniform(0, 3):.2f}s", "offset": f"{rng.uniform(1, 4):.2f}s"}
        sc["tags"] = ["outage"]
    elif u < RANGES["outage_p"] + RANGES["handoff_p"]:
        every = rng.uniform(8, 15)
        lo = rng.uniform(2, 4)
        pr[k]["handoff"] = {"every": f"{every:.2f}s", "offset": f"{rng.uniform(0, 3):.2f}s",
                            "min_len": f"{lo:.2f}s", "max_len": f"{min(every, lo + rng.uniform(0, 4)):.2f}s"}
        sc["tags"] = ["handoff"]
    elif u < RANGES["outage_p"] + RANGES["handoff_p"] + RANGES["trace_p"] and traces_available():
        t = TRAIN_TRACES[int(rng.integers(len(TRAIN_TRACES)))]
        d = paths[k]["down"]
        d["trace"] = os.path.abspath(os.path.join(TRACE_DIR, t))
        d["rate_bps"] = round(trace_mean_bps(t))
        d["loss"] = 0.0
        sc["tags"] = ["trace"]
    if any(pr):
        while pr and not pr[-1]:
            pr.pop()
        sc["ranges"] = {"paths": pr}
    return sc


def signature(sc):
    """(rate bits/s, RTT s) of every path's down link, in order of rate."""
    out = []
    for p in sc["paths"]:
        d, u = p["down"], p["up"]
        out.append((float(d["rate_bps"]), _dur_s(d["delay"]) + _dur_s(u["delay"])))
    return sorted(out)


def _dur_s(s):
    for suf, k in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0)):
        if s.endswith(suf):
            try:
                return float(s[: -len(suf)]) * k
            except ValueError:
                pass
    m = 0.0
    # "1m0s"-style strings
    if "m" in s and not s.endswith("ms"):
        a, b = s.split("m", 1)
        m = float(a) * 60
        return m + (_dur_s(b) if b else 0)
    raise ValueError(f"duration {s!r}")


def near(sig, held):
    """Whether signature sig is within NEAR_FACTOR, path by path, of held."""
    if len(sig) != len(held):
        return False
    for (r, t), (hr, ht) in zip(sig, held):
        if not (hr / NEAR_FACTOR <= r <= hr * NEAR_FACTOR and ht / NEAR_FACTOR <= t <= ht * NEAR_FACTOR):
            return False
    return True


def held_back():
    """{name: scenario dict} of the held-back settings (their "-only"
    single-path baselines excluded)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(HELD_BACK_DIR, "*.json"))):
        with open(f) as fh:
            sc = json.load(fh)
        out[sc["name"]] = sc
    if not out:
        raise SystemExit(f"space: no held-back settings in {HELD_BACK_DIR}")
    return out


def bulk_held_back_files():
    """The held-back scenario files without a "workload" (one bulk
    transfer each), sorted: the settings EdAR-o warms up on
    (online_gym.py --family heldback)."""
    out = []
    for f in sorted(glob.glob(os.path.join(HELD_BACK_DIR, "*.json"))):
        with open(f) as fh:
            if "workload" not in json.load(fh):
                out.append(f)
    return out


def draw(seed, held=None):
    """The training scenario of seed: draw_raw(seed), redrawn (seed, 1),
    (seed, 2), ... while it is near a held-back setting. Returns the
    scenario and the number of rejected draws."""
    held = held_back() if held is None else held
    sigs = [signature(h) for h in held.values()]
    for attempt in range(1000):
        sc = draw_raw(seed if attempt == 0 else seed * 1000 + attempt + 10**9)
        if not any(near(signature(sc), h) for h in sigs):
            sc["name"] = f"edar-space-{seed}"
            return sc, attempt
    raise RuntimeError(f"space: seed {seed}: every draw is near a held-back setting")


def capacity_bps(sc):
    """Sum of the paths' down rates (a trace's mean rate), bits/s: the
    reward's goodput scale (docs/edar-generalisation.md)."""
    return sum(float(p["down"]["rate_bps"]) for p in sc["paths"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("draw")
    d.add_argument("--seed", type=int, required=True)
    d.add_argument("--out")
    sub.add_parser("check")
    a = ap.parse_args(argv)
    if a.cmd == "draw":
        sc, _ = draw(a.seed)
        txt = json.dumps(sc, indent=1)
        if a.out:
            with open(a.out, "w") as f:
                f.write(txt)
        else:
            print(txt)
        return
    held = held_back()
    rej, n, kinds = 0, 0, {}
    for s in range(2000):
        sc, r = draw(s, held)
        rej += r
        n += len(sc["paths"])
        for t in sc.get("tags", ["plain"]):
            kinds[t] = kinds.get(t, 0) + 1
    print(json.dumps({"draws": 2000, "rejected": rej, "mean_paths": n / 2000, "kinds": kinds}))


if __name__ == "__main__":
    sys.exit(main())
