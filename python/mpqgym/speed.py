"""Environment speed (a report, `make gym-speed`): decision steps per second
per core on hetero-2path and edar-handoff, and the wall time of one 100 s
episode. Per core = steps / (CPU seconds of the mpq-gym process + of this
Python process), so it does not depend on how busy the machine is; the wall
figures do. The policy is the fixed action {all paths, new data} (minRTT),
so the figures measure the environment, not an agent.

    python speed.py [--episodes 3] [--scenarios hetero-2path,edar-handoff] [--vector 2]
"""

import argparse
import os
import time

import numpy as np

import mpqgym


def cpu_of(pid):
    """utime + stime of a live process, s."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(scenario, episodes, edar):
    env = mpqgym.make(scenario, edar=edar)
    act = np.ones(env.slots + 1, np.int8)
    act[-1] = 0
    rows = []
    try:
        for ep in range(episodes):
            env.reset(seed=ep + 1)
            pid = env._proc.proc.pid
            g0, p0, w0 = cpu_of(pid), time.process_time(), time.perf_counter()
            n = 0
            while True:
                _, _, term, trunc, info = env.step(act)
                n += 1
                if term or trunc:
                    break
            wall, go, py = time.perf_counter() - w0, cpu_of(pid) - g0, time.process_time() - p0
            rows.append((n, wall, go, py, info["time_s"]))
    finally:
        env.close()
    return rows


def vector(scenario, num_envs, steps):
    envs = mpqgym.make_vec(scenario, num_envs=num_envs)
    act = np.ones((num_envs, envs.single_action_space.n), np.int8)
    act[:, -1] = 0
    try:
        envs.reset(seed=1)
        t = time.perf_counter()
        for _ in range(steps):
            envs.step(act)
        return num_envs * steps / (time.perf_counter() - t)
    finally:
        envs.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--scenarios", default="hetero-2path,edar-handoff")
    ap.add_argument("--vector", type=int, default=2, help="also step N processes at once (0: skip)")
    ap.add_argument("--edar", action="store_true", help="with EdAR's state in the observation")
    a = ap.parse_args()
    print(f"load average {open('/proc/loadavg').read().split()[:3]}, {os.cpu_count()} cores")
    for sc in a.scenarios.split(","):
        rows = measure(sc, a.episodes, a.edar)
        for n, wall, go, py, vt in rows:
            print(f"{sc}: {n} steps ({vt:.1f} s virtual) in {wall:.2f} s wall; CPU: mpq-gym {go:.2f} s, "
                  f"python {py:.2f} s; {n / (go + py):.0f} steps/s per core, {n / wall:.0f} steps/s wall, "
                  f"{1e6 * py / n:.0f} us of python per step")
        per_core = sorted(n / (go + py) for n, _, go, py, _ in rows)
        print(f"{sc}: median {per_core[len(per_core) // 2]:.0f} steps/s per core (range {per_core[0]:.0f}-{per_core[-1]:.0f})")
        if a.vector:
            print(f"{sc}: {a.vector} processes at once: {vector(sc, a.vector, 400):.0f} steps/s wall in total")


if __name__ == "__main__":
    main()
