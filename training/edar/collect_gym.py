"""EdAR's data collection (Algorithm 1, lines 1-8) through the training
environment (python/mpqgym): the same flows as cmd/edar-collect, each a
reset of an mpqgym environment whose agent is the flow's fixed policy.

  python collect_gym.py --out DIR [--settings i,ii,iii] [--flows 100]
                        [--min-bytes 10000000] [--max-bytes 25000000] [--seed 1] [--procs 2]
  python collect_gym.py --out DIR --space 300 [--switch-every 25] [--seed 1] [--procs 2]

--space N draws N flows from the training space of space.py instead of
settings i-iii (issue 33): flow k's network is space.draw(seed + k), written
as DIR/space/scenarios/<seed>.json and run through mpqgym with 3 path slots,
its transfer size the draw's, at most --max-seconds of virtual time.
--switch-every T (0 = off, the paper's fixed μ per flow) redraws the flow's
mode with probability 1/T after each TI, so that both actions are taken from
the same states of one network (a mean segment of T TIs).

For each flow of each setting: μ(s) = normal or redundant drawn at random
(line 3), the size uniform in [min, max] bytes, the setting resolved with the
flow's seed. The first TI is redundant, as sched/edar starts. A transition
(s_t, a_t, r_t, s_{t+1}) takes as r_t the reward the environment returns one
step later: the reports received during TI t+1, as sched/edar credits them
(docs/edar-format.md); a TI with no report gives no transition, and the last
one is done (y = r). One file per flow, DIR/<setting>/flow-<seed>-<mode>.edar,
written atomically, so a rerun skips finished flows; DIR/manifest.jsonl gets
a line per flow. --procs environments run at once (one mpq-gym process each).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

import edar_data
import mpqgym
import space

NORMAL, REDUNDANT = 0, 1


class Flow:
    def __init__(self, setting, seed, mode, nbytes, path, scenario_file=None):
        self.setting, self.seed, self.mode, self.bytes, self.path = setting, seed, mode, nbytes, path
        self.scenario_file = scenario_file
        self.rng = np.random.default_rng([seed, 0x5717])  # mode switches
        self.rows = []  # (n, conn, sub, a) per step, and the reward arriving one step later


def plan_space(a):
    flows = []
    sdir = os.path.join(a.out, "space", "scenarios")
    os.makedirs(sdir, exist_ok=True)
    held = space.held_back()
    for k in range(a.space):
        seed = a.seed + k
        sc, _ = space.draw(seed, held)
        f = os.path.join(sdir, f"{seed:05d}.json")
        with open(f, "w") as fh:
            json.dump(sc, fh, indent=1)
        mode = int(np.random.default_rng([seed, 3, 0xED]).integers(2))
        name = "redundant" if mode else "normal"
        flows.append(Flow("space", seed, mode, sc["bytes"], os.path.join(a.out, "space", f"flow-{seed:04d}-{name}.edar"), f))
    return flows


def plan(a):
    if a.space:
        return plan_space(a)
    flows = []
    for sid in a.settings.split(","):
        for k in range(a.flows):
            seed = a.seed + k
            rng = np.random.default_rng([seed, len(sid), 0xED])
            mode = int(rng.integers(2))  # Algorithm 1 line 3
            nbytes = int(rng.integers(a.min_bytes, a.max_bytes + 1))
            name = "redundant" if mode else "normal"
            path = os.path.join(a.out, sid, f"flow-{seed:04d}-{name}.edar")
            flows.append(Flow(sid, seed, mode, nbytes, path))
    return flows


def transitions(steps, slots):
    """The record array of one flow: steps[t] = [n, conn, sub, a_t, R, k]
    with R the reward of the k reports received during TI t (what step t
    returned). Transition t is (s_t, a_t, R of steps[t+1], s_{t+1}): the
    reports of TI t+1 credit a_t; none (k = 0) drops it, as sched/edar does.
    Returns the records and the number dropped."""
    dt = edar_data.record_dtype(slots)
    out = []
    dropped = 0
    for t in range(len(steps) - 2):  # the last step's TI has no report after it
        n, conn, sub, a, _, _ = steps[t]
        n2, conn2, sub2, _, r, reports = steps[t + 1]
        if reports == 0:
            dropped += 1
            continue
        rec = np.zeros((), dt)
        rec["n"], rec["n2"], rec["a"], rec["r"] = n, n2, a, r
        rec["s"]["conn"], rec["s"]["sub"] = conn, sub
        rec["s2"]["conn"], rec["s2"]["sub"] = conn2, sub2
        out.append(rec)
    if out:
        out[-1]["done"] = 1
    return np.array(out, dt), dropped


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--settings", default="i,ii,iii")
    ap.add_argument("--flows", type=int, default=100)
    ap.add_argument("--min-bytes", type=int, default=10_000_000)
    ap.add_argument("--max-bytes", type=int, default=25_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--space", type=int, default=0, help="flows drawn from space.py's training space (0: --settings)")
    ap.add_argument("--switch-every", type=float, default=0, help="mean TIs between mode redraws (0: fixed per flow)")
    ap.add_argument("--max-seconds", type=float, default=30, help="virtual-time limit of a --space flow, s")
    ap.add_argument("--report-per-ti", action="store_true",
                    help="the receiver reports once per TI (mpqgym's report_per_min_rtt) instead of every 20 ms; "
                         "not how the shipped model was collected (docs/edar-generalisation.md)")
    a = ap.parse_args(argv)
    todo = [f for f in plan(a) if not os.path.exists(f.path)]
    print(f"collect_gym: {len(todo)} flows to run through mpqgym ({a.procs} at once)", file=sys.stderr, flush=True)
    if not todo:
        return
    for sid in ("space",) if a.space else a.settings.split(","):
        os.makedirs(os.path.join(a.out, sid), exist_ok=True)
    slots = 3 if a.space else 2  # settings i-v have two paths, the space 2-3
    first = {"scenario_file": todo[0].scenario_file} if a.space else {"scenario": f"edar-setting-{todo[0].setting}"}
    envs = [mpqgym.make(**first, edar=True, slots=slots, step_timeout=600, report_per_min_rtt=a.report_per_ti)
            for _ in range(a.procs)]
    manifest = open(os.path.join(a.out, "manifest.jsonl"), "a")
    t0 = time.time()
    queue = list(todo)
    cur = [None] * len(envs)  # flow, steps, last obs, start wall time
    done = 0

    def start(i):
        if not queue:
            cur[i] = None
            return
        f = queue.pop(0)
        if f.scenario_file:
            # The reward's goodput scale stays the paper's fixed unit (sched/edar DefaultReward).
            envs[i]._begin_reset(f.seed, {"scenario_file": f.scenario_file, "bytes": f.bytes, "max_seconds": a.max_seconds})
        else:
            envs[i]._begin_reset(f.seed, {"scenario": f"edar-setting-{f.setting}", "bytes": f.bytes})
        cur[i] = [f, [], None, time.time()]

    def act(i, obs):
        f, steps, _, _ = cur[i]
        if steps and a.switch_every > 0 and f.rng.random() < 1 / a.switch_every:
            f.mode ^= 1
        a_t = REDUNDANT if not steps else f.mode  # the first TI is redundant (sched/edar)
        n = int(obs["present"].sum())
        steps.append([n, obs["edar_conn"], obs["edar_sub"], a_t, 0.0, 0])
        envs[i]._begin_step(np.array([1] * slots + [a_t], np.int8))

    for i in range(len(envs)):
        start(i)
    for i, e in enumerate(envs):
        if cur[i]:
            obs, _ = e._end_reset()
            act(i, obs)
    while any(cur):
        for i, e in enumerate(envs):
            if not cur[i]:
                continue
            obs, r, term, trunc, info = e._end_step()
            f, steps, _, w0 = cur[i]
            steps[-1][4], steps[-1][5] = r, info["reports"]  # the reports of the TI that just ended
            if term or trunc:
                # s_{T+1} with no reward after it: the last transition is
                # (s_{T-1}, a_{T-1}) with the reports of the partial TI T,
                # done, as sched/edar's EndOfFlow makes it.
                steps.append([int(obs["present"].sum()), obs["edar_conn"], obs["edar_sub"], 0, 0.0, 0])
                rec, dropped = transitions(steps, slots)
                res = info["result"]
                if len(rec):
                    edar_data.write_file(f.path, rec, slots)
                line = {"setting": f.setting, "seed": f.seed, "mode": os.path.basename(f.path).split("-")[-1][:-5], "bytes": f.bytes,
                        "redundant_steps": sum(s[3] for s in steps[:-1]),
                        "received_bytes": res.get("bytes"), "fct_s": res.get("fct_s"), "goodput_bps": res.get("goodput_bps"),
                        "transitions": len(rec), "no_report": dropped, "steps": len(steps) - 1, "wall_s": round(time.time() - w0, 2),
                        "error": res.get("error") or ("" if term else "truncated")}
                manifest.write(json.dumps(line) + "\n")
                manifest.flush()
                done += 1
                print(f"[{done}/{len(todo)}] setting {f.setting} seed {f.seed} {line['mode']} {f.bytes / 1e6:.1f} MB: "
                      f"{(res.get('goodput_bps') or 0) / 1e6:.2f} Mbit/s, {len(rec)} transitions ({line['wall_s']} s wall, "
                      f"{time.time() - t0:.0f} s total)", file=sys.stderr, flush=True)
                start(i)
                if cur[i]:
                    obs, _ = e._end_reset()
                    act(i, obs)
            else:
                act(i, obs)
    for e in envs:
        e.close()
    print(f"collect_gym: {len(todo)} flows in {time.time() - t0:.1f} s wall", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
