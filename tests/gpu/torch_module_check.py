#!/usr/bin/env python3
"""dmc.torch.Layer on a GPU: against Hugging Face layers, dropout statistics, the module.

Usage: torch_module_check.py --bundles gpu-bundles/torch-module CASE [--plant-fault F]
  hf-bert-f32, hf-bert-bf16   transformers BertLayer (random weights, dropout off) copied
  hf-gpt2-f32, hf-gpt2-bf16   into the Layer (dmc.torch.hf); y, x.grad and every parameter
                              gradient against HF's in fp32 (bf16 bundles: the same
                              bf16-rounded weights and inputs, HF in fp32); per tensor the
                              worst |err| / max |ref|, within 1e-4 (f32) or 0.05 (bf16)
  dropout                     keep rates and the 1/(1-p) scaling of the hidden, activation
                              and attention dropouts, seeds (torch.manual_seed reproduces),
                              eval() through the dropout-free eval_bundle; gradients of a
                              step whose arena came back at the same address filled with
                              0xFF equal a clean step's
  module                      errors (bundle for sm_80, a CPU tensor), two forwards pending
                              at once, eval() (inference arena) equal to train(), a Stack
                              against reference_layer
--plant-fault scale|zero: dmc's y (HF cases), y - x and the dirty arena's x.grad (dropout)
is scaled by 1.25 or zeroed before the check, which must then fail (exit 1). Exits 77 without a CUDA device
or (HF cases) without transformers. Bundles: tests/gpu/make-bundles.sh (torch-module/).
"""

import argparse
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "tests", "python")]

import dmc.torch as dt  # noqa: E402
from dmc import _dmrt  # noqa: E402
import hf_cases  # noqa: E402

MODELS = os.path.join(HERE, "models", "torch-module")
RTOL = {"f32": 1e-4, "bf16": 0.05}


def fault(t, plant):
    return t * 1.25 if plant == "scale" else torch.zeros_like(t) if plant == "zero" else t


