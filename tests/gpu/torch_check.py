#!/usr/bin/env python3
"""A whole training step of a compiled layer on the GPU against PyTorch autograd.

Usage (on the GPU machine, after `dmc-run BUNDLE --train --out RUN.safetensors`):
  torch_check.py --model MODEL.json --run RUN.safetensors [--device cuda]
                 [--dtype float32] [--rtol 0.05] [--plant-fault scale|zero]

RUN.safetensors is what `dmc-run` writes (the conventions of `dmc eval`: every argument
and result, F32, `dims.<name>` metadata, the dropout seed). The inputs, parameters and
dy it used are fed to the independent PyTorch layer of tests/oracle/layers.py, computed
in --dtype on --device; y and every gradient are compared with dmc's. Per tensor it
prints the worst absolute error relative to the tensor's own max |ref| (the bound is
rtol x max |ref|, so a bf16 layer is measured against its own scale).

--plant-fault multiplies dmc's y by 1.25 (scale) or zeroes it (zero) before comparing:
the check must then fail (run-device.sh runs both and expects exit 1).
Exits 0 only if every expected tensor is present and within its bound.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))

from layers import LayerConfig  # noqa: E402
from oracle import compare, expected_tensors  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def plant(data, fault):
    """Plants `fault` in dmc's y (a copy)."""
    y = data.tensors["y"].astype(np.float32)
    data.tensors["y"] = y * np.float32(1.25) if fault == "scale" else np.zeros_like(y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the model JSON the bundle was built from")
    parser.add_argument("--run", required=True, help="dmc-run --out file")
    parser.add_argument("--device", default="cuda", help="torch device (default cuda)")
    parser.add_argument("--dtype", default="float32", choices=sorted(_DTYPES))
    parser.add_argument("--rtol", type=float, default=0.05,
                        help="max abs error allowed, relative to each tensor's max |ref|")
    parser.add_argument("--plant-fault", choices=("scale", "zero"))
    args = parser.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("torch_check: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    with open(args.model) as f:
        config = LayerConfig.from_json(json.load(f))
    data = read_safetensors(args.run)
    if args.plant_fault:
        plant(data, args.plant_fault)
    device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    print(f"torch_check: {os.path.basename(args.model)} against PyTorch {torch.__version__} "
          f"autograd in {args.dtype} on {device_name}"
          + (f" (planted fault: {args.plant_fault})" if args.plant_fault else ""))
    # Zero-by-construction gradients: dmc's within the same bound as every tensor, the
    # reference's own rounding within 1e-5 of the related scale (float32 arithmetic).
    result = compare(config, data, args.rtol, zero_rtol=args.rtol, reference_zero_rtol=1e-5,
                     dtype=_DTYPES[args.dtype], device=args.device)
    width = max([len(row[0]) for row in result.rows] + [len("tensor")])
    print(f"{'tensor':<{width}}  {'shape':<18}  {'max |err|/max |ref|':>19}  status")
    worst = 0.0
    for name, shape, error, ref_max, ok in result.rows:
        relative = error / ref_max
        worst = max(worst, relative)
        print(f"{name:<{width}}  {'x'.join(map(str, shape)):<18}  {relative:19.3e}  "
              f"{'ok' if ok else 'FAIL'}")
    for name, shape, magnitude, bound, ok in result.zeros:
        print(f"{name:<{width}}  {'x'.join(map(str, shape)):<18}  zero: max |dmc| "
              f"{magnitude:.3e} <= {bound:.3e}  {'ok' if ok else 'FAIL'}")
    for name, message in result.problems:
        print(f"FAIL {name}: {message}")
    _, outputs = expected_tensors(config)
    print(f"torch_check: {result.compared} of {len(outputs)} tensors compared, "
          f"{len(result.zeros)} asserted zero, worst {worst:.3e} of max |ref| "
          f"(bound {args.rtol:g}): {'PASS' if result.passed else 'FAIL'}")
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
