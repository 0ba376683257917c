"""A policy exported to ONNX computes in Go (onnxruntime and the pure-Go
interpreter) what it computed in Python, on the environment's own
observations."""

import json
import os
import subprocess

import numpy as np
import pytest

import mpqgym
import mpqgym.binary
from mpqgym import export

onnx = pytest.importorskip("onnx")


def observations(n, edar=False):
    env = mpqgym.make("hetero-2path", edar=edar, max_bytes=2 << 20)
    out = []
    try:
        obs, _ = env.reset(seed=1)
        for k in range(40):
            obs, _, term, trunc, _ = env.step(np.array([1, 1, k % 2]))
            if k % (40 // n) == 0:
                out.append(obs)
            if term or trunc:
                break
    finally:
        env.close()
    return out


def go_logits(model, obs, inputs, backend=None):
    env = dict(os.environ)
    if backend:
        env["MPQ_EDAR_BACKEND"] = backend
    lines = "".join(json.dumps({k: np.asarray(o[k], np.float32).tolist() for k in inputs}) + "\n" for o in obs)
    r = subprocess.run([mpqgym.binary.binary(), "-eval", str(model)], input=lines, capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def random_mlp(rng, n_in, widths):
    layers, prev = [], n_in
    for w in widths:
        layers.append((rng.normal(0, 1 / np.sqrt(prev), (prev, w)).astype(np.float32), rng.normal(0, 0.1, w).astype(np.float32)))
        prev = w
    return layers


@pytest.mark.parametrize("edar,inputs,actions,activation", [
    (False, ("conn", "paths", "present", "report"), "joint", "relu"),
    (True, ("edar_conn", "edar_sub"), "modes", "tanh"),
])
def test_export_matches_in_go(tmp_path, edar, inputs, actions, activation):
    obs = observations(5, edar)
    x = export.flatten({k: np.stack([o[k] for o in obs]) for k in inputs}, inputs)
    rng = np.random.default_rng(0)
    mean, std = x.mean(0), x.std(0) + 1
    out = 8 if actions == "joint" else 2
    layers = random_mlp(rng, x.shape[1], [32, 16, out])
    model = export.export_mlp(tmp_path / "p.onnx", layers, slots=2, inputs=inputs, actions=actions,
                              activation=activation, mean=mean, std=std)
    want = export.mlp_forward(x, layers, activation, mean, std)
    for backend in ("onnxruntime", "gonet"):
        got = go_logits(model, obs, inputs, backend)
        for g, w in zip(got, want):
            if "error" in g and backend == "onnxruntime" and "onnxruntime" in g["error"]:
                pytest.skip("no onnxruntime library: " + g["error"])
            assert g["backend"] == backend, g
            np.testing.assert_allclose(g["logits"], w, rtol=1e-4, atol=1e-4)


def test_corrupt_and_foreign_models(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x0a\xff\xff not a model")
    r = subprocess.run([mpqgym.binary.binary(), "-eval", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "not a readable ONNX model" in r.stderr
    layers = random_mlp(np.random.default_rng(1), 18, [4, 8])
    m = export.export_mlp(tmp_path / "m.onnx", layers, slots=2, inputs=("conn",))
    mod = onnx.load(str(m))
    del mod.metadata_props[:]
    onnx.save(mod, str(tmp_path / "nometa.onnx"))
    r = subprocess.run([mpqgym.binary.binary(), "-eval", str(tmp_path / "nometa.onnx")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "mpqgym.policy" in r.stderr


def test_action_encoding():
    for k in range(8):
        a = export.action_of(np.eye(8)[k], 2)
        assert export.index_of(a) == k
    assert export.action_of([0.0, 1.0], 3, "modes").tolist() == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="need 8"):
        export.export_mlp("/tmp/x.onnx", [(np.zeros((18, 4)), np.zeros(4))], slots=2, inputs=("conn",))
