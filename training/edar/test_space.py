"""Tests of the training space (space.py): the draw covers the ranges it
claims, and never draws a held-back setting.
  ../../.venv-train/bin/python -m unittest -v test_space   (make train-test)"""

import json
import os
import unittest

import space

DRAWS = 1500


def _rates_rtts(scs):
    rates, rtts = [], []
    for sc in scs:
        for r, t in space.signature(sc):
            rates.append(r)
            rtts.append(t)
    return rates, rtts


class TestSpace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.held = space.held_back()
        cls.scs = [space.draw(s, cls.held)[0] for s in range(DRAWS)]

    def test_held_back_set_is_the_documented_one(self):
        self.assertEqual(sorted(self.held), ["held-3path", "held-commuter", "held-congested", "held-hetero-2path",
                                             "held-rpc-verizon", "held-rtt-deep", "held-rtt-lossy", "held-verizon", "held-video-commuter",
                                             "held-wifi-lte-drive"])

    def test_workload_settings_reuse_bulk_paths(self):
        # The workload settings run on the paths of held-verizon and
        # held-commuter, so they reject no draw those do not (the training
        # data is the same with or without them), and EdAR-o's warm-up
        # (online_gym.py --family heldback) keeps to the eight bulk settings.
        for wl, bulk in (("held-rpc-verizon", "held-verizon"), ("held-video-commuter", "held-commuter")):
            self.assertEqual(self.held[wl]["paths"], self.held[bulk]["paths"], wl)
        self.assertEqual(self.held["held-video-commuter"]["ranges"], self.held["held-commuter"]["ranges"])
        names = [os.path.basename(f)[: -len(".json")] for f in space.bulk_held_back_files()]
        self.assertEqual(names, ["held-3path", "held-commuter", "held-congested", "held-hetero-2path",
                                 "held-rtt-deep", "held-rtt-lossy", "held-verizon", "held-wifi-lte-drive"])

    def test_never_near_a_held_back_setting(self):
        sigs = {n: space.signature(h) for n, h in self.held.items()}
        for sc in self.scs:
            for n, h in sigs.items():
                self.assertFalse(space.near(space.signature(sc), h), f"{sc['name']} is near {n}")

    def test_near_rejects_and_accepts(self):
        h = space.signature(self.held["held-hetero-2path"])  # 10 M / 30 ms, 20 M / 10 ms
        self.assertTrue(space.near([(h[0][0] * 1.3, h[0][1] / 1.3), (h[1][0], h[1][1] * 1.3)], h))
        self.assertFalse(space.near([(h[0][0] * 1.4, h[0][1]), (h[1][0], h[1][1])], h))
        self.assertFalse(space.near([(h[0][0], h[0][1]), (h[1][0], h[1][1] / 1.4)], h))
        self.assertFalse(space.near(h + [(5e6, 0.05)], h))

    def test_delays_log_uniform(self):
        # "Log-uniform where the range spans more than a factor of 10"
        # (space.py): one-way delays span 60x, so about a quarter of them
        # (ln 60^0.25 / ln 60) fall in the bottom quarter of the log range,
        # under 5.6 ms, where a uniform draw over 2-120 ms puts 3%; and the
        # pair of a very short path beside a long one (held-rtt-deep's kind,
        # docs/edar-generalisation.md) is drawn often.
        lo, hi = space.RANGES["owd_ms"]
        cut = lo * (hi / lo) ** 0.25
        delays = [[space._dur_s(p["down"]["delay"]) * 1e3 for p in sc["paths"]] for sc in self.scs]
        owds = [x for d in delays for x in d]
        share = sum(1 for x in owds if x <= cut) / len(owds)
        self.assertTrue(0.2 < share < 0.3, share)
        two = [d for d in delays if len(d) == 2]
        pairs = sum(1 for d in two if min(d) <= 6 and max(d) >= 60)
        self.assertGreater(pairs / len(two), 0.05)

    def test_covers_the_ranges(self):
        rates, rtts = _rates_rtts(self.scs)
        lo, hi = space.RANGES["rate_bps"]
        fixed = [r for sc in self.scs for p in sc["paths"] if "trace" not in p["down"] for r in [p["down"]["rate_bps"]]]
        self.assertGreaterEqual(min(fixed), lo)
        self.assertLessEqual(max(fixed), hi)
        self.assertLess(min(fixed), lo * 1.1)  # both ends are reached
        self.assertGreater(max(fixed), hi / 1.1)
        self.assertLess(min(rtts), 2 * space.RANGES["owd_ms"][0] * 1e-3 * 1.5)
        self.assertGreater(max(rtts), 2 * space.RANGES["owd_ms"][1] * 1e-3 / 1.1)
        n = [len(sc["paths"]) for sc in self.scs]
        self.assertEqual(set(n), {2, 3})
        self.assertTrue(0.4 < n.count(3) / len(n) < 0.6)
        losses = [p["down"].get("loss", 0) for sc in self.scs for p in sc["paths"]]
        lossy = [x for x in losses if x > 0]
        self.assertTrue(0.35 < len(lossy) / len(losses) < 0.65)
        self.assertGreaterEqual(min(lossy), space.RANGES["loss"][0])
        self.assertLessEqual(max(lossy), space.RANGES["loss"][1])
        qs = [p["down"]["queue_bytes"] for sc in self.scs for p in sc["paths"]]
        self.assertTrue(space.RANGES["queue_bytes"][0] <= min(qs) < space.RANGES["queue_bytes"][0] * 1.2)
        bufs = [sc["receive_buffer"] for sc in self.scs if "receive_buffer" in sc]
        self.assertTrue(0.5 < len(bufs) / len(self.scs) < 0.7)
        self.assertGreaterEqual(min(bufs), space.RANGES["recv_buffer"][0])
        self.assertLessEqual(max(bufs), space.RANGES["recv_buffer"][1])
        b = [sc["bytes"] for sc in self.scs]
        self.assertTrue(space.RANGES["bytes"][0] <= min(b) and max(b) <= space.RANGES["bytes"][1])

    def test_dynamics_are_drawn(self):
        tags = [t for sc in self.scs for t in sc.get("tags", [])]
        for kind, p in (("outage", "outage_p"), ("handoff", "handoff_p")):
            share = tags.count(kind) / len(self.scs)
            self.assertAlmostEqual(share, space.RANGES[p], delta=0.04, msg=kind)
        if space.traces_available():
            self.assertAlmostEqual(tags.count("trace") / len(self.scs), space.RANGES["trace_p"], delta=0.04)
            used = {os.path.basename(p["down"]["trace"]) for sc in self.scs for p in sc["paths"] if "trace" in p["down"]}
            self.assertEqual(used, set(space.TRAIN_TRACES))

    def test_training_never_uses_what_only_held_back_settings_use(self):
        held_traces = {os.path.basename(p["down"].get("trace", "")) for h in self.held.values() for p in h["paths"]} - {""}
        self.assertTrue(held_traces)
        for sc in self.scs:
            txt = json.dumps(sc)
            for t in held_traces:
                self.assertNotIn(t, txt)
            self.assertNotIn("gilbert_elliott", txt)
            self.assertNotIn("bottlenecks", txt)
            self.assertNotIn("cross_traffic", txt)

    def test_draw_is_a_function_of_the_seed(self):
        self.assertEqual(space.draw(42, self.held), space.draw(42, self.held))
        self.assertNotEqual(space.draw(42, self.held)[0]["paths"], space.draw(43, self.held)[0]["paths"])


if __name__ == "__main__":
    unittest.main()
