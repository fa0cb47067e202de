#!/usr/bin/python3
"""PyTorch oracle for `dmc eval`: checks the interpreter's forward and backward of a layer.

Usage:
  oracle.py --dmc PATH_TO_DMC --model MODEL.json [--tol 1e-4] [--workdir DIR] [--keep]

Runs `dmc eval MODEL --train --seed 7 --out DIR/out.safetensors`, reads dmc's inputs,
parameters and dy from that file, recomputes y and every gradient in float64 with
PyTorch autograd, and compares. Exits 0 only if y and every expected gradient are present,
stored as documented, and within --tol (max absolute error); 1 otherwise.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

from layers import LayerConfig, float_input_dims, length_input_dims, parameter_dims, reference
from safetensors_io import read_safetensors

SEED = 7


@dataclass
class Comparison:
    """Result of checking one dmc output file: table rows and named problems."""

    rows: list = field(default_factory=list)  # (name, shape, max abs err, max |ref|, ok)
    problems: list = field(default_factory=list)  # (tensor name, message)
    expected_outputs: int = 0

    @property
    def compared(self):
        return len(self.rows)

    @property
    def passed(self):
        return not self.problems and self.expected_outputs > 0 \
            and self.compared == self.expected_outputs

    def failing_tensors(self):
        """Names of the tensors that caused a failure."""
        return sorted({name for name, _ in self.problems})


def expected_tensors(config):
    """Every tensor dmc must write: name -> (dims, safetensors dtype), inputs first."""
    inputs = {name: (dims, "F32") for name, dims in float_input_dims(config).items()}
    inputs.update({name: (dims, "I32") for name, dims in length_input_dims(config).items()})
    inputs.update({name: (dims, "F32") for name, dims in parameter_dims(config).items()})
    inputs["dy"] = ("bji", "F32")
    outputs = {"y": ("bji", "F32")}
    for name, dims in {**float_input_dims(config), **parameter_dims(config)}.items():
        outputs[f"{name}.grad"] = (dims, "F32")
    return inputs, outputs


def _check_stored(config, data, name, dims, dtype):
    """Returns a problem message if tensor `name` is absent or not stored as documented."""
    if name not in data.tensors:
        return "missing from dmc output"
    stored_dims = data.metadata.get(f"dims.{name}")
    if stored_dims != dims:
        return f"metadata dims.{name} is {stored_dims!r}, expected {dims!r}"
    shape = tuple(data.tensors[name].shape)
    if shape != config.shape(dims):
        return f"shape {shape}, expected {config.shape(dims)} for dims {dims!r}"
    if data.dtypes[name] != dtype:
        return f"dtype {data.dtypes[name]}, expected {dtype}"
    return None


def _max_abs_error(actual, expected):
    """Max |actual - expected|; infinite if either side holds NaN or Inf."""
    error = np.abs(actual.astype(np.float64) - expected)
    if not np.all(np.isfinite(error)):
        return float("inf")
    return float(np.max(error, initial=0.0))


def compare(config, data, tol):
    """Checks a SafetensorsFile written by `dmc eval` against the PyTorch reference."""
    inputs, outputs = expected_tensors(config)
    result = Comparison(expected_outputs=len(outputs))
    for name, (dims, dtype) in {**inputs, **outputs}.items():
        problem = _check_stored(config, data, name, dims, dtype)
        if problem:
            result.problems.append((name, problem))
    unusable = {name for name, _ in result.problems}
    if unusable & set(inputs):
        return result  # no reference without every input: nothing is compared
    ref = reference(config, {name: data.tensors[name] for name in inputs})
    for name in outputs:
        if name in unusable:
            continue
        error = _max_abs_error(data.tensors[name], ref[name])
        ok = error <= tol
        result.rows.append((name, ref[name].shape, error, float(np.max(np.abs(ref[name]))), ok))
        if not ok:
            result.problems.append((name, f"max abs error {error:.3e} exceeds tol {tol:g}"))
    return result


def print_report(result, extra_names=()):
    """Prints the comparison table, any problems, and the compared-tensor count."""
    width = max([len(row[0]) for row in result.rows] + [len("tensor")])
    print(f"{'tensor':<{width}}  {'shape':<14}  {'max abs err':>11}  {'max |ref|':>10}  status")
    for name, shape, error, ref_max, ok in result.rows:
        shape_text = "x".join(map(str, shape))
        print(f"{name:<{width}}  {shape_text:<14}  {error:11.3e}  {ref_max:10.3e}  "
              f"{'ok' if ok else 'FAIL'}")
    for name in extra_names:
        print(f"note: {name} in dmc output is not checked")
    for name, message in result.problems:
        print(f"FAIL {name}: {message}")
    print(f"compared {result.compared} of {result.expected_outputs} expected output tensors: "
          f"{'PASS' if result.passed else 'FAIL'}")


def run_dmc(dmc, model_path, out_path, stage="autodiff"):
    """Runs `dmc eval` on the graph after `stage`; returns None or a description of the failure."""
    command = [dmc, "eval", model_path, "--train", "--stage", stage, "--seed", str(SEED),
               "--out", out_path]
    print("running:", " ".join(command))
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"could not run dmc: {error}"
    if proc.returncode != 0:
        return f"dmc exited with status {proc.returncode}; stderr:\n{proc.stderr}"
    if not os.path.isfile(out_path):
        return f"dmc succeeded but wrote no {out_path}; stderr:\n{proc.stderr}"
    return None


def check_model(dmc, model_path, tol, workdir, stage="autodiff"):
    """Runs dmc on one model and compares; returns True if it passes. Prints the report."""
    with open(model_path) as f:
        config = LayerConfig.from_json(json.load(f))
    out_path = os.path.join(workdir, "out.safetensors")
    failure = run_dmc(dmc, model_path, out_path, stage)
    if failure:
        print(f"FAIL {failure}")
        return False
    data = read_safetensors(out_path)
    result = compare(config, data, tol)
    inputs, outputs = expected_tensors(config)
    print_report(result, sorted(set(data.tensors) - set(inputs) - set(outputs)))
    return result.passed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dmc", required=True, help="path to the dmc executable")
    parser.add_argument("--model", required=True, help="model JSON")
    parser.add_argument("--tol", type=float, default=1e-4, help="max absolute error allowed")
    parser.add_argument("--workdir", help="where dmc writes out.safetensors (default: temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep out.safetensors afterwards")
    parser.add_argument("--stage", default="autodiff",
                        help="the pipeline stage whose graph dmc evaluates (e.g. fuse)")
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="dmc-oracle-")
    os.makedirs(workdir, exist_ok=True)
    try:
        passed = check_model(args.dmc, args.model, args.tol, workdir, args.stage)
    except (ValueError, KeyError, OSError) as error:
        print(f"FAIL {type(error).__name__}: {error}")
        passed = False
    finally:
        out_path = os.path.join(workdir, "out.safetensors")
        if args.keep:
            print(f"kept {out_path}")
        elif args.workdir:
            if os.path.exists(out_path):
                os.remove(out_path)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
