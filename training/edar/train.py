"""DQN trainer for EdAR (paper §V.A, Algorithm 1 lines 9-21).

  python train.py --transitions DIR --out model.onnx [--steps N] [--seed S]

Reads the transition files written by sched/edar, trains the Q-network with
Adam (lr 1e-4), batch 32 sampled from the replay buffer, target network with
soft updates tau = 0.01 and discount gamma = 0.6 (paper §VI), holds out 10%
of the transitions, exports ONNX (edar_export.py) and refuses the export if
ONNX and JAX disagree by more than 1e-5 on the held-out states. Writes the
training curve next to the model: <out>.curve.csv and, with matplotlib,
<out>.curve.png.

--export chooses the network written. "average" (the default) is the mean
of the target network θ' over the second half of the steps; "target" is θ'
at the end, the soft-updated average θ' ← τθ + (1−τ)θ' of Algorithm 1 line
20; "online" is θ, the network the paper's Algorithm 1 returns (line 21).
Why: EdAR acts on the sign of Q(s, redundant) − Q(s, normal), which is close
to 0 in many states, so the decisions of one snapshot depend on where the
last steps left it. On the training space's held-out transitions
(docs/edar-generalisation.md, "Which network is exported"), read every 400
steps over the last 10,000, θ's redundant fraction ranged 0.01-0.44 (sd
0.09) and θ''s 0.03-0.18 (sd 0.03); θ' at step 20,000 exported 0.172 with
training seed 0 and 0.071-0.084 with seeds 1-3, the average 0.057-0.088
with seeds 0-3. The curve records θ and θ'.
"""

