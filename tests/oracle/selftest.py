#!/usr/bin/python3
"""Self-test of the oracle without dmc.

For each model JSON (default: every file in models/), builds a fake `dmc eval` output from
random weights and the oracle's own reference, then checks that:
  - layers.py agrees with torch.nn.Transformer{Encoder,Decoder}Layer (crosscheck.py);
  - the comparison passes on it after a safetensors write/read round trip;
  - it fails, naming exactly the tensor concerned, for each corruption: a gradient off by
    1e-3, a missing gradient, wrong dims metadata, NaN in y;
  - the oracle CLI passes end to end against a fake dmc executable, and fails when dmc fails.

The fake dmc is this script run as `selftest.py --fake-dmc eval MODEL --train [--stage S] --seed 7
--out OUT`; it exits with status 3 if FAKE_DMC_FAIL is set in its environment.
"""

import argparse
import glob
import json
import os
import sys
import tempfile

import numpy as np
import torch

import crosscheck
import oracle
from layers import LayerConfig, reference
from safetensors_io import read_safetensors, write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
PERTURBED_GRAD = "attn.wq.grad"
# Weight name suffix -> number of leading (output) letters in its dims.
_OUTPUT_LETTERS = {"wq": 2, "wk": 2, "wv": 2, "wo": 1, "w1": 1, "w2": 1}


def _random_value(config, name, dims, generator):
    """A plausible random value for one input or parameter, as float32 or int32 numpy."""
    shape = config.shape(dims)
    if name.endswith("lengths"):
        keys = config.memory_seq if name == "memory_lengths" else config.seq
        lengths = torch.randint(1, keys, shape, generator=generator)
        lengths[0] = keys
        return lengths.numpy().astype(np.int32)
    value = torch.randn(shape, generator=generator, dtype=torch.float64)
    suffix = name.rsplit(".", 1)[-1]
    if suffix in _OUTPUT_LETTERS:
        fan_in = np.prod(shape[_OUTPUT_LETTERS[suffix]:])
        value = value / np.sqrt(fan_in)
    elif suffix == "gamma":
        value = 1.0 + 0.1 * value
    elif name not in ("x", "memory", "dy"):
        value = 0.1 * value
    return value.numpy().astype(np.float32)


def fake_dmc_tensors(config, seed=oracle.SEED):
    """Tensors and metadata that a correct `dmc eval --train` would write, in fp32."""
    generator = torch.Generator().manual_seed(seed)
    inputs, outputs = oracle.expected_tensors(config)
    tensors = {name: _random_value(config, name, dims, generator)
               for name, (dims, _) in inputs.items()}
    ref = reference(config, tensors)
    tensors.update({name: ref[name].astype(np.float32) for name in outputs})
    metadata = {f"dims.{name}": dims for name, (dims, _) in {**inputs, **outputs}.items()}
    return tensors, metadata


def _perturb(tensors, metadata):
    tensors[PERTURBED_GRAD] = tensors[PERTURBED_GRAD].copy()
    tensors[PERTURBED_GRAD].flat[3] += 1e-3
    return PERTURBED_GRAD


def _drop_grad(tensors, metadata):
    del tensors["x.grad"]
    return "x.grad"


def _wrong_dims(tensors, metadata):
    tensors["attn.wo"] = np.ascontiguousarray(np.moveaxis(tensors["attn.wo"], 0, -1))
    metadata["dims.attn.wo"] = "hpi"
    return "attn.wo"


def _nan_output(tensors, metadata):
    tensors["y"] = tensors["y"].copy()
    tensors["y"].flat[0] = np.nan
    return "y"


CORRUPTIONS = {
    "gradient off by 1e-3": _perturb,
    "missing gradient": _drop_grad,
    "parameter stored as hpi": _wrong_dims,
    "NaN in y": _nan_output,
}


def _compare_written(config, tensors, metadata, path):
    """Writes tensors like dmc would, reads them back, and compares."""
    write_safetensors(path, tensors, metadata)
    return oracle.compare(config, read_safetensors(path), tol=1e-4)


