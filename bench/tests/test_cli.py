#!/usr/bin/env python3
"""bench/run.py on the CPU: option checks, the refusal without a GPU, and a whole run
with fake systems (one failing) writing bench.json and bench.md (bench.png when
matplotlib is there)."""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

import fixtures
from fixtures import measurement

import run

RUN = os.path.join(fixtures.BENCH, "run.py")


def cli(*args):
    return subprocess.run([sys.executable, RUN, *args], capture_output=True, text=True)


class Options(unittest.TestCase):
    def test_defaults_and_quick(self):
        args = run.parse_args([])
        self.assertEqual((args.steps, args.warmup, args.profile_steps), (50, 10, 10))
        args = run.parse_args(["--quick", "--steps", "20"])
        self.assertEqual((args.steps, args.warmup, args.profile_steps), (20, 3, 3))

    def test_every_case_in_order(self):
        names = [c.name for c in run.model.load_cases(os.path.join(fixtures.BENCH, "cases"))]
        self.assertEqual(sorted(names), sorted(run.CASE_ORDER))  # no case left out of the order

    def test_bad_options(self):
        for bad, message in ((["--warmup", "2"], "--warmup must be >= 3"),
                             (["--steps", "0"], "must be >= 1"),
                             (["--cases", "nope"], "unknown case(s) nope")):
            out = cli(*bad)
            self.assertEqual(out.returncode, 2, bad)
            self.assertIn(message, out.stderr)

    @unittest.skipIf(__import__("torch").cuda.is_available(), "a GPU is visible")
    def test_no_gpu(self):
        out = cli("--quick", "--out", os.devnull)
        self.assertEqual(out.returncode, 2)
        self.assertIn("no CUDA device visible to PyTorch", out.stderr)


class WholeRun(unittest.TestCase):
    def test_fake_systems(self):
        def dmc(case, settings):
            return measurement(1.0, 0.8, 300.0)

        def compile_fails(case, settings):
            raise RuntimeError("torch.compile is not available")

        def eager(case, settings):
            return dict(measurement(1.5, 1.2, 450.0), module="bench/reference.py (stand-in)")

        runners = {"dmc": dmc, "eager": eager,
                   "compile": compile_fails}
        cases = run.model.load_cases(os.path.join(fixtures.BENCH, "cases"),
                                     ["bert-base-b32-l128", "vit-base-b64-l197"])
        with tempfile.TemporaryDirectory() as tmp:
            argv = ["--out", tmp, "--steps", "7"]
            args = run.parse_args(argv)
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                status = run.benchmark(args, argv, cases, runners, "Fake GPU",
                                       lambda: {"device": "Fake GPU", "torch": "0"})
            self.assertEqual(status, 1)  # a system failed
            with open(os.path.join(tmp, "bench.json")) as f:
                doc = json.load(f)
            self.assertEqual(doc["command"], "python3 bench/run.py --out " + tmp + " --steps 7")
            self.assertEqual(doc["settings"]["steps"], 7)
            self.assertEqual([c["name"] for c in doc["cases"]], ["bert-base-b32-l128",
                                                                 "vit-base-b64-l197"])
            for entry in doc["cases"]:
                systems = entry["systems"]
                self.assertEqual(systems["compile"]["reason"],
                                 "RuntimeError: torch.compile is not available")
                self.assertAlmostEqual(systems["eager"]["vs_dmc"]["wall"], 1.5)
                self.assertEqual(entry["flop"]["step"], 3 * entry["flop"]["forward"])
            with open(os.path.join(tmp, "bench.md")) as f:
                md = f.read()
            self.assertIn("| vit-base-b64-l197 | compile | failed: RuntimeError: torch.compile "
                          "is not available |", md)
            self.assertIn("bert-base-b32-l128: compile failed:", stderr.getvalue())
            self.assertIn("Layers: eager: bench/reference.py (stand-in).", md)
            self.assertIn("| bert-base-b32-l128 | eager | 1.500 |", stdout.getvalue())
            try:
                import matplotlib  # noqa: F401
                self.assertTrue(os.path.getsize(os.path.join(tmp, "bench.png")) > 1000)
            except ImportError:
                self.assertIn("no chart:", stderr.getvalue())
                self.assertFalse(os.path.exists(os.path.join(tmp, "bench.png")))


if __name__ == "__main__":
    unittest.main()
