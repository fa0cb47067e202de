#!/usr/bin/env python3
"""bench/host_time.py on the CPU: option checks and its refusals (no bundles, no GPU)."""

import os
import subprocess
import sys
import tempfile
import unittest

import fixtures

import host_time

SCRIPT = os.path.join(fixtures.BENCH, "host_time.py")


def cli(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class Options(unittest.TestCase):
    def test_defaults(self):
        args = host_time.parse_args([])
        self.assertEqual((args.steps, args.warmup, args.rounds), (100, 10, 2))
        self.assertTrue(args.bundles.endswith(os.path.join("gpu-bundles", "bench")))

    def test_bad_options(self):
        for bad in (["--steps", "0"], ["--warmup", "0"], ["--rounds", "0"]):
            r = cli(*bad)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("must be >= 1", r.stderr)

    def test_no_bundles(self):
        with tempfile.TemporaryDirectory() as empty:
            r = cli("--bundles", empty)
        self.assertEqual(r.returncode, 2)
        self.assertIn(f"no *.dmlib in {empty}", r.stderr)

    def test_no_gpu(self):
        import torch
        if torch.cuda.is_available():
            self.skipTest("a CUDA device is visible: the refusal is not reachable here")
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "x.dmlib"))
            r = cli("--bundles", d)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no CUDA device visible to PyTorch", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