def _write_fake_dmc(workdir):
    """A shell wrapper that makes this script behave as the dmc executable."""
    path = os.path.join(workdir, "dmc")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nexec {sys.executable} {os.path.abspath(__file__)} --fake-dmc "$@"\n')
    os.chmod(path, 0o755)
    return path


def check_model(model_path, workdir):
    """Runs every self-test case for one model; returns a list of failure messages."""
    with open(model_path) as f:
        config = LayerConfig.from_json(json.load(f))
    failures = []
    path = os.path.join(workdir, "fake.safetensors")
    tensors, metadata = fake_dmc_tensors(config)
    difference = crosscheck.max_difference(config, tensors)
    if not difference < 1e-10:
        failures.append(f"layers.py differs from torch.nn by {difference:.3e}")
    print(f"  layers.py vs torch.nn layer: max abs difference {difference:.1e}")
    result = _compare_written(config, tensors, metadata, path)
    if not result.passed or result.compared != result.expected_outputs:
        failures.append(f"clean output did not pass: {result.problems}")
    print(f"  clean output: {'PASS' if result.passed else 'FAIL'} "
          f"({result.compared} of {result.expected_outputs} tensors compared)")
    for description, corrupt in CORRUPTIONS.items():
        bad_tensors, bad_metadata = dict(tensors), dict(metadata)
        target = corrupt(bad_tensors, bad_metadata)
        result = _compare_written(config, bad_tensors, bad_metadata, path)
        named = result.failing_tensors()
        detected = not result.passed and named == [target]
        if not detected:
            failures.append(f"{description}: expected failure naming {target}, got {named}")
        print(f"  {description}: {'detected, names ' + target if detected else 'NOT DETECTED'}")
    dmc = _write_fake_dmc(workdir)
    cli_args = ["--dmc", dmc, "--model", model_path, "--workdir", workdir]
    for fail_dmc, expected_status in ((False, 0), (True, 1)):
        os.environ.pop("FAKE_DMC_FAIL", None)
        if fail_dmc:
            os.environ["FAKE_DMC_FAIL"] = "1"
        print(f"  --- oracle.py CLI, {'failing' if fail_dmc else 'working'} fake dmc ---")
        status = oracle.main(cli_args)
        if status != expected_status:
            failures.append(f"CLI with {'failing' if fail_dmc else 'working'} dmc "
                            f"exited {status}, expected {expected_status}")
    os.environ.pop("FAKE_DMC_FAIL", None)
    return failures


def fake_dmc(argv):
    """Behaves as `dmc eval MODEL --train --seed 7 --out OUT` with a correct interpreter."""
    parser = argparse.ArgumentParser(prog="fake-dmc")
    parser.add_argument("command", choices=["eval"])
    parser.add_argument("model")
    parser.add_argument("--train", action="store_true", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--stage", default="autodiff")
    args = parser.parse_args(argv)
    if os.environ.get("FAKE_DMC_FAIL"):
        print("fake-dmc: error: failing on purpose", file=sys.stderr)
        return 3
    with open(args.model) as f:
        config = LayerConfig.from_json(json.load(f))
    tensors, metadata = fake_dmc_tensors(config, args.seed)
    write_safetensors(args.out, tensors, metadata)
    return 0


def main(argv):
    if argv[:1] == ["--fake-dmc"]:
        return fake_dmc(argv[1:])
    models = argv or sorted(glob.glob(os.path.join(HERE, "models", "*.json")))
    if not models:
        print("no models to test")
        return 1
    failed = []
    for model_path in models:
        print(f"== {os.path.basename(model_path)}")
        with tempfile.TemporaryDirectory(prefix="dmc-oracle-selftest-") as workdir:
            failures = check_model(model_path, workdir)
        for message in failures:
            print(f"  FAIL {message}")
        if failures:
            failed.append(model_path)
    print(f"selftest: {len(models) - len(failed)} of {len(models)} models passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