def hf_case(bundles, kind, dtype, plant):
    if not hf_cases.have_transformers():
        print("torch_module_check: transformers is not importable: skipped")
        return 77
    with open(os.path.join(MODELS, f"hf-{kind}.json")) as f:
        model = json.load(f)
    dev = torch.device("cuda", torch.cuda.current_device())
    torch.manual_seed(11)
    module, _ = hf_cases.make(kind, model)
    layer = dt.Layer(os.path.join(bundles, f"hf-{kind}-{dtype}.dmlib"))
    with torch.no_grad():  # HF keeps fp32 weights rounded to the bundle's dtype
        for p in module.parameters():
            p.copy_(p.to(layer.dtype).float())
    module = module.to(dev)
    layer.load_state_dict(hf_cases.state_dict_of(kind, module))
    for name, value in hf_cases.state_dict_of(kind, module).items():
        assert torch.equal(value.to(layer.dtype), layer.state_dict()[name]), name
    b, j, i = model["batch"], model["seq"], model["hidden"]
    x = torch.randn(b, j, i, device=dev).to(layer.dtype)
    dy = torch.randn(b, j, i, device=dev).to(layer.dtype)
    lengths = None
    if model.get("key_padding"):  # full, partly masked (never 0: see hf_cases.py)
        lengths = torch.tensor([j, max(1, j // 3)], dtype=torch.int32, device=dev)[:b]
    y_hf, dx_hf, grads_hf = hf_cases.run(kind, module, x.float(), lengths, dy.float())
    xd = x.clone().requires_grad_()
    y = layer(xd, lengths=lengths) if lengths is not None else layer(xd)
    y.backward(dy)
    named = dict(layer.named_parameters())
    pairs = [("y", fault(y.detach(), plant), y_hf), ("x.grad", xd.grad, dx_hf)]
    pairs += [(f"{n}.grad", named[n].grad, g) for n, g in grads_hf.items()]
    print(f"hf-{kind}-{dtype}: {type(module).__name__} vs dmc.torch.Layer on "
          f"{torch.cuda.get_device_name(dev)}, {len(pairs)} tensors, bound {RTOL[dtype]} "
          "x max |ref|")
    failed = hf_cases.compare(pairs, RTOL[dtype], kind)
    print(f"hf-{kind}-{dtype}:", f"FAIL {failed}" if failed else "every tensor within bound")
    return 1 if failed else 0


def _set(layer, values):
    with torch.no_grad():
        for p in layer.parameters():
            p.zero_()
        for name, v in values.items():
            dict(layer.named_parameters())[name].copy_(v)


def _rate_ok(label, kept, n, p_keep, failures):
    sigma = math.sqrt(p_keep * (1 - p_keep) / n)
    rate = kept / n
    ok = abs(rate - p_keep) <= 5 * sigma
    print(f"  {label}: keep rate {rate:.4f}, expected {p_keep:.4f} +- {5 * sigma:.4f} (5 sigma)"
          f"{'' if ok else '  FAIL'}")
    if not ok:
        failures.append(label)


def _values_ok(label, d, allowed, failures):
    dist = torch.stack([(d - a).abs() for a in allowed]).min(dim=0).values
    worst = dist.max().item()
    ok = worst <= 1e-5 * max(allowed)
    print(f"  {label}: every y - x in {[round(a, 6) for a in allowed]}: worst distance "
          f"{worst:.2e}{'' if ok else '  FAIL'}")
    if not ok:
        failures.append(label)


def dropout_case(bundles, plant):
    with open(os.path.join(MODELS, "dropout.json")) as f:
        model = json.load(f)
    pa, ph, pact = (model["dropout"][k] for k in ("attention", "hidden", "activation"))
    layer = dt.Layer(os.path.join(bundles, "dropout-f32.dmlib"),
                     eval_bundle=os.path.join(bundles, "dropout-off-f32.dmlib"))
    dev, (b, j, i, u, h) = layer.device, (model["batch"], model["seq"], model["hidden"],
                                         model["ffn"], model["heads"])
    p = i // h
    x = torch.randn(b, j, i, device=dev)
    failures = []
    gamma = {f"ln{n}.gamma": torch.ones(i) for n in (1, 2)}
    # A: only the attention block's bias reaches y: y - x = hidden_dropout(1)
    _set(layer, dict(gamma, **{"attn.bo": torch.ones(i)}))
    d = fault(layer(x, seed=(5, 0)).detach() - x, plant)
    print(f"dropout (p attention {pa}, hidden {ph}, activation {pact}), {d.numel()} elements")
    _values_ok("A hidden", d, [0.0, 1 / (1 - ph)], failures)
    _rate_ok("A hidden", (d != 0).sum().item(), d.numel(), 1 - ph, failures)
    # B: only the FFN: w1 = 0, b1 = 1, w2 selects the first i units: activation dropout of
    # gelu_tanh(1), then the hidden dropout
    g = torch.nn.functional.gelu(torch.tensor(1.0), approximate="tanh").item()
    _set(layer, dict(gamma, **{"ffn.b1": torch.ones(u), "ffn.w2": torch.eye(i, u)}))
    d = fault(layer(x, seed=(6, 0)).detach() - x, plant)
    _values_ok("B activation+hidden", d, [0.0, g / ((1 - pact) * (1 - ph))], failures)
    _rate_ok("B activation+hidden", (d != 0).sum().item(), d.numel(), (1 - pact) * (1 - ph),
             failures)
    # C: uniform causal attention (wq = wk = 0) over v = 1 (bv), wo the identity: y - x =
    # hidden_dropout(sum of the kept weights / (1 - p)); query 0 has one key: exact values
    wo = torch.eye(i).view(i, h, p)
    _set(layer, dict(gamma, **{"attn.bv": torch.ones(h, p), "attn.wo": wo}))
    d = fault(layer(x, seed=(7, 0)).detach() - x, plant)
    _values_ok("C attention, query 0", d[:, 0], [0.0, 1 / ((1 - pa) * (1 - ph))], failures)
    mean, n_eff = d.mean().item(), b * j * h  # heads share a mask across p
    bound = 6 * d.view(b, j, h, p)[..., 0].std().item() / math.sqrt(n_eff)
    ok = abs(mean - 1.0) <= bound
    print(f"  C attention: mean of y - x {mean:.4f}, expected 1 +- {bound:.4f}"
          f"{'' if ok else '  FAIL'}")
    failures += [] if ok else ["C mean"]
    # seeds: manual_seed reproduces, the next draw differs, eval() has no dropout
    torch.manual_seed(3)
    y1 = layer(x).detach()
    y2 = layer(x).detach()
    torch.manual_seed(3)
    y3 = layer(x).detach()
    layer.eval()
    y_eval = layer(x).detach()
    ok = torch.equal(y1, y3) and not torch.equal(y1, y2)
    # without dropout the weights of each row sum to 1: y - x = 1 everywhere
    ok_eval = torch.allclose(fault(y_eval - x, plant), torch.ones_like(x), atol=1e-5)
    print(f"  seeds: torch.manual_seed reproduces y, the next call draws new masks: "
          f"{'ok' if ok else 'FAIL'}; eval(): no dropout (y - x = 1): "
          f"{'ok' if ok_eval else 'FAIL'}")
    failures += ([] if ok else ["seeds"]) + ([] if ok_eval else ["eval"])
    _arena_reuse(layer.train(), x, plant, failures)  # last: it draws new parameters
    print("dropout:", f"FAIL {failures}" if failures else "every check passed")
    return 1 if failures else 0


def _arena_reuse(layer, x, plant, failures):
    """The arena handed back dirty: a step's arena comes from PyTorch's allocator, which
    returns a freed one at the same address, possibly after another tensor wrote it. The
    runtime zeroes its kernel workspaces at every dmrt_set_arena; with the zeroing keyed
    to the address, a column reduction's arrival counters started from the 0xFF bytes
    written here and its bias gradients were never stored. Steps: R = grads(dy2) on the
    first arena; grads(dy1) (other values in the same gradient buffers); the freed arena
    filled with 0xFF; grads(dy2) must equal R bit for bit (same seed)."""
    arenas, set_arena = [], _dmrt.Handle.set_arena

    def spy(handle, ptr, nbytes):
        arenas.append((ptr, nbytes))
        return set_arena(handle, ptr, nbytes)

    with torch.no_grad():
        for name, p in layer.named_parameters():
            p.copy_(torch.randn_like(p) * 0.1 + (1.0 if name.endswith("gamma") else 0.0))
    xs = x.clone().requires_grad_()
    dy1, dy2 = torch.randn_like(x), torch.randn_like(x)

    def grads(dy):
        layer.zero_grad(set_to_none=True)
        xs.grad = None
        layer(xs, seed=(11, 0)).backward(dy)
        named = [("x", xs.grad)] + [(n, p.grad) for n, p in layer.named_parameters()]
        return [(n, g.clone()) for n, g in named]

    _dmrt.Handle.set_arena = spy
    try:
        ref = grads(dy2)
        grads(dy1)
        torch.cuda.synchronize()
        junk = torch.full((arenas[-1][1],), 255, dtype=torch.uint8, device=x.device)
        dirtied = junk.data_ptr() == arenas[-1][0]
        del junk
        again = grads(dy2)
        torch.cuda.synchronize()
    finally:
        _dmrt.Handle.set_arena = set_arena
    same_place = arenas[-1][0] == arenas[-2][0]
    again[0] = (again[0][0], fault(again[0][1], plant))
    zero = [n for n, g in ref if not g.abs().max().item() > 0]
    differ = [n for (n, a), (_, b) in zip(ref, again) if not torch.equal(a, b)]
    ok = dirtied and same_place and not zero and not differ
    print(f"  arena handed back dirty ({arenas[-1][1]} bytes at the same address: "
          f"{dirtied and same_place}): {len(ref)} gradients bit-identical to the clean "
          f"step's: {'ok' if ok else 'FAIL'}"
          + (f"; differ: {differ}" if differ else "") + (f"; all zero: {zero}" if zero else "")
          + ("" if dirtied else "; the allocator did not hand the arena to the 0xFF tensor")
          + ("" if same_place else "; the next step's arena moved"))
    failures += [] if ok else ["arena reuse"]


def _expect(label, fn, exc, text, failures):
    try:
        fn()
    except exc as e:
        ok = text in str(e)
        print(f"  {label}: {type(e).__name__}: {e}"[:300] + ("" if ok else "  FAIL"))
        failures += [] if ok else [label]
        return
    print(f"  {label}: no error  FAIL")
    failures.append(label)


def module_case(bundles, plant):
    failures = []
    dev = torch.device("cuda", torch.cuda.current_device())
    sm80 = os.path.join(bundles, "tiny-sm80.dmlib")
    _expect("bundle for sm_80", lambda: dt.Layer(sm80), dt.DmrtError, "DMRT_ERROR_ARCH", failures)
    stack_json = os.path.join(MODELS, "stack.json")
    with open(stack_json) as f:
        model = json.load(f)
    stack = dt.Stack(os.path.join(bundles, "stack-f32.dmlib"))
    b, j, m, i = model["batch"], model["seq"], model["memory_seq"], model["hidden"]
    x, mem = torch.randn(b, j, i, device=dev), torch.randn(b, m, i, device=dev)
    lens = torch.tensor([m, 2], dtype=torch.int32, device=dev)
    _expect("CPU tensor", lambda: stack(x.cpu(), memory=mem, memory_lengths=lens), ValueError,
            "input 'x' is on the CPU", failures)
    # the Stack against reference_layer (same state dict), y and every gradient, fp32
    ref = dt.reference_layer(stack_json).to(dev).eval()
    ref.load_state_dict(stack.state_dict())
    dy = torch.randn(b, j, i, device=dev)
    xs, ms = x.clone().requires_grad_(), mem.clone().requires_grad_()
    y = stack(xs, memory=ms, memory_lengths=lens)
    y.backward(dy)
    xr, mr = x.clone().requires_grad_(), mem.clone().requires_grad_()
    y_ref = ref(xr, memory=mr, memory_lengths=lens)
    y_ref.backward(dy)
    named, ref_named = dict(stack.named_parameters()), dict(ref.named_parameters())
    pairs = [("y", fault(y.detach(), plant), y_ref.detach()), ("x.grad", xs.grad, xr.grad),
             ("memory.grad", ms.grad, mr.grad)]
    pairs += [(f"{n}.grad", named[n].grad, ref_named[n].grad) for n in ref_named]
    print(f"module: Stack ({stack.num_layers} layers) vs reference_layer, {len(pairs)} tensors")
    failures += hf_cases.compare(pairs, RTOL["f32"], "stack")
    # two forwards pending at once (two runtime instances), then one backward
    x1, x2 = x.clone().requires_grad_(), (2 * x).requires_grad_()
    y1 = stack(x1, memory=mem, memory_lengths=lens)
    y2 = stack(x2, memory=mem, memory_lengths=lens)
    (y1 * dy + y2 * dy).sum().backward()
    x1b = x.clone().requires_grad_()
    stack(x1b, memory=mem, memory_lengths=lens).backward(dy)
    ok = torch.allclose(x1.grad, x1b.grad, rtol=1e-5, atol=1e-6) and x2.grad is not None
    print(f"  two pending forwards: x.grad as alone {'ok' if ok else 'FAIL'}")
    failures += [] if ok else ["two pending forwards"]
    # eval(): DMRT_MODE_INFERENCE in the inference plan's arena, same kernels: y as a
    # training forward (autograd on: DMRT_MODE_TRAIN) gives it
    y_train = stack(x, memory=mem, memory_lengths=lens).detach()
    with torch.no_grad():
        y_eval = stack.eval()(x, memory=mem, memory_lengths=lens)
    ok = torch.allclose(y_train, y_eval, rtol=1e-6, atol=1e-6)
    print(f"  eval() y equals train() y (no dropout): {'ok' if ok else 'FAIL'}")
    failures += [] if ok else ["eval"]
    print("module:", f"FAIL {failures}" if failures else "every check passed")
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", choices=["hf-bert-f32", "hf-bert-bf16", "hf-gpt2-f32",
                                         "hf-gpt2-bf16", "dropout", "module"])
    parser.add_argument("--bundles", required=True)
    parser.add_argument("--plant-fault", choices=("scale", "zero"))
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("torch_module_check: no CUDA device visible to PyTorch: skipped")
        return 77
    if not os.path.isdir(args.bundles):
        print(f"torch_module_check: {args.bundles}: no such directory "
              "(run tests/gpu/make-bundles.sh)")
        return 2
    if args.case.startswith("hf-"):
        _, kind, dtype = args.case.split("-")
        return hf_case(args.bundles, kind, dtype, args.plant_fault)
    if args.case == "dropout":
        return dropout_case(args.bundles, args.plant_fault)
    return module_case(args.bundles, args.plant_fault)


if __name__ == "__main__":
    sys.exit(main())