import argparse
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import dqn
import edar_data
import edar_export
import edar_model as m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transitions", required=True, help="directory of *.edar files, or one file")
    ap.add_argument("--out", required=True, help="ONNX model to write")
    ap.add_argument("--steps", type=int, default=5000, help="gradient steps (M)")
    ap.add_argument("--batch", type=int, default=32, help="minibatch size (H)")
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--gamma", type=float, default=None,
                    help="discount (default 0.6, the paper's; with --init, that model's edar.gamma)")
    ap.add_argument("--tau", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--randomize-prev-action", action="store_true",
                    help="offline data from fixed-policy flows: replace the a_{t-1} input of s and s' by a random bit "
                         "in every minibatch (see README)")
    ap.add_argument("--export", choices=("average", "target", "online"), default="average",
                    help="write the mean of θ' over the second half of training (default), θ' at the end, "
                         "or the online network θ (the paper's Algorithm 1)")
    ap.add_argument("--init", help="start from this ONNX model's weights (online learning)")
    ap.add_argument("--synthetic", action="store_true",
                    help="label the model as trained on synthetic transitions (not for use)")
    a = ap.parse_args(argv)

    if a.gamma is None:
        a.gamma = model_gamma(a.init) if a.init else 0.6
    t_start = time.time()
    d = edar_data.load_dir(a.transitions)
    N = len(d["r"])
    rng = np.random.default_rng(a.seed)
    perm = rng.permutation(N)
    n_hold = max(1, N // 10)
    hold, train = perm[:n_hold], perm[n_hold:]
    if len(train) < a.batch:
        sys.exit(f"train.py: {N} transitions is too few for batch {a.batch}")
    print(f"loaded {N} transitions from {len(d['files'])} files "
          f"({len(train)} train, {n_hold} held out); actions: {np.bincount(d['a'], minlength=2).tolist()}, "
          f"reward mean {d['r'].mean():.3f} sd {d['r'].std():.3f}", flush=True)

    dev = {k: jnp.asarray(v) for k, v in d.items() if k != "files"}
    params = load_onnx_params(a.init) if a.init else m.init(jax.random.PRNGKey(a.seed))
    target = params
    # The data are arguments of the jitted update, not closed-over
    # constants: XLA then compiles a small program in seconds instead of
    # embedding the whole replay buffer in it (minutes for 100k transitions).
    rand_prev = a.randomize_prev_action
    opt, dqn_update = dqn.make_update(a.lr, a.gamma, a.tau, a.batch, rand_prev)
    opt_state = opt.init(params)
    train_idx = jnp.asarray(train)
    n_train = len(train)

    def update(p, tgt, s, key, data, tidx):
        return dqn_update(p, tgt, s, key, data, tidx, n_train)

    hold_idx = jnp.asarray(hold[:2048])  # the curve's held-out decision fraction: a fixed sample keeps it cheap

    @jax.jit
    def heldout_redundant(p, data, hidx):
        hq = m.q_values(p, data["s_conn"][hidx], data["s_sub"][hidx], data["n"][hidx])
        return (hq[:, 1] > hq[:, 0]).mean()

    @jax.jit
    def running_mean(avg, x, k):
        return jax.tree_util.tree_map(lambda u, v: u + (v - u) / k, avg, x)

    avg, n_avg = target, 0
    key = jax.random.PRNGKey(a.seed + 1)
    curve = []
    t_train = time.time()
    acc_l = acc_q = 0.0
    every = max(1, a.steps // 50)
    for step in range(1, a.steps + 1):
        key, sk = jax.random.split(key)
        params, target, opt_state, loss, qm = update(params, target, opt_state, sk, dev, train_idx)
        acc_l += loss
        acc_q += qm
        if step > a.steps // 2:
            n_avg += 1
            avg = running_mean(avg, target, n_avg)
        if step % every == 0:
            red = float(heldout_redundant(params, dev, hold_idx))
            red_t = float(heldout_redundant(target, dev, hold_idx))
            curve.append((step, float(acc_l) / every, float(acc_q) / every, red, time.time() - t_train, red_t))
            acc_l = acc_q = 0.0
    train_s = time.time() - t_train
    if a.export == "target":
        params = target
    elif a.export == "average":
        params = avg
    hq = np.asarray(m.q_values(params, d["s_conn"][hold], d["s_sub"][hold], d["n"][hold]))
    red = hq[:, 1] > hq[:, 0]
    prev = d["s_conn"][hold][:, 0]
    by = {f"prev_{int(v)}": round(float(red[prev == v].mean()), 3) for v in (0, 1) if (prev == v).any()}
    by.update({f"flow_action_{v}": round(float(red[d["a"][hold] == v].mean()), 3) for v in (0, 1) if (d["a"][hold] == v).any()})
    print(f"held-out greedy decisions: {red.mean():.3f} redundant overall; by a_(t-1) and by the transition's action: {by}", flush=True)
    print(f"trained {a.steps} steps in {train_s:.1f} s ({1e3 * train_s / a.steps:.2f} ms/step incl. JIT); "
          f"final loss {curve[-1][1]:.4f}", flush=True)

    meta = {
        "edar.synthetic": "true" if a.synthetic else "false",
        "edar.note": ("trained on SYNTHETIC transitions to prove the pipeline; not a real EdAR model"
                      if a.synthetic else "trained on collected transitions"),
        "edar.transitions": str(N),
        "edar.steps": str(a.steps),
        "edar.seed": str(a.seed),
        "edar.params": str(m.count_params(params)),
        "edar.export": a.export,
        # The discount the Q-values were trained with: EdAR-o's online
        # learning (online_gym.py) goes on with the same one.
        "edar.gamma": repr(a.gamma),
    }
    model = edar_export.build(params, meta)
    blob = model.SerializeToString()
    err = edar_export.parity(blob, params, d["s_conn"][hold][:256], d["s_sub"][hold][:256], d["n"][hold][:256])
    tmp = a.out + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, a.out)  # atomic: a watching scheduler never reads half a model
    write_curve(a.out, curve)
    write_golden(a.out, params, d, hold[:8])
    summary = {"heldout_redundant": round(float(red.mean()), 3), "heldout_redundant_by": by,
               "randomize_prev_action": bool(rand_prev), "export": a.export, "transitions": N, "steps": a.steps, "train_seconds": round(train_s, 2),
               "total_seconds": round(time.time() - t_start, 2), "parity_max_abs": err,
               "params": m.count_params(params), "bytes": len(blob), "synthetic": a.synthetic}
    print(f"wrote {a.out} ({len(blob)} bytes, {summary['params']} params); "
          f"ONNX/JAX parity max |diff| = {err:.2e} on {min(n_hold, 256)} held-out states", flush=True)
    print("summary " + json.dumps(summary), flush=True)


def model_gamma(path, default=0.6):
    """The discount a model was trained with (its edar.gamma), or default
    for a model written before the field existed (all of them 0.6)."""
    import onnx

    meta = {p.key: p.value for p in onnx.load(path).metadata_props}
    return float(meta.get("edar.gamma", default))


def load_onnx_params(path):
    """Weights of an exported model, to continue training from it."""
    import onnx
    from onnx import numpy_helper

    t = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    p = {k: jnp.asarray(t[k]) for k in ("fc1_W", "fc1_b", "fc2_W", "fc2_b", "out_W", "out_b")}
    for l in ("lstm1", "lstm2"):
        p[f"{l}_W"] = jnp.asarray(t[f"{l}_W"][0])
        p[f"{l}_R"] = jnp.asarray(t[f"{l}_R"][0])
        b = t[f"{l}_B"][0]
        h4 = b.shape[0] // 2
        p[f"{l}_b"] = jnp.asarray(b[:h4] + b[h4:])
    return p


def write_golden(out, params, d, idx):
    """<out>.golden.json: a few held-out states with the JAX Q-values, so a
    backend can be checked against the trainer without onnxruntime."""
    q = np.asarray(m.q_values(params, d["s_conn"][idx], d["s_sub"][idx], d["n"][idx]))
    rows = []
    for j, i in enumerate(idx):
        k = int(d["n"][i])
        rows.append({"n": k, "conn": d["s_conn"][i].tolist(), "sub": d["s_sub"][i, :k].tolist(), "q": q[j].tolist()})
    with open(out + ".golden.json", "w") as f:
        json.dump(rows, f)


def write_curve(out, curve):
    """CSV always; PNG when matplotlib is importable."""
    with open(out + ".curve.csv", "w") as f:
        # heldout_redundant_fraction is θ's, ..._target θ''s (--export).
        f.write("step,loss,mean_q_sa,heldout_redundant_fraction,seconds,heldout_redundant_fraction_target\n")
        for row in curve:
            f.write(",".join(f"{v:.6g}" for v in row) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: wrote only " + out + ".curve.csv")
        return
    c = np.array(curve)
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
    ax[0].semilogy(c[:, 0], c[:, 1])
    ax[0].set(xlabel="step", ylabel="TD loss (mean over window)", title="EdAR DQN training loss")
    ax[1].plot(c[:, 0], c[:, 2], label="mean Q(s,a)")
    ax[1].plot(c[:, 0], c[:, 3], label="held-out redundant fraction, θ")
    ax[1].plot(c[:, 0], c[:, 5], label="held-out redundant fraction, θ' (target)")
    ax[1].set(xlabel="step")
    ax[1].legend()
    fig.tight_layout()
    fig.savefig(out + ".curve.png", dpi=100)


if __name__ == "__main__":
    main()
