#!/usr/bin/env python3
"""bench/model.py: flop against hand counts, caller shapes, stale-bundle detection.

    test_model.py [--dmc build/bin/dmc]

With --dmc, also every case of bench/cases/ (and the tiny models) against the exact
contraction flop of the training graph that `dmc report --format json` counts from
each op's iteration space (an independent count).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import fixtures
from fixtures import TINY_DECODER, TINY_ENCODER, model

DMC = None


class FlopByHand(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_encoder(self):
        # B2 L3 hidden 4, 2 heads of 2, FFN 8; M = B*L = 6 token rows.
        # q, k, v, o: 2*6*4*4 = 192 each; scores and weighted values: 2*3*3*2 = 36 per
        # (batch, head), 4 of them: 144 each; FFN: 2*6*8*4 = 384 twice.
        case = fixtures.write_case(self.tmp.name, TINY_ENCODER)
        self.assertEqual(model.flop(case), {"forward": 1824, "backward": 3648, "step": 5472})

    def test_decoder(self):
        # Self-attention as the encoder's: 4*192 + 2*144 = 1056. Cross-attention over a
        # memory of 5: q, o 192 each; k, v 2*10*4*4 = 320 each; scores 2*3*5*2 = 60 and
        # weighted values 2*3*2*5 = 60 per (batch, head), x4: 240 each; sum 1504.
        # FFN 768. Total 3328.
        case = fixtures.write_case(self.tmp.name, TINY_DECODER)
        self.assertEqual(model.flop(case)["forward"], 3328)
        self.assertEqual(model.flop(case)["step"], 3 * 3328)

    def test_head_dim_differs_from_hidden_over_heads(self):
        # hidden 4, 2 heads of 3: q, k, v project 4 -> 6: 2*6*6*4 = 288 each; o 6 -> 4: 288;
        # scores 2*3*3*3 = 54 and weighted 54 per (b, h), x4: 216 each; FFN 768:
        # 4*288 + 2*216 + 768 = 2352.
        case = fixtures.write_case(self.tmp.name, dict(TINY_ENCODER, head_dim=3))
        self.assertEqual(model.flop(case)["forward"], 2352)

    def test_bert_large_anchor(self):
        # B8 L512, 1024 hidden, 16 heads, FFN 4096: 111.67 GFLOP forward
        # (DEVICE.md's and `dmc graph --emit=summary`'s figure).
        case = model.load_case(os.path.join(fixtures.BENCH, "cases", "bert-large-b8-l512.json"))
        self.assertEqual(model.flop(case)["forward"], 111_669_149_696)


class Shapes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.case = fixtures.write_case(self.tmp.name, TINY_DECODER)
        self.bundle = os.path.join(self.tmp.name, "b.dmlib")
        os.makedirs(self.bundle)

    def tearDown(self):
        self.tmp.cleanup()

    def write_manifest(self, name, shapes, dtype="bf16"):
        tensors = [{"name": n, "role": "param" if "." in n else "input", "shape": s,
                    "dtype": dtype} for n, s in shapes.items()]
        tensors.append({"name": "y", "role": "output", "shape": [2, 3, 4], "dtype": dtype})
        with open(os.path.join(self.bundle, "manifest.json"), "w") as f:
            json.dump({"model": name, "tensors": tensors}, f)

    def test_decoder_shapes(self):
        shapes = model.caller_shapes(self.case)
        self.assertEqual(shapes["memory"], [2, 5, 4])
        self.assertEqual(shapes["cross.wq"], [2, 2, 4])
        self.assertEqual(shapes["cross.wo"], [4, 2, 2])
        self.assertIn("ln3.gamma", shapes)
        self.assertEqual(len(shapes), 2 + 2 * 8 + 4 + 6)

    def test_matching_bundle(self):
        self.write_manifest("tiny-decoder", model.caller_shapes(self.case))
        model.check_bundle(self.case, self.bundle)

    def test_stale_bundles_are_refused(self):
        shapes = model.caller_shapes(self.case)
        for name, edit, dtype, message in [
                ("other", {}, "bf16", "compiled from model 'other'"),
                ("tiny-decoder", {"cross.wq": [2, 2, 8]}, "bf16",
                 "tensor cross.wq is bf16 [2, 2, 8]"),
                ("tiny-decoder", {"memory": None}, "bf16", "differ from the case's"),
                ("tiny-decoder", {}, "f16", "is f16")]:
            edited = {n: s for n, s in dict(shapes, **edit).items() if s is not None}
            self.write_manifest(name, edited, dtype)
            with self.assertRaisesRegex(ValueError, re.escape(message)):
                model.check_bundle(self.case, self.bundle)

    def test_missing_bundle(self):
        with self.assertRaisesRegex(ValueError, "make-bundles.sh"):
            model.check_bundle(self.case, os.path.join(self.tmp.name, "none.dmlib"))


class Cases(unittest.TestCase):
    def test_every_case_loads(self):
        cases = model.load_cases(os.path.join(fixtures.BENCH, "cases"))
        self.assertEqual(len(cases), 6)
        for case in cases:
            self.assertEqual(case.dtype, "bf16", case.name)
            self.assertEqual(case.dropout, 0.1, case.name)

    def test_unknown_case(self):
        with self.assertRaisesRegex(ValueError, "unknown case.*nope.*available: bert-base"):
            model.load_cases(os.path.join(fixtures.BENCH, "cases"), ["nope"])

    def test_bad_field(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(ValueError, "'batch' must be an integer >= 1"):
                fixtures.write_case(tmp, dict(TINY_ENCODER, batch=0))
            with self.assertRaisesRegex(ValueError, "not divisible"):
                fixtures.write_case(tmp, dict(TINY_ENCODER, heads=3))


@unittest.skipIf(DMC is None and "--dmc" not in sys.argv, "no --dmc given")
class AgainstDmc(unittest.TestCase):
    def dmc_step_flop(self, path):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.json")
            subprocess.run([DMC, "report", path, "--format", "json", "-o", out], check=True,
                           capture_output=True)
            with open(out) as f:
                return json.load(f)["graphs"]["unfused"]["by_class"]["contraction"]["flop"]

    def test_cases_and_tiny_models(self):
        with tempfile.TemporaryDirectory() as tmp:
            models = (TINY_ENCODER, TINY_DECODER, dict(TINY_ENCODER, name="tiny-p3", head_dim=3))
            tiny = [fixtures.write_case(tmp, m).path for m in models]
            cases = [c.path for c in model.load_cases(os.path.join(fixtures.BENCH, "cases"))]
            for path in tiny + cases:
                with self.subTest(os.path.basename(path)):
                    self.assertEqual(model.flop(model.load_case(path))["step"],
                                     self.dmc_step_flop(path))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dmc")
    args, rest = parser.parse_known_args()
    DMC = args.dmc
    unittest.main(argv=[sys.argv[0]] + rest)
