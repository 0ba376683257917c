"""Where an offline EdAR model copies, and how often training saw such states.

Runs a scenario greedily with a model through mpqgym (EdAR-p: the first TI
redundant, then the sign of Q(s, redundant) − Q(s, normal)), and prints, for
the TIs with two paths, the share of redundant decisions, the median
features (sched/edar/state.go's scales: RTT 100 ms = 1) of each path under
each action, and how Q(redundant) − Q(normal) correlates with each feature.
With --transitions it also counts the training transitions whose fast path
and slow path have RTTs like those the run saw.

  MPQ_GYM_BIN=bin/mpq-gym python diag_decisions.py \\
      --scenario-file ../../docs/edar-generalisation/scenarios/held-rtt-lossy.json \\
      --model ../../testdata/edar.onnx --transitions out/space-transitions

  MPQ_GYM_BIN=bin/mpq-gym python diag_decisions.py --scenario edar-handoff \\
      --max-bytes 0 --model ../../testdata/edar.onnx --windows 20-40,60-80

--scenario takes a library scenario instead of a file. With --windows
(virtual seconds since the episode began) the TIs that end inside the
windows and the others are reported apart, and for each seed and window
how long after its start the first redundant TI came, and the share of
redundant TIs in each half of the window (a handoff window degrades in
its first half and is unusable in its second: pkg/emu/schedule.go).

A diagnosis only: it changes no model and chooses nothing.
"""

import argparse
import sys

import jax
import numpy as np

import edar_data
import edar_model as m
import mpqgym
from train import load_onnx_params

FEATURES = ["rtt", "rto", "thr", "cwnd", "loss", "infl"]


def run(a):
    params = load_onnx_params(a.model)
    qf = jax.jit(m.q_values)
    kw = {"scenario": a.scenario} if a.scenario else {"scenario_file": a.scenario_file}
    env = mpqgym.make(edar=True, slots=3, step_timeout=600, **kw)
    rows = []
    try:
        for seed in range(1, a.seeds + 1):
            obs, _ = env.reset(seed=seed, options={**kw, "max_bytes": a.max_bytes})
            now = 0.0
            t = 0
            while True:
                n = max(1, int(obs["present"].sum()))
                q = np.asarray(qf(params, obs["edar_conn"][None], obs["edar_sub"][None], np.array([n], np.int32)))[0]
                act = 1 if t == 0 else int(q[1] > q[0])
                if t > 0 and n == 2:
                    rows.append((act, float(q[1] - q[0]), obs["edar_sub"][:2, -1].copy(), obs["edar_conn"].copy(), now, seed))
                obs, _, term, trunc, info = env.step(np.array([1, 1, 1, act], np.int8))
                now = info["time_s"]
                t += 1
                if term or trunc:
                    break
    finally:
        env.close()
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--scenario-file")
    src.add_argument("--scenario", help="a library scenario's name")
    ap.add_argument("--model", required=True)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-bytes", type=int, default=8_000_000)
    ap.add_argument("--transitions", help="a training collection (collect_gym.py --out) to count like states in")
    ap.add_argument("--windows", default="", help="START-END[,START-END...] in virtual seconds: report inside and outside apart")
    a = ap.parse_args(argv)
    rows = run(a)
    if not rows:
        sys.exit("no TI with two paths")
    windows = [tuple(float(x) for x in w.split("-")) for w in a.windows.split(",") if w]
    if windows:
        inside = lambda t: any(lo <= t < hi for lo, hi in windows)
        for label, keep in (("inside the windows", True), ("outside the windows", False)):
            print(f"== {label}")
            report([r for r in rows if inside(r[4]) == keep], None)
        onsets(rows, windows)
        return
    report(rows, a.transitions)


def onsets(rows, windows):
    """Prints, per seed and window, when the first redundant TI came after
    the window's start and the redundant share in each half."""
    print("== per window: first redundant TI after the start; redundant share in the first / second half")
    for seed in sorted({r[5] for r in rows}):
        t = np.array([r[4] for r in rows if r[5] == seed])
        act = np.array([r[0] for r in rows if r[5] == seed])
        for lo, hi in windows:
            mid = (lo + hi) / 2
            first = t[(t >= lo) & (t < hi) & (act == 1)]
            halves = [act[(t >= a) & (t < b)] for a, b in ((lo, mid), (mid, hi))]
            shares = " / ".join(f"{h.mean():.2f}" if len(h) else "-" for h in halves)
            after = f"{first[0] - lo:.2f} s" if len(first) else "never"
            print(f"  seed {seed}, {lo:g}-{hi:g} s: {after}; {shares}")


def report(rows, transitions):
    """Prints the decisions of rows, and with transitions the like states
    of that collection."""
    if not rows:
        print("no TI")
        return
    acts = np.array([r[0] for r in rows])
    dq = np.array([r[1] for r in rows])
    sub = np.stack([r[2] for r in rows])  # [k, path, feature]
    conn = np.stack([r[3] for r in rows])
    print(f"{len(rows)} TIs with two paths, {100 * acts.mean():.1f}% redundant")
    for act in (0, 1):
        sel = acts == act
        if not sel.any():
            continue
        print(f"{('normal', 'redundant')[act]}: {sel.sum()} TIs, mean Q(red) - Q(normal) {dq[sel].mean():.3f}")
        for p in range(2):
            print(f"  path {p} medians: " + " ".join(f"{f}={np.median(sub[sel, p, i]):.3f}" for i, f in enumerate(FEATURES)))
        print(f"  previous action (mean) {conn[sel, 0].mean():.2f}")
    print("correlation of Q(red) - Q(normal) with:")
    for p in range(2):
        print(f"  path {p}: " + " ".join(f"{f} {np.corrcoef(sub[:, p, i], dq)[0, 1]:+.2f}"
                                         for i, f in enumerate(FEATURES) if sub[:, p, i].std() > 0))
    print(f"  previous action {np.corrcoef(conn[:, 0], dq)[0, 1]:+.2f}")
    if transitions:
        d = edar_data.load_dir(transitions)
        two = d["n"] == 2
        rtt = d["s_sub"][:, :2, -1, 0]
        fast, slow = rtt.min(axis=1), rtt.max(axis=1)
        run_fast = np.median(sub[:, :, 0].min(axis=1))
        run_slow = np.median(sub[:, :, 0].max(axis=1))
        like = two & (fast <= 1.5 * run_fast) & (slow >= run_slow / 1.5)
        print(f"training: {len(d['n'])} transitions, {two.sum()} with two paths; fast path RTT <= {1.5 * run_fast:.3f} "
              f"and slow path RTT >= {run_slow / 1.5:.3f}: {like.sum()} ({100 * like.sum() / max(1, two.sum()):.2f}%), "
              f"{100 * d['a'][like].mean() if like.any() else float('nan'):.0f}% of them redundant")


if __name__ == "__main__":
    main()
