#!/usr/bin/python3
"""dmc.torch.hf's weight mapping: transformers' BertLayer / GPT2Block against
dmc.torch.reference_layer loaded with the mapped weights, float64 on the CPU.

Usage: hf_check.py [--device cpu|cuda] [--plant-fault scale|zero|transpose]
Models: tests/gpu/models/torch-module/hf-{bert,gpt2}.json (hf_cases.py says how HF's
conventions are matched). y, x.grad and every parameter gradient must agree within 1e-9 of
each tensor's max |ref|. Exits 77 (skipped) when transformers is not importable.
--plant-fault: scale multiplies the reference layer's y by 1.25, zero zeroes it, transpose
loads GPT-2's Conv1D weights untransposed (the mistake the mapping exists to avoid);
the run must then fail.
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), HERE]

import hf_cases  # noqa: E402
from dmc.torch import reference_layer  # noqa: E402

MODELS = os.path.join(ROOT, "tests", "gpu", "models", "torch-module")


def check(kind, device, fault):
    path = os.path.join(MODELS, f"hf-{kind if kind == 'bert' else 'gpt2'}.json")
    with open(path) as f:
        model = json.load(f)
    module, _ = hf_cases.make(kind, model)
    module = module.double().to(device)
    state = hf_cases.state_dict_of(kind, module)
    if fault == "transpose" and kind == "gpt2":
        w = module.mlp.c_fc.weight  # [i, u] loaded as if it were [u, i]
        state["ffn.w1"] = w.detach().clone().reshape(state["ffn.w1"].shape)
    ref = reference_layer(path).double().to(device).eval()
    ref.load_state_dict(state)
    b, j, i = model["batch"], model["seq"], model["hidden"]
    x = torch.randn(b, j, i, dtype=torch.float64, device=device)
    dy = torch.randn_like(x)
    lengths = None
    if model.get("key_padding"):
        lengths = torch.tensor([j] + [max(1, j - 3 * n) for n in range(1, b)],
                               dtype=torch.int32, device=device)
    y_hf, dx_hf, grads_hf = hf_cases.run(kind, module, x, lengths, dy)
    xr = x.clone().requires_grad_()
    y = ref(xr, lengths=lengths) if lengths is not None else ref(xr)
    y.backward(dy)
    y = y.detach()
    if fault == "scale":
        y = y * 1.25
    elif fault == "zero":
        y = torch.zeros_like(y)
    named = dict(ref.named_parameters())
    pairs = [("y", y, y_hf), ("x.grad", xr.grad, dx_hf)]
    pairs += [(f"{n}.grad", named[n].grad, g) for n, g in grads_hf.items()]
    print(f"{kind}: {len(pairs)} tensors (HF {type(module).__name__}, float64, {device})")
    return hf_cases.compare(pairs, 1e-9, kind)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--plant-fault", choices=("scale", "zero", "transpose"))
    args = parser.parse_args(argv)
    if not hf_cases.have_transformers():
        print("hf_check: transformers is not importable here (Debian has no package): "
              "skipped; run it where transformers is installed (the GPU machine)")
        return 77
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("hf_check: no CUDA device visible to PyTorch: skipped")
        return 77
    torch.manual_seed(1)
    failed = check("bert", args.device, args.plant_fault) + \
        check("gpt2", args.device, args.plant_fault)
    print("hf_check:", f"FAIL {failed}" if failed else "every tensor matches")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
