"""Summarises an EdAR data collection (cmd/edar-collect's manifest.jsonl)
into one JSON object for docs/edar.md.

  python scripts/edar_collect_summary.py TRANSITIONS_DIR > docs/edar/collect-summary.json

Only flows whose transition file exists count (a rerun appends to the
manifest; the last record of a flow wins).
"""

import json
import os
import sys


def main():
    d = sys.argv[1]
    recs = {}
    with open(os.path.join(d, "manifest.jsonl")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                recs[(r["setting"], r["seed"])] = r
    flows = []
    for (setting, seed), r in sorted(recs.items()):
        p = os.path.join(d, setting, f"flow-{seed:04d}-{r['mode']}.edar")
        if os.path.exists(p):
            flows.append((r, os.path.getsize(p)))
    known = ["i", "ii", "iii", "iv", "v", "space"]  # "space": collect_gym.py --space (issue 33)
    settings = sorted({r["setting"] for r, _ in flows}, key=lambda s: (known.index(s) if s in known else len(known), s))
    per = {s: sum(1 for r, _ in flows if r["setting"] == s) for s in settings}
    out = {
        "flows": len(flows),
        "settings": ",".join(settings),
        "per_setting": per,
        "bytes_range": f"{min(r['bytes'] for r, _ in flows) / 1e6:.1f}-{max(r['bytes'] for r, _ in flows) / 1e6:.1f} MB",
        "normal_flows": sum(1 for r, _ in flows if r["mode"] == "normal"),
        "redundant_flows": sum(1 for r, _ in flows if r["mode"] == "redundant"),
        "transitions": sum(r["transitions"] for r, _ in flows),
        "dropped_no_report": sum(r["no_report"] for r, _ in flows),
        "mb_on_disk": round(sum(s for _, s in flows) / 1e6, 1),
        "emulated_seconds": round(sum(r["fct_s"] or 0 for r, _ in flows)),
        "wall_seconds": round(sum(r["wall_s"] for r, _ in flows)),
        "errors": sum(1 for r, _ in flows if r.get("error")),
        "note": "wall_seconds sums the flows' wall times; with 2 flows at once the elapsed time is about half",
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
