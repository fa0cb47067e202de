#!/usr/bin/env python3
"""bench/reference.py (the baselines' stand-in layer) against the oracle's PyTorch layer.

tests/oracle/layers.py is the independent statement of dmc's semantics; the stand-in
must compute the same y and gradients (float64, dropout off) for every layer kind and
norm placement, with parameters under the same names. This machine's torch may predate
scaled_dot_product_attention: the test then supplies a plain version of it (softmax of
the scaled scores), so the SDPA call itself is checked only where torch has it.
"""

import json
import math
import os
import sys
import tempfile
import unittest

import fixtures

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(fixtures.REPO, "tests", "oracle"))
import layers  # noqa: E402 (the oracle)

import reference  # noqa: E402

NATIVE_SDPA = hasattr(F, "scaled_dot_product_attention")


def _plain_sdpa(q, k, v, dropout_p=0.0, is_causal=False):
    assert dropout_p == 0.0, "the test runs without dropout"
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if is_causal:
        n, m = s.shape[-2:]
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


if not NATIVE_SDPA:
    F.scaled_dot_product_attention = _plain_sdpa

MODELS = {
    "encoder-post": {"kind": "encoder", "batch": 2, "seq": 5, "hidden": 8, "heads": 2, "ffn": 16,
                     "layernorm_eps": 1e-12},
    "encoder-pre-head-dim": {"kind": "encoder", "norm": "pre", "batch": 2, "seq": 4, "hidden": 8,
                             "heads": 2, "head_dim": 3, "ffn": 12, "activation": "relu"},
    "gpt": {"kind": "gpt", "batch": 2, "seq": 6, "hidden": 8, "heads": 4, "ffn": 16},
    "decoder": {"kind": "decoder", "batch": 2, "seq": 5, "memory_seq": 3, "hidden": 8,
                "heads": 2, "ffn": 16},
    "no-bias": {"kind": "encoder", "batch": 1, "seq": 3, "hidden": 4, "heads": 1, "ffn": 8,
                "bias": False},
}


def run_both(description, plant=None):
    """Max |difference| of y and of every gradient, stand-in vs oracle (float64)."""
    model = dict(description, dtype="f32", dropout=0.0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.json")
        with open(path, "w") as f:
            json.dump(model, f)
        layer = reference.reference_layer(path).double()
    if plant == "pre-post":  # a planted fault: the other norm placement
        layer.norm = "pre" if layer.norm == "post" else "post"
    config = layers.LayerConfig.from_json(model)
    torch.manual_seed(3)
    x = torch.randn(config.batch, config.seq, config.hidden, dtype=torch.float64)
    memory = (torch.randn(config.batch, config.memory_seq, config.hidden, dtype=torch.float64)
              if config.kind == "decoder" else None)
    dy = torch.randn_like(x)
    params = dict(layer.named_parameters())
    oracle_inputs = {n: p.detach().clone().requires_grad_() for n, p in params.items()}
    mine = {"x": x.clone().requires_grad_()}
    theirs = {"x": x.clone().requires_grad_()}
    if memory is not None:
        mine["memory"] = memory.clone().requires_grad_()
        theirs["memory"] = memory.clone().requires_grad_()
    y = layer(mine["x"], memory=mine.get("memory"))
    y.backward(dy)
    expected = layers.forward(config, dict(oracle_inputs, **theirs))
    expected.backward(dy)
    diffs = {"y": (y - expected).abs().max().item()}
    for name in mine:
        diffs[name + ".grad"] = (mine[name].grad - theirs[name].grad).abs().max().item()
    for name, p in params.items():
        diffs[name + ".grad"] = (p.grad - oracle_inputs[name].grad).abs().max().item()
    return diffs, sorted(params), sorted(layers.parameter_dims(config))


class AgainstOracle(unittest.TestCase):
    def test_every_kind(self):
        for name, description in MODELS.items():
            with self.subTest(name):
                diffs, names, oracle_names = run_both(description)
                self.assertEqual(names, oracle_names)
                for tensor, diff in diffs.items():
                    self.assertLess(diff, 1e-10, f"{name}: {tensor}")

    def test_a_planted_fault_shows(self):
        diffs, _, _ = run_both(MODELS["encoder-post"], plant="pre-post")
        self.assertGreater(diffs["y"], 1e-3)

    def test_dropout_is_on_in_training_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            with open(path, "w") as f:
                json.dump(dict(MODELS["encoder-post"], dtype="f32", dropout={"hidden": 0.5}), f)
            layer = reference.reference_layer(path)
        x = torch.randn(2, 5, 8)
        self.assertFalse(torch.equal(layer(x), layer(x)))  # new masks every call
        layer.eval()
        self.assertTrue(torch.equal(layer(x), layer(x)))

    def test_rejects_key_padding(self):
        with self.assertRaisesRegex(ValueError, "without key padding"):
            reference.ReferenceLayer(dict(MODELS["encoder-post"], key_padding=True))

    def test_bf16_by_default(self):
        layer = reference.ReferenceLayer(MODELS["gpt"])
        self.assertEqual({p.dtype for p in layer.parameters()}, {torch.bfloat16})


if __name__ == "__main__":
    print(f"test_reference: torch {torch.__version__}, scaled_dot_product_attention "
          f"{'native' if NATIVE_SDPA else 'missing: a plain version stands in'}")
    unittest.main()
