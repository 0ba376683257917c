"""Writes gym-policy.onnx and gym-policy.golden.json, the test model of
pkg/model/gympolicy and pkg/model/graph: a small MLP exported by
python/mpqgym (joint actions over 2 slots, reading conn, paths, present and
report, normalised) and its numpy logits on a few random inputs.

    .venv-gym/bin/python pkg/model/testdata/gym_policy.py
"""

import json
import os

import numpy as np

from mpqgym import export

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(42)
inputs = ("conn", "paths", "present", "report")
n_in = 18 + 2 * 20 + 2 + 13
layers, prev = [], n_in
for w in (24, 12, 8):
    layers.append((rng.normal(0, 1 / np.sqrt(prev), (prev, w)).astype(np.float32), rng.normal(0, 0.1, w).astype(np.float32)))
    prev = w
mean = rng.normal(0, 1, n_in).astype(np.float32)
std = rng.uniform(0.5, 2, n_in).astype(np.float32)
export.export_mlp(os.path.join(here, "gym-policy.onnx"), layers, slots=2, inputs=inputs, actions="joint",
                  mean=mean, std=std, metadata={"mpqgym.test": "true"})
cases = []
for _ in range(4):
    obs = {"conn": rng.normal(0, 2, 18), "paths": rng.normal(0, 2, (2, 20)), "present": rng.integers(0, 2, 2),
           "report": rng.normal(0, 2, 13)}
    x = export.flatten(obs, inputs)
    cases.append({"inputs": {k: np.asarray(obs[k], np.float32).ravel().tolist() for k in inputs},
                  "logits": export.mlp_forward(x, layers, "relu", mean, std)[0].tolist()})
with open(os.path.join(here, "gym-policy.golden.json"), "w") as f:
    json.dump(cases, f)

# gym-minrtt.onnx: a "modes" policy that always answers 0 (every path, new
# data): the learned scheduler then decides as minRTT (cli's test).
export.export_mlp(os.path.join(here, "gym-minrtt.onnx"), [(np.zeros((18, 2), np.float32), np.array([1, 0], np.float32))],
                  slots=2, inputs=("conn",), actions="modes", metadata={"mpqgym.test": "true"})
