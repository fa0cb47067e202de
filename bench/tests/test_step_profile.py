#!/usr/bin/env python3
"""bench/step_profile.py's pure parts: config.json's per-step predictions and the table
that sets each dmc kernel's time in the step beside them."""

import unittest

import fixtures  # noqa: F401 (import path)

import step_profile

CONFIG = {"format": "dmc-config", "version": 2, "model": "tiny",
          "prediction": {"device": "NVIDIA H200", "database": "h200.jsonl",
                         "forward_us": 100.0, "backward_us": 70.0,
                         "steps": {"k0_attention": 65.20, "c0": 37.03, "k2_gelu_dropout": 23.93,
                                   "c3": 44.68}}}


def summary(top):
    return {"top": top, "kernel_ms": sum(t[1] for t in top), "busy_ms": 0.2,
            "kernels": sum(t[2] for t in top)}


class Predictions(unittest.TestCase):
    def test_chosen_times_by_step(self):
        k, c = step_profile.predicted_times(CONFIG)
        self.assertEqual(k, {"k0": 65.20, "k2": 23.93})
        self.assertEqual(c, {"c0": 37.03, "c3": 44.68})

    def test_none_without_a_prediction(self):
        self.assertEqual(step_profile.predicted_times({"version": 1}), ({}, {}))
        no_steps = {"prediction": {"forward_us": 1.0, "backward_us": 2.0}}
        self.assertEqual(step_profile.predicted_times(no_steps), ({}, {}))


class Table(unittest.TestCase):
    TOP = [["sm90_xmma_gemm_bf16_tn", 0.080, 2], ["k2_gelu_dropout", 0.0250, 1],
           ["k0_attention", 0.0700, 1], ["cublasLt::splitKreduce", 0.002, 1]]

    def test_dmc_kernels_in_step_order_library_summed(self):
        rows, library = step_profile.split(summary(self.TOP))
        self.assertEqual([r[0] for r in rows], ["k0", "k2"])
        self.assertAlmostEqual(library, 0.082)

    def test_a_finishing_launch_joins_its_step(self):
        top = self.TOP + [["k2_gelu_dropout_finish", 0.003, 1]]
        rows, _ = step_profile.split(summary(top))
        self.assertEqual(rows[1][:2], ["k2", "k2_gelu_dropout"])
        self.assertAlmostEqual(rows[1][2], 0.028)
        self.assertEqual(rows[1][3], 2)

    def test_ratios_against_the_predictions(self):
        k, c = step_profile.predicted_times(CONFIG)
        text = step_profile.report(summary(self.TOP), k, c)
        # k0: 70.00 in the step against 65.20 predicted.
        self.assertRegex(text, r"k0 +k0_attention +70\.00 +65\.20 +1\.074")
        self.assertRegex(text, r"k2 +k2_gelu_dropout +25\.00 +23\.93 +1\.045")
        self.assertRegex(text, r"dmc kernels +95\.00 +89\.13 +1\.066")
        # 82 us of library kernels against 81.71 predicted for c0 + c3.
        self.assertRegex(text, r"library kernels \(cuBLASLt\) +82\.00 +81\.71 +1\.004")

    def test_a_wrong_time_shows(self):
        # A kernel twice as slow in the step as predicted must read 2.x, not pass quietly.
        k, c = step_profile.predicted_times(CONFIG)
        top = [["k0_attention", 0.1304, 1]]
        self.assertRegex(step_profile.report(summary(top), k, c), r"k0_attention +130\.40 +65\.20 +2\.000")

    def test_without_predictions(self):
        text = step_profile.report(summary(self.TOP))
        self.assertRegex(text, r"k0 +k0_attention +70\.00 +- ")
        self.assertNotIn("1.074", text)


if __name__ == "__main__":
    unittest.main()
