#!/usr/bin/python3
"""dmc.torch.reference_layer against the oracle's PyTorch layer (tests/oracle/layers.py).

Usage: reference_check.py [--device cpu|cuda] [--plant FAULT] [MODEL.json ...]
(default: every oracle model; each also as a stack of two layers)

For each model, dropout off (the reference layer in eval(), the oracle with rates 0):
the reference layer's parameters (its own init) and random inputs (lengths with a row of
every kind: full, partly masked and, where the oracle model asks for it, empty) go into
both; y and the gradients of sum(y * dy) w.r.t. x, memory and every parameter must agree
within 1e-9 of each tensor's largest |value| (float64; 1e-6 at least, for the key
biases' gradients, zero by construction). A stack of `layers` = 2 is compared
with the oracle applied twice to the `layer0.`/`layer1.` parameters.
--plant FAULT changes the reference layer (a rolled weight, another eps, a dropped mask):
the run must then fail (ctest: WILL_FAIL). On a GPU (--device cuda, PyTorch >= 2.0) the
reference layer's attention runs through scaled_dot_product_attention.
"""

import argparse
import glob
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "tests", "oracle")]

import layers as oracle  # noqa: E402
import testdata  # noqa: E402
from dmc.torch.config import ModelConfig  # noqa: E402
from dmc.torch.reference import ReferenceLayer  # noqa: E402

RTOL = 1e-9
PLANTS = ("rolled-weight", "wrong-eps", "no-mask")


def oracle_config(model):
    return oracle.LayerConfig.from_json(dict(model, dropout=0.0, layers=1))


def inputs_for(model, path, device):
    c = oracle_config(model)
    x = {n: torch.randn(c.shape(d), dtype=torch.float64, device=device)
         for n, d in oracle.float_input_dims(c).items()}
    for n, v in testdata.oracle_lengths(c, path).items():
        x[n] = torch.from_numpy(v).to(device)
    return c, x


def plant(layer, fault):
    with torch.no_grad():
        if fault == "rolled-weight":
            name = next(n for n, _ in layer.named_parameters() if n.endswith("attn.wq"))
            p = dict(layer.named_parameters())[name]
            p.copy_(torch.roll(p, 1, dims=0))
    if fault == "wrong-eps":
        layer.config = layer.config.__class__(**dict(layer.config.__dict__,
                                                     eps=layer.config.eps * 10))


def check(path, model, device, fault):
    config = ModelConfig.from_dict(model)
    layer = ReferenceLayer(config).double().to(device).eval()
    c, inputs = inputs_for(model, path, device)
    ours = {n: t.clone().requires_grad_(t.is_floating_point()) for n, t in inputs.items()}
    theirs = {n: t.clone().requires_grad_(t.is_floating_point()) for n, t in inputs.items()}
    params = {n: p.detach().clone().requires_grad_() for n, p in layer.named_parameters()}
    if fault == "no-mask":  # our layer sees every key
        for n in ("lengths", "memory_lengths"):
            if n in ours:
                ours[n] = torch.full_like(ours[n], ours["x" if n == "lengths" else "memory"].shape[1])
    elif fault:
        plant(layer, fault)
    y = layer(ours["x"], **{n: t for n, t in ours.items() if n != "x"})
    ref = theirs["x"]
    for prefix in config.prefixes():
        local = {n[len(prefix):]: p for n, p in params.items() if n.startswith(prefix)}
        ref = oracle.forward(c, dict(theirs, x=ref, **local))
    dy = torch.randn_like(ref)
    (y * dy).sum().backward()
    (ref * dy).sum().backward()
    pairs = [("y", y.detach(), ref.detach())]
    pairs += [(f"{n}.grad", ours[n].grad, theirs[n].grad) for n in ours if ours[n].requires_grad]
    named = dict(layer.named_parameters())
    pairs += [(f"{n}.grad", named[n].grad, params[n].grad) for n in params]
    worst, failed = 0.0, []
    for name, got, want in pairs:
        if got is None or want is None:
            failed.append(f"{name}: no gradient ({'ours' if got is None else 'oracle'})")
            continue
        scale = want.abs().max().item()
        # key-bias gradients are zero by construction (softmax ignores a per-row shift):
        # both sides give rounding noise there, compared against an absolute 1e-6 floor
        err = (got - want).abs().max().item() / max(scale, 1e-6)
        worst = max(worst, err)
        if not err <= RTOL:
            failed.append(f"{name}: max error {err:.3g} of max |ref| {scale:.3g}")
    label = f"{os.path.basename(path)}{' layers=' + str(config.layers) if config.layers > 1 else ''}"
    print(f"{'FAIL' if failed else 'ok'} {label}: {len(pairs)} tensors, worst relative "
          f"error {worst:.2e}" + "".join(f"\n  {f}" for f in failed))
    return not failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--plant", choices=PLANTS)
    args = parser.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("reference_check: no CUDA device visible to PyTorch: skipped")
        return 77
    paths = args.models or sorted(glob.glob(os.path.join(ROOT, "tests/oracle/models/*.json")))
    torch.manual_seed(7)
    ok = True
    for path in paths:
        with open(path) as f:
            model = json.load(f)
        if args.plant == "no-mask" and not model.get("key_padding"):
            continue
        ok &= check(path, model, args.device, args.plant)
        ok &= check(path, dict(model, layers=2), args.device, args.plant)
    print("reference_check:", "every model matches" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
