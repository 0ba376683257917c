"""Unit tests of the trainer's reader, model and export:
  ../../.venv-train/bin/python -m unittest -v test_edar   (or make train-test)"""

import os
import struct
import tempfile
import unittest

import jax
import numpy as np

import edar_data
import edar_export
import edar_model as m


def write_file(path, slots, recs):
    dt = edar_data.record_dtype(slots)
    hdr = b"EDARTR" + struct.pack("<HHHHHI", 1, slots, 6, 6, 3, dt.itemsize) + bytes(12)
    with open(path, "wb") as f:
        f.write(hdr + recs.astype(dt).tobytes())


class TestEdar(unittest.TestCase):
    def test_record_size_matches_go(self):
        # sched/edar.RecordSize: 8 + 2*4*(3 + slots*6*6)
        for p in range(1, 9):
            self.assertEqual(edar_data.record_dtype(p).itemsize, 8 + 8 * (3 + p * 36))

    def test_reader_pads_and_rejects(self):
        d = tempfile.mkdtemp()
        rec = np.zeros(3, edar_data.record_dtype(2))
        rec["n"], rec["n2"], rec["a"], rec["r"] = 2, 1, [0, 1, 0], [0.5, -1, 2]
        rec["s"]["sub"][:, 1, 5, 0] = 7
        write_file(os.path.join(d, "a.edar"), 2, rec)
        rec1 = np.zeros(1, edar_data.record_dtype(1))
        rec1["n"], rec1["n2"], rec1["done"] = 1, 0, 1
        write_file(os.path.join(d, "b.edar"), 1, rec1)
        out = edar_data.load_dir(d)
        self.assertEqual(out["s_sub"].shape, (4, 2, 6, 6))
        self.assertEqual(out["s_sub"][1, 1, 5, 0], 7)
        self.assertEqual(out["done"].tolist(), [0, 0, 0, 1])
        with open(os.path.join(d, "a.edar"), "ab") as f:
            f.write(b"x")
        with self.assertRaises(edar_data.FormatError):
            edar_data.load_dir(d)

    def test_param_count(self):
        self.assertEqual(m.count_params(m.init(jax.random.PRNGKey(0))), 58706)

    def test_parity_error_relative_above_one(self):
        # A γ = 0.9 model's Q-values near 10 round to float32 within about
        # 1e-5 absolute; that is the same precision as 1e-6 near 1.
        self.assertAlmostEqual(edar_export.parity_error([10.00002, 1.0], [10.0, 1.0]), 2e-6, places=9)
        self.assertAlmostEqual(edar_export.parity_error([0.50002, 0.0], [0.5, 0.0]), 2e-5, places=9)
        self.assertGreater(edar_export.parity_error([0.50002], [0.5]), 1e-5)  # below |Q| = 1: absolute

    def test_export_parity_every_subflow_count(self):
        p = m.init(jax.random.PRNGKey(3))
        rng = np.random.default_rng(0)
        P = 8
        n = np.arange(1, P + 1).repeat(2)
        conn = rng.uniform(0, 2, (len(n), 3)).astype(np.float32)
        sub = rng.uniform(0, 2, (len(n), P, 6, 6)).astype(np.float32)
        for i, k in enumerate(n):
            sub[i, k:] = 99  # padding must not matter
        blob = edar_export.build(p).SerializeToString()
        self.assertLessEqual(edar_export.parity(blob, p, conn, sub, n), 1e-5)

    def test_export_writes_the_averaged_target_network(self):
        # Algorithm 1 line 20: "θ' ← τθ + (1 − τ)θ'". After one step from
        # θ0 = θ'0, θ'1 − θ0 = τ(θ1 − θ0): --export target (θ') lies τ of
        # the way from the initial network to the one --export online writes.
        import contextlib
        import io
        import train
        d = tempfile.mkdtemp()
        rng = np.random.default_rng(1)
        rec = np.zeros(200, edar_data.record_dtype(2))
        rec["n"], rec["n2"] = 2, 2
        rec["a"], rec["r"] = rng.integers(0, 2, 200), rng.normal(1, 1, 200)
        rec["s"]["sub"] = rng.uniform(0, 1, rec["s"]["sub"].shape)
        rec["s2"]["sub"] = rng.uniform(0, 1, rec["s2"]["sub"].shape)
        write_file(os.path.join(d, "a.edar"), 2, rec)
        flat = lambda p: np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(p)])  # noqa: E731
        out = {}
        for which in ("target", "online"):
            path = os.path.join(d, which + ".onnx")
            with contextlib.redirect_stdout(io.StringIO()):
                train.main(["--transitions", d, "--out", path, "--steps", "1", "--seed", "5", "--export", which])
            out[which] = flat(train.load_onnx_params(path))
            meta = {p.key: p.value for p in edar_export.onnx.load(path).metadata_props}
            self.assertEqual(meta["edar.export"], which)
            # pkg/model/policy refuses a model of another state format.
            self.assertEqual(meta["edar.format_version"], str(edar_data.VERSION))
            # EdAR-o's online learning reads the discount it goes on with
            # (the paper's 0.6 by default).
            self.assertEqual(train.model_gamma(path), 0.6)
        path = os.path.join(d, "gamma.onnx")
        with contextlib.redirect_stdout(io.StringIO()):
            train.main(["--transitions", d, "--out", path, "--steps", "1", "--gamma", "0.9"])
        self.assertEqual(train.model_gamma(path), 0.9)
        # The default export is the mean of θ' over the second half of the
        # steps: after 4 steps, (θ'_3 + θ'_4) / 2.
        for steps, which in (("3", "target"), ("4", "target"), ("4", "average")):
            path = os.path.join(d, f"{which}-{steps}.onnx")
            with contextlib.redirect_stdout(io.StringIO()):
                train.main(["--transitions", d, "--out", path, "--steps", steps, "--seed", "5", "--export", which])
            out[f"{which}-{steps}"] = flat(train.load_onnx_params(path))
        np.testing.assert_allclose(out["average-4"], (out["target-3"] + out["target-4"]) / 2, atol=1e-6)
        self.assertGreater(np.linalg.norm(out["target-4"] - out["target-3"]), 1e-6)
        init = flat(m.init(jax.random.PRNGKey(5)))
        moved_online = np.linalg.norm(out["online"] - init)
        self.assertGreater(moved_online, 0)
        np.testing.assert_allclose(out["target"] - init, 0.01 * (out["online"] - init), atol=1e-6)


if __name__ == "__main__":
    unittest.main()
