#!/usr/bin/env python3
"""bench/results.py: failures recorded and the run going on, budget, throughput, ratios."""

import json
import tempfile
import unittest

import fixtures
from fixtures import TINY_ENCODER, measurement

import results
import table


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def settings(budget_s=1000.0):
    return results.Settings(steps=50, warmup=10, profile_steps=10, bundles="/nonexistent",
                            budget_s=budget_s)


class RunCases(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cases = [fixtures.write_case(self.tmp.name, dict(TINY_ENCODER, name=n))
                      for n in ("one", "two")]
        self.lines, self.updates = [], []

    def tearDown(self):
        self.tmp.cleanup()

    def run_with(self, runners, **kw):
        return results.run_cases(self.cases, runners, kw.pop("settings", settings()),
                                 self.lines.append,
                                 on_update=lambda e: self.updates.append(json.dumps(e)), **kw)

    def test_a_failure_is_recorded_and_the_run_goes_on(self):
        calls = []

        def compile_fails(case, s):
            calls.append(("compile", case.name))
            if case.name == "one":
                raise RuntimeError("inductor exploded\nsecond line of the message")
            return measurement(4.0, 3.0, 800.0)

        def dmc(case, s):
            calls.append(("dmc", case.name))
            return measurement(2.0, 1.5, 400.0)

        entries = self.run_with({"dmc": dmc, "compile": compile_fails})
        self.assertEqual(calls, [("dmc", "one"), ("compile", "one"), ("dmc", "two"),
                                 ("compile", "two")])
        failed = entries[0]["systems"]["compile"]
        self.assertEqual(failed["status"], "failed")
        self.assertEqual(failed["reason"], "RuntimeError: inductor exploded")
        self.assertTrue(any("inductor exploded" in line for line in failed["traceback"]))
        self.assertEqual(entries[1]["systems"]["compile"]["status"], "ok")
        self.assertIn("one: compile failed: RuntimeError: inductor exploded", self.lines)
        self.assertFalse(results.all_ok(entries))
        # Written after every system, the failure included; the JSON is serializable.
        self.assertEqual(len(self.updates), 4)
        self.assertIn("inductor exploded", self.updates[1])
        # And the table shows it.
        doc = dict(fixtures.sample(), cases=entries)
        self.assertIn("| one | compile | failed: RuntimeError: inductor exploded |",
                      table.table(doc))

    def test_dmc_failing_leaves_no_ratios(self):
        def dmc(case, s):
            raise FileNotFoundError("no bundle")
        entries = self.run_with({"dmc": dmc, "eager": lambda c, s: measurement(3, 2, 100)})
        self.assertIsNone(entries[0]["systems"]["eager"]["vs_dmc"])
        self.assertEqual(entries[0]["systems"]["dmc"]["reason"], "FileNotFoundError: no bundle")

    def test_throughput_and_ratios(self):
        entries = self.run_with({"dmc": lambda c, s: measurement(2.0, 1.0, 400.0),
                                 "eager": lambda c, s: measurement(3.0, 2.5, 1000.0)})
        step_flop = 3 * 1824  # the tiny encoder's hand count (test_model.py)
        dmc, eager = entries[0]["systems"]["dmc"], entries[0]["systems"]["eager"]
        self.assertAlmostEqual(dmc["tflops_wall"], step_flop / 2e-3 / 1e12)
        self.assertAlmostEqual(eager["tflops_gpu"], step_flop / 2.5e-3 / 1e12)
        self.assertEqual(eager["vs_dmc"], {"wall": 1.5, "gpu": 2.5, "memory": 2.5})
        self.assertEqual(dmc["vs_dmc"], {"wall": 1.0, "gpu": 1.0, "memory": 1.0})
        self.assertTrue(results.all_ok(entries))

    def test_gpu_time_above_wall_time_is_flagged(self):
        entries = self.run_with({"dmc": lambda c, s: measurement(1.0, 2.0, 1.0)})
        self.assertIn("exceeds the median wall time", entries[0]["systems"]["dmc"]["warnings"][0])

    def test_profiler_failure_keeps_the_other_figures(self):
        def no_trace(case, s):
            return dict(measurement(3.0, None, 500.0), gpu_error="TraceError: no CUDA kernel")
        entries = self.run_with({"dmc": lambda c, s: measurement(2.0, 1.0, 400.0),
                                 "eager": no_trace})
        eager = entries[0]["systems"]["eager"]
        self.assertEqual(eager["status"], "ok")
        self.assertIsNone(eager["tflops_gpu"])
        self.assertEqual(eager["vs_dmc"], {"wall": 1.5, "memory": 1.25})
        self.assertIn("no GPU time: TraceError: no CUDA kernel", eager["warnings"])
        self.assertIn("one: eager ok: wall 3.000 ms, GPU none, peak 500 MiB", " ".join(self.lines))
        self.assertFalse(results.all_ok(entries))  # incomplete: the exit status says so
        doc = dict(fixtures.sample(), cases=entries)
        self.assertIn("| one | eager | 3.000 | - | 500 |", table.table(doc))
        self.assertIn("Warning, one eager: no GPU time: TraceError: no CUDA kernel.",
                      table.notes(doc))

    def test_time_budget(self):
        clock = FakeClock()

        def slow(case, s):
            clock.now += 60.0
            return measurement(1.0, 0.5, 1.0)
        entries = self.run_with({"dmc": slow, "eager": slow}, settings=settings(budget_s=100.0),
                                clock=clock)
        statuses = [r["status"] for e in entries for r in e["systems"].values()]
        self.assertEqual(statuses, ["ok", "ok", "skipped", "skipped"])
        self.assertIn("time budget of 100 s spent", entries[1]["systems"]["dmc"]["reason"])
        self.assertFalse(results.all_ok(entries))

    def test_keyboard_interrupt_is_not_swallowed(self):
        def interrupted(case, s):
            raise KeyboardInterrupt
        with self.assertRaises(KeyboardInterrupt):
            self.run_with({"dmc": interrupted})


class Reason(unittest.TestCase):
    def test_long_and_empty_messages(self):
        self.assertEqual(results.failure_reason(ValueError("")), "ValueError: (no message)")
        long = results.failure_reason(RuntimeError("x" * 1000))
        self.assertEqual(len(long), 240)
        self.assertTrue(long.endswith("..."))


class TunedBundles(unittest.TestCase):
    """make-bundles.sh's BUNDLES-tuned/DB/{DEVICE, NAME.dmlib, NAME.tuning.txt}."""

    def setUp(self):
        import os
        self.tmp = tempfile.TemporaryDirectory()
        self.bundles = os.path.join(self.tmp.name, "bench")
        os.makedirs(self.bundles)
        for db, device in (("h100", "NVIDIA H100 80GB HBM3"), ("h200", "NVIDIA H200")):
            d = os.path.join(self.bundles + "-tuned", db)
            os.makedirs(d)
            with open(os.path.join(d, "DEVICE"), "w") as f:
                f.write(device + "\n")
        with open(os.path.join(self.bundles + "-tuned", "h200", "one.tuning.txt"), "w") as f:
            f.write("database: 800 matched\n8 of 13 kernel(s) measured, 6 changed; predicted "
                    "159.52 us against the default's 162.00 us\n")
        self.case = fixtures.write_case(self.tmp.name, dict(TINY_ENCODER, name="one"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_set_for_this_device_only(self):
        import os
        found = results.tuned_bundles(self.bundles, "NVIDIA H200")
        self.assertEqual(found, os.path.join(self.bundles + "-tuned", "h200"))
        self.assertIsNone(results.tuned_bundles(self.bundles, "NVIDIA A100-SXM4-80GB"))
        self.assertIsNone(results.tuned_bundles("/nonexistent/bench", "NVIDIA H200"))
        s = settings()
        s.tuned = found
        bundle, summary = s.tuned_bundle(self.case)
        self.assertEqual(bundle, os.path.join(found, "one.dmlib"))
        self.assertTrue(summary.startswith("8 of 13 kernel(s) measured, 6 changed"))

    def test_no_database_for_this_gpu_is_a_clear_failure(self):
        with self.assertRaisesRegex(RuntimeError, "no tuning database for this GPU"):
            settings().tuned_bundle(self.case)


if __name__ == "__main__":
    unittest.main()
