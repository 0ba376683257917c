"""Unit tests of eval_report.py's pooling of EdAR-o adaptations:
  ../../.venv-train/bin/python -m unittest -v test_eval_report   (or make train-test)"""

import json
import os
import tempfile
import unittest

import eval_report


def write(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


class TestEvalReport(unittest.TestCase):
    def test_adaptations_pooled_in_the_edar_o_row(self):
        d = tempfile.mkdtemp()
        write(os.path.join(d, "handoff", "results.jsonl"),
              [{"scheduler": "edar-o", "seed": 1}, {"scheduler": "minrtt", "seed": 1}])
        write(os.path.join(d, "handoff", "adapt-2", "results.jsonl"), [{"scheduler": "edar-o", "seed": 1}])
        write(os.path.join(d, "handoff", "adapt-3", "results.jsonl"), [{"scheduler": "edar-o", "seed": 1}])
        by = eval_report.runs(d, "handoff")
        self.assertEqual(sorted(r["_adapt"] for r in by["edar-o"]), [1, 2, 3])
        self.assertEqual([r["_adapt"] for r in by["minrtt"]], [1])

    def test_targets_report_each_adaptation(self):
        ho = {"redundant": {"handoff": (8.6e6, 0), "stable": (8.7e6, 0)},
              "minrtt": {"handoff": (6.4e6, 0), "stable": (10.5e6, 0)},
              "edar-o": {"handoff": (7.9e6, 0), "stable": (10.8e6, 0),
                         "by_adapt": [(1, 7.87e6, 10.77e6), (2, 7.92e6, 10.82e6)]}}
        out = eval_report.targets(ho, {})
        self.assertIn("- EdAR-o pools 2 adaptations; each on its own, handoff windows 7.87, 7.92 Mbit/s, "
                      "stable windows 10.77, 10.82.", out)
        self.assertTrue(any("**not met**" in line and "Handoff windows" in line for line in out), out)


if __name__ == "__main__":
    unittest.main()
