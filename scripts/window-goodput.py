#!/usr/bin/env python3
"""Goodput inside and outside a scenario's handoff/outage windows.

Usage: scripts/window-goodput.py RESULTS.jsonl [RESULTS.jsonl ...]

For each scheduler (and run label) it integrates the recorded goodput series
(goodput_series_bps on series_t_s, the end of each interval) over the union
of the runs' handoff and outage windows ("handoff") and over the rest of the
run up to its FCT ("stable"), and prints the mean over seeds in Mbit/s with
the number of runs. Stdlib only.
"""
import json
import sys
from collections import defaultdict


def windows(r):
    ws = []
    for key in ("handoffs_s", "outages_s"):
        for w in r.get(key) or []:
            ws.append((float(w[0]), float(w[1])))
    return ws


def split(r):
    ts, gs = r.get("series_t_s") or [], r.get("goodput_series_bps") or []
    ws = windows(r)
    fct = float(r["fct_s"])
    inside = outside = tin = tout = 0.0
    prev = 0.0
    for t, g in zip(ts, gs):
        t = float(t)
        lo, hi = prev, min(t, fct)
        prev = t
        if hi <= lo:
            continue
        # the part of [lo, hi) inside the windows
        cover = sum(max(0.0, min(hi, b) - max(lo, a)) for a, b in ws)
        inside += g * cover
        outside += g * (hi - lo - cover)
        tin += cover
        tout += hi - lo - cover
    return (inside / tin if tin else float("nan")), (outside / tout if tout else float("nan"))


def main(paths):
    rows = defaultdict(list)
    for path in paths:
        label = path
        for line in open(path):
            r = json.loads(line)
            key = (r["scenario"], r["scheduler"], label)
            rows[key].append(split(r))
    print(f"{'scenario':<22} {'scheduler':<14} {'runs':>4} {'handoff Mbit/s':>15} {'stable Mbit/s':>14}  file")
    for (scn, sch, label), v in sorted(rows.items()):
        h = sum(x[0] for x in v) / len(v) / 1e6
        s = sum(x[1] for x in v) / len(v) / 1e6
        print(f"{scn:<22} {sch:<14} {len(v):>4} {h:>15.2f} {s:>14.2f}  {label}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
