"""The mean of EdAR's reward terms per TI under each fixed mode, through the
environment (docs/edar-generalisation.md, section 2):

  MPQ_GYM_BIN=bin/mpq-gym python reward_terms.py hetero-2path [--max-bytes 8000000] [--seed 1]
  MPQ_GYM_BIN=bin/mpq-gym python reward_terms.py path/to/scenario.json
  MPQ_GYM_BIN=bin/mpq-gym python reward_terms.py edar-handoff --max-bytes 0 --windows 20-40,60-80

For normal mode (all paths, new data) and redundant mode (all paths,
copies), one episode each: goodput, and the mean of r, V_g, V_w, V_o and
the reorder bytes over the TIs that got a receiver report. The terms are
what sched/edar.Reward computes (mpqgym's report columns vg, vw, vo).
With --windows, the same means are also given over the TIs that end
inside the windows (virtual seconds since the episode began) and over
the rest: edar-handoff's handoff windows are 20-40 and 60-80 s.
"""

import argparse

import numpy as np

import mpqgym


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", help="library name or scenario file (.json)")
    ap.add_argument("--max-bytes", type=int, default=8_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--windows", default="", help="START-END[,START-END...] in virtual seconds: also split the means")
    a = ap.parse_args()
    windows = [tuple(float(x) for x in w.split("-")) for w in a.windows.split(",") if w]
    kw = {"scenario_file": a.scenario} if a.scenario.endswith(".json") else {"scenario": a.scenario}
    env = mpqgym.make(edar=True, max_bytes=a.max_bytes, **kw)
    names = env.feature_names["report"]
    cols = {n: names.index(n) for n in ("vg", "vw", "vo", "reorder_bytes")}
    try:
        for mode, label in ((0, "normal"), (1, "redundant")):
            env.reset(seed=a.seed)
            rs, reps, ts = [], [], []
            while True:
                obs, r, term, trunc, info = env.step(np.array([1] * env.slots + [mode], np.int8))
                if info["reports"]:
                    rs.append(r)
                    reps.append(obs["report"].copy())
                    ts.append(info["time_s"])
                if term or trunc:
                    break
            reps = np.array(reps)
            terms = ", ".join(f"{n} {reps[:, i].mean():.3f}" for n, i in cols.items())
            print(f"{a.scenario} {label}: {info['result']['goodput_bps'] / 1e6:.2f} Mbit/s, mean r {np.mean(rs):.3f}, {terms} "
                  f"({len(rs)} TIs with a report)")
            if windows:
                rs, ts = np.array(rs), np.array(ts)
                inside = np.zeros(len(ts), bool)
                for lo, hi in windows:
                    inside |= (ts >= lo) & (ts < hi)
                for part, sel in (("inside the windows", inside), ("outside", ~inside)):
                    terms = ", ".join(f"{n} {reps[sel, i].mean():.3f}" for n, i in cols.items())
                    print(f"  {part}: mean r {rs[sel].mean():.3f}, {terms} ({sel.sum()} TIs)")
    finally:
        env.close()


if __name__ == "__main__":
    main()
