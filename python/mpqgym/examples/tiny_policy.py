"""Train a tiny scheduling policy with mpqgym in a few minutes and export it
for mpquic-bench (the README's example).

    python python/mpqgym/examples/tiny_policy.py --scenario wifi-handoff --minutes 3 --out tiny.onnx
    bin/mpquic-bench run -schedulers learned,minrtt,redundant -policy tiny.onnx -scenarios wifi-handoff -seeds 5

The policy is linear in the normalised observation (conn, paths, present,
report: 73 numbers for two paths) and chooses, once per decision interval,
between new data on every path (minRTT) and copies on every path (EdAR's
redundant mode): 148 parameters. It is trained with the cross-entropy method
on the environment's default reward (EdAR's): sample parameter vectors
around a mean, run one episode each (two environments at once), keep the
best quarter, move the mean and spread to them, repeat until time is up.
numpy only; exporting needs onnx (pip install 'mpqgym[export]').
"""

import argparse
import time

import numpy as np

import mpqgym
from mpqgym import export

INPUTS = ("conn", "paths", "present", "report")


def episode_returns(envs, thetas, seeds, mean, std, slots):
    """One episode per parameter vector, envs.num_envs at a time; returns the
    sum of rewards of each."""
    out = []
    for k in range(0, len(thetas), envs.num_envs):
        batch = thetas[k:k + envs.num_envs]
        obs, _ = envs.reset(seed=[int(s) for s in seeds[k:k + envs.num_envs]] + [0] * (envs.num_envs - len(batch)))
        total = np.zeros(envs.num_envs)
        live = np.array([i < len(batch) for i in range(envs.num_envs)])
        while live.any():
            x = export.flatten(obs, INPUTS)
            acts = np.zeros((envs.num_envs, slots + 1), np.int8)
            for i in range(envs.num_envs):
                w = batch[i] if i < len(batch) else batch[0]
                logits = export.mlp_forward(x[i:i + 1], [w], mean=mean, std=std)[0]
                acts[i] = export.action_of(logits, slots, "modes")
            obs, r, term, trunc, _ = envs.step(acts)
            total += r * live
            live &= ~(term | trunc)
        out.extend(total[:len(batch)])
    return np.array(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="wifi-handoff")
    ap.add_argument("--minutes", type=float, default=3)
    ap.add_argument("--population", type=int, default=8)
    ap.add_argument("--envs", type=int, default=2)
    ap.add_argument("--out", default="tiny.onnx")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    envs = mpqgym.make_vec(a.scenario, num_envs=a.envs)
    slots = envs.single_action_space.n - 1
    # Normalisation from a short minRTT rollout.
    obs, _ = envs.reset(seed=1000)
    xs = []
    act = np.ones((a.envs, slots + 1), np.int8)
    act[:, -1] = 0
    for _ in range(200):
        obs, *_ = envs.step(act)
        xs.append(export.flatten(obs, INPUTS))
    xs = np.concatenate(xs)
    mean, std = xs.mean(0), xs.std(0) + 1e-3
    n = xs.shape[1]
    mu, sigma = np.zeros((n + 1, 2)), np.full((n + 1, 2), 0.5)
    mu[-1] = [0.5, -0.5]  # start near minRTT: new data unless the features say otherwise
    t0, it = time.time(), 0
    while time.time() - t0 < 60 * a.minutes:
        it += 1
        cand = mu + sigma * rng.standard_normal((a.population,) + mu.shape)
        thetas = [(c[:-1], c[-1]) for c in cand]
        seeds = rng.integers(1, 1 << 30, a.population)
        ret = episode_returns(envs, thetas, seeds, mean, std, slots)
        elite = cand[np.argsort(ret)[-max(2, a.population // 4):]]
        mu, sigma = elite.mean(0), elite.std(0) + 0.02
        print(f"iteration {it}: return mean {ret.mean():.1f}, best {ret.max():.1f} ({time.time() - t0:.0f} s)", flush=True)
    envs.close()
    export.export_mlp(a.out, [(mu[:-1], mu[-1])], slots=slots, inputs=INPUTS, actions="modes", mean=mean, std=std,
                      metadata={"mpqgym.trained_on": a.scenario, "mpqgym.method": "cross-entropy, linear"})
    print(f"wrote {a.out}: run it with  bin/mpquic-bench run -schedulers learned,minrtt,redundant -policy {a.out} "
          f"-scenarios {a.scenario} -seeds 5")


if __name__ == "__main__":
    main()
