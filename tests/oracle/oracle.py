#!/usr/bin/python3
"""PyTorch oracle for `dmc eval`: checks the interpreter's forward and backward of a layer.

Usage:
  oracle.py --dmc PATH_TO_DMC --model MODEL.json [--rtol 1e-4] [--workdir DIR] [--keep]

Runs `dmc eval MODEL --train --seed SEED [--inputs LENGTHS] --out DIR/out.safetensors`
(key-padding lengths chosen by the oracle, see testdata.py), reads dmc's inputs,
parameters and dy from that file, recomputes y and every gradient in float64 with
PyTorch autograd (dropout masks from philox.py and the seed dmc reports), and compares.

Each tensor's bound scales with its own values: max |dmc - ref| <= rtol * max |ref|.
A gradient that is zero by construction (the key biases `bk`: softmax is invariant to
a shift of all scores of a row) or a reference that is all zero is not compared: dmc's
values are asserted zero (max |dmc| <= ZERO_RTOL times the scale of the related
gradients) and reported as such. Every tensor dmc writes must be finite.
Exits 0 only if every expected tensor is present, stored as documented and passes; 1
otherwise.
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
from philox import Layout
from safetensors_io import read_safetensors, write_safetensors
from testdata import oracle_lengths

# Both halves nonzero, so the dropout key's word order matters.
SEED = (1 << 32) + 7
# Bound on a tensor that must be zero, relative to the related gradients' max |ref|.
ZERO_RTOL = 1e-5
# Largest |ref| of a zero-by-construction tensor that the float64 reference may show
# (rounding), relative to the related scale; more means the oracle itself is wrong.
REFERENCE_ZERO_RTOL = 1e-9


def zero_by_construction(name):
    """Gradients that are exactly zero mathematically whatever the inputs."""
    return name.endswith((".bk.grad",))


def _related_scale(name, ref):
    """The scale a zero tensor is measured against: for a key bias `P.bk.grad`, max |ref|
    of the gradients on the same score path (P.wq, P.bq, P.wk); otherwise of every output."""
    prefix = name.split(".", 1)[0]
    related = [f"{prefix}.{w}.grad" for w in ("wq", "bq", "wk")]
    scales = [float(np.max(np.abs(ref[other]))) for other in related
              if zero_by_construction(name) and other in ref]
    if not scales or max(scales) == 0.0:
        scales = [float(np.max(np.abs(value))) for other, value in ref.items()
                  if other != name and not zero_by_construction(other)]
    return max(scales)


@dataclass
class Comparison:
    """Result of checking one dmc output file: table rows and named problems."""

    rows: list = field(default_factory=list)  # (name, shape, max abs err, max |ref|, ok)
    zeros: list = field(default_factory=list)  # (name, shape, max |dmc|, bound, ok)
    problems: list = field(default_factory=list)  # (tensor name, message)
    expected_outputs: int = 0

    @property
    def compared(self):
        """Tensors compared against a nonzero reference (zero checks not included)."""
        return len(self.rows)

    @property
    def passed(self):
        return not self.problems and self.expected_outputs > 0 \
            and self.compared + len(self.zeros) == self.expected_outputs

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


def _element(dims, shape, flat):
    """'b=1,j=0,i=5' for flat index `flat` of a tensor stored with `dims`."""
    index = np.unravel_index(flat, shape) if shape else ()
    return ",".join(f"{letter}={int(n)}" for letter, n in zip(dims, index)) or "scalar"


def _non_finite(dims, value):
    """A message naming the first NaN/Inf element of `value`, or None."""
    bad = np.flatnonzero(~np.isfinite(value))
    if not bad.size:
        return None
    return (f"{bad.size} non-finite element(s), first at [{_element(dims, value.shape, bad[0])}]"
            f" = {value.flat[bad[0]]}")


def _compare_one(name, dims, actual, expected, rtol):
    """(row, problem or None) for a tensor with a nonzero reference."""
    error = np.abs(actual.astype(np.float64) - expected)
    scale = float(np.max(np.abs(expected)))
    worst = int(np.argmax(error))
    bound = rtol * scale
    ok = bool(error.flat[worst] <= bound)
    row = (name, expected.shape, float(error.flat[worst]), scale, ok)
    if ok:
        return row, None
    return row, (f"max abs error {error.flat[worst]:.3e} exceeds {bound:.3e} (rtol {rtol:g} x "
                 f"max |ref| {scale:.3e}) at [{_element(dims, expected.shape, worst)}]: dmc "
                 f"{float(actual.flat[worst]):.6e}, reference {float(expected.flat[worst]):.6e}")


def _check_zero(name, dims, actual, expected, related, zero_rtol=ZERO_RTOL,
                reference_zero_rtol=REFERENCE_ZERO_RTOL):
    """(zero row, problem or None) for a tensor whose reference is (mathematically) zero."""
    bound = zero_rtol * related
    reference_max = float(np.max(np.abs(expected)))
    if reference_max > reference_zero_rtol * related:
        # Our own reference contradicts "zero by construction": the oracle is wrong.
        return (name, expected.shape, float("nan"), bound, False), \
            f"reference max |ref| {reference_max:.3e} is not zero (related scale {related:.3e})"
    magnitude = np.abs(actual.astype(np.float64))
    worst = int(np.argmax(magnitude))
    ok = bool(magnitude.flat[worst] <= bound)
    row = (name, expected.shape, float(magnitude.flat[worst]), bound, ok)
    if ok:
        return row, None
    return row, (f"must be zero but max |dmc| is {magnitude.flat[worst]:.3e} > {bound:.3e} "
                 f"({zero_rtol:g} x related scale {related:.3e}) at "
                 f"[{_element(dims, expected.shape, worst)}]")


def compare(config, data, rtol, layout=Layout(), zero_rtol=ZERO_RTOL,
            reference_zero_rtol=REFERENCE_ZERO_RTOL, **reference_options):
    """Checks a SafetensorsFile written by `dmc eval` (or `dmc-run`) against the PyTorch
    reference.

    `layout` is the dropout counter layout the reference uses (a test may plant a fault);
    `zero_rtol` bounds dmc's zero-by-construction tensors and `reference_zero_rtol` the
    reference's own (both relative to the related scale; a float32 reference or a bf16
    layer needs looser ones than the float64 oracle); `reference_options` go to
    layers.reference (dtype, device).
    """
    inputs, outputs = expected_tensors(config)
    result = Comparison(expected_outputs=len(outputs))
    for name, (dims, dtype) in {**inputs, **outputs}.items():
        problem = _check_stored(config, data, name, dims, dtype)
        if not problem and dtype == "F32":
            problem = _non_finite(dims, data.tensors[name])
        if problem:
            result.problems.append((name, problem))
    unusable = {name for name, _ in result.problems}
    if unusable & set(inputs):
        return result  # no reference without every input: nothing is compared
    seed = None
    if config.has_dropout:
        if "seed" not in data.metadata:
            result.problems.append(("seed", "dropout model but no 'seed' in the metadata"))
            return result
        seed = int(data.metadata["seed"])
    ref = reference(config, {name: data.tensors[name] for name in inputs}, seed, layout,
                    **reference_options)
    for name, (dims, _) in outputs.items():
        if name in unusable:
            continue
        if zero_by_construction(name) or not np.any(ref[name]):
            row, problem = _check_zero(name, dims, data.tensors[name], ref[name],
                                       _related_scale(name, ref), zero_rtol,
                                       reference_zero_rtol)
            result.zeros.append(row)
        else:
            row, problem = _compare_one(name, dims, data.tensors[name], ref[name], rtol)
            result.rows.append(row)
        if problem:
            result.problems.append((name, problem))
    return result


def print_report(result, extra_names=()):
    """Prints the comparison table, any problems, and the compared-tensor count."""
    width = max([len(row[0]) for row in result.rows] + [len("tensor")])
    print(f"{'tensor':<{width}}  {'shape':<14}  {'max abs err':>11}  {'max |ref|':>10}  status")
    for name, shape, error, ref_max, ok in result.rows:
        shape_text = "x".join(map(str, shape))
        print(f"{name:<{width}}  {shape_text:<14}  {error:11.3e}  {ref_max:10.3e}  "
              f"{'ok' if ok else 'FAIL'}")
    for name, shape, magnitude, bound, ok in result.zeros:
        shape_text = "x".join(map(str, shape))
        print(f"{name:<{width}}  {shape_text:<14}  zero: max |dmc| {magnitude:.3e} <= "
              f"{bound:.3e}  {'ok' if ok else 'FAIL'}")
    for name in extra_names:
        print(f"note: {name} in dmc output is not checked")
    for name, message in result.problems:
        print(f"FAIL {name}: {message}")
    print(f"compared {result.compared} of {result.expected_outputs} expected output tensors "
          f"against a nonzero reference, {len(result.zeros)} asserted zero: "
          f"{'PASS' if result.passed else 'FAIL'}")


def write_lengths(config, model_path, path):
    """Writes the oracle's key-padding lengths for `--inputs`; returns the path or None."""
    lengths = oracle_lengths(config, model_path)
    if not lengths:
        return None
    write_safetensors(path, lengths, {f"dims.{name}": "b" for name in lengths})
    print("lengths:", ", ".join(f"{name} {value.tolist()}" for name, value in lengths.items()))
    return path


def run_dmc(dmc, model_path, out_path, stage="autodiff", inputs_path=None):
    """Runs `dmc eval` on the graph after `stage`; returns None or a description of the failure."""
    command = [dmc, "eval", model_path, "--train", "--stage", stage, "--seed", str(SEED),
               "--out", out_path]
    if inputs_path:
        command += ["--inputs", inputs_path]
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


def check_model(dmc, model_path, rtol, workdir, stage="autodiff", layout=Layout()):
    """Runs dmc on one model and compares; returns True if it passes. Prints the report."""
    with open(model_path) as f:
        config = LayerConfig.from_json(json.load(f))
    out_path = os.path.join(workdir, "out.safetensors")
    inputs_path = write_lengths(config, model_path, os.path.join(workdir, "lengths.safetensors"))
    failure = run_dmc(dmc, model_path, out_path, stage, inputs_path)
    if failure:
        print(f"FAIL {failure}")
        return False
    data = read_safetensors(out_path)
    result = compare(config, data, rtol, layout)
    inputs, outputs = expected_tensors(config)
    print_report(result, sorted(set(data.tensors) - set(inputs) - set(outputs)))
    return result.passed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dmc", required=True, help="path to the dmc executable")
    parser.add_argument("--model", required=True, help="model JSON")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="max abs error allowed, relative to each tensor's max |ref|")
    parser.add_argument("--workdir", help="where dmc writes out.safetensors (default: temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep out.safetensors afterwards")
    parser.add_argument("--stage", default="autodiff",
                        help="the pipeline stage whose graph dmc evaluates (e.g. fuse)")
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="dmc-oracle-")
    os.makedirs(workdir, exist_ok=True)
    try:
        passed = check_model(args.dmc, args.model, args.rtol, workdir, args.stage)
    except (ValueError, KeyError, OSError) as error:
        print(f"FAIL {type(error).__name__}: {error}")
        passed = False
    finally:
        out_path = os.path.join(workdir, "out.safetensors")
        if args.keep:
            print(f"kept {out_path}")
        elif args.workdir:
            for name in ("out.safetensors", "lengths.safetensors"):
                if os.path.exists(os.path.join(workdir, name)):
                    os.remove(os.path.join(workdir, name))
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
