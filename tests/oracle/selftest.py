#!/usr/bin/python3
"""Self-test of the oracle without dmc.

For each model JSON (default: every file in models/), builds a fake `dmc eval` output from
random weights and the oracle's own reference, then checks that:
  - layers.py agrees with torch.nn.Transformer{Encoder,Decoder}Layer (crosscheck.py), and
    the cross-check fails for each fault planted in the nn layer (permuted weight, wrong
    mask, wrong eps); models with dropout are not cross-checked;
  - the comparison passes on it after a safetensors write/read round trip;
  - it fails, naming exactly the tensor concerned, for each corruption: a gradient off by
    1e-3, a missing gradient, wrong dims metadata, NaN in y, y zeroed, a gradient scaled by
    1.001, y permuted along j, a key-bias gradient that is not zero;
  - it fails (naming y) on outputs computed with a wrong layernorm eps, and, with dropout,
    on outputs computed with each wrong dropout counter layout (philox.FAULTS);
  - the oracle CLI passes end to end against a fake dmc executable, and fails when dmc fails.

The fake dmc is this script run as `selftest.py --fake-dmc eval MODEL --train [--stage S]
--seed N [--inputs IN] --out OUT`; it exits with status 3 if FAKE_DMC_FAIL is set.
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
import philox
from layers import LayerConfig, reference
from safetensors_io import read_safetensors, write_safetensors
from testdata import random_inputs

HERE = os.path.dirname(os.path.abspath(__file__))
PERTURBED_GRAD = "attn.wq.grad"
DEFAULT_EPS = 1e-5


def fake_dmc_tensors(config, seed=oracle.SEED, model_path=None, lengths=None,
                     layout=philox.Layout()):
    """Tensors and metadata that a correct `dmc eval --train` would write, in fp32.

    `lengths` (name -> array) replaces the oracle's lengths, as `--inputs` would; `config`
    and `layout` may be wrong on purpose (the outputs then come from the wrong layer).
    """
    inputs, outputs = oracle.expected_tensors(config)
    tensors = random_inputs(config, {name: dims for name, (dims, _) in inputs.items()},
                            seed % (1 << 63), model_path)
    tensors.update(lengths or {})
    ref = reference(config, tensors, seed, layout)
    tensors.update({name: ref[name].astype(np.float32) for name in outputs})
    metadata = {f"dims.{name}": dims for name, (dims, _) in {**inputs, **outputs}.items()}
    metadata["seed"] = str(seed)
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


def _zero_output(tensors, metadata):
    tensors["y"] = np.zeros_like(tensors["y"])
    return "y"


def _scaled_grad(tensors, metadata):
    tensors["ffn.w1.grad"] = tensors["ffn.w1.grad"] * np.float32(1.001)
    return "ffn.w1.grad"


def _permuted_output(tensors, metadata):
    tensors["y"] = np.ascontiguousarray(tensors["y"][:, ::-1, :])
    return "y"


def _nonzero_key_bias(tensors, metadata):
    if "attn.bk.grad" not in tensors:  # bias: false
        return None
    tensors["attn.bk.grad"] = tensors["attn.bk.grad"].copy()
    tensors["attn.bk.grad"].flat[1] = 1e-3 * np.max(np.abs(tensors["attn.wq.grad"]))
    return "attn.bk.grad"


CORRUPTIONS = {
    "gradient off by 1e-3": _perturb,
    "missing gradient": _drop_grad,
    "parameter stored as hpi": _wrong_dims,
    "NaN in y": _nan_output,
    "y zeroed": _zero_output,
    "gradient scaled by 1.001": _scaled_grad,
    "y permuted along j": _permuted_output,
    "key-bias gradient not zero": _nonzero_key_bias,
}


def _compare_written(config, tensors, metadata, path, layout=philox.Layout()):
    """Writes tensors like dmc would, reads them back, and compares."""
    write_safetensors(path, tensors, metadata)
    return oracle.compare(config, read_safetensors(path), rtol=1e-4, layout=layout)


def _check_crosscheck(config, tensors):
    """The cross-check passes on clean tensors and fails for every planted fault."""
    failures = []
    if config.has_dropout:
        print("  layers.py vs torch.nn layer: skipped (dropout)")
        return failures
    difference = crosscheck.max_difference(config, tensors)
    if not difference <= crosscheck.RTOL:
        failures.append(f"layers.py differs from torch.nn by {difference:.3e} (relative)")
    print(f"  layers.py vs torch.nn layer: relative difference {difference:.1e}")
    for plant in crosscheck.PLANTS:
        difference = crosscheck.max_difference(config, tensors, plant)
        detected = difference > crosscheck.RTOL
        if not detected:
            failures.append(f"cross-check with planted {plant} passed ({difference:.3e})")
        print(f"  cross-check, planted {plant}: "
              f"{f'detected ({difference:.1e})' if detected else 'NOT DETECTED'}")
    return failures


def _check_wrong_semantics(config, model_path, tensors, metadata, path):
    """Outputs of a layer with a wrong eps (or wrong dropout masks) must fail, naming y."""
    failures = []
    lengths = {name: tensors[name] for name in ("lengths", "memory_lengths") if name in tensors}
    wrong_eps = DEFAULT_EPS if config.eps != DEFAULT_EPS else 1e-3
    cases = {f"outputs with eps {wrong_eps:g} instead of {config.eps:g}":
             (config.__class__(**{**config.__dict__, "eps": wrong_eps}), philox.Layout(),
              philox.Layout())}
    if config.has_dropout:
        for fault, layout in philox.FAULTS.items():
            cases[f"dropout reference with {fault}"] = (config, philox.Layout(), layout)
    for description, (fake_config, fake_layout, oracle_layout) in cases.items():
        bad, bad_metadata = fake_dmc_tensors(fake_config, model_path=model_path,
                                             lengths=lengths, layout=fake_layout)
        result = _compare_written(config, bad, bad_metadata, path, oracle_layout)
        detected = not result.passed and "y" in result.failing_tensors()
        if not detected:
            failures.append(f"{description}: not detected (failing: {result.failing_tensors()})")
        print(f"  {description}: {'detected, names y' if detected else 'NOT DETECTED'}")
    return failures


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
    path = os.path.join(workdir, "fake.safetensors")
    tensors, metadata = fake_dmc_tensors(config, model_path=model_path)
    failures = _check_crosscheck(config, tensors)
    result = _compare_written(config, tensors, metadata, path)
    expected_zeros = config.bias * (2 if config.kind == "decoder" else 1)  # the bk grads
    if not result.passed or len(result.zeros) != expected_zeros:
        failures.append(f"clean output did not pass with {expected_zeros} zero checks: "
                        f"{result.problems}, zeros {[row[0] for row in result.zeros]}")
    print(f"  clean output: {'PASS' if result.passed else 'FAIL'} "
          f"({result.compared} of {result.expected_outputs} tensors compared, "
          f"{len(result.zeros)} asserted zero)")
    for description, corrupt in CORRUPTIONS.items():
        bad_tensors, bad_metadata = dict(tensors), dict(metadata)
        target = corrupt(bad_tensors, bad_metadata)
        if target is None:
            print(f"  {description}: not applicable")
            continue
        result = _compare_written(config, bad_tensors, bad_metadata, path)
        named = result.failing_tensors()
        detected = not result.passed and named == [target]
        if not detected:
            failures.append(f"{description}: expected failure naming {target}, got {named}")
        print(f"  {description}: {'detected, names ' + target if detected else 'NOT DETECTED'}")
    failures += _check_wrong_semantics(config, model_path, tensors, metadata, path)
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
    """Behaves as `dmc eval MODEL --train --seed N [--inputs IN] --out OUT`, correctly."""
    parser = argparse.ArgumentParser(prog="fake-dmc")
    parser.add_argument("command", choices=["eval"])
    parser.add_argument("model")
    parser.add_argument("--train", action="store_true", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--stage", default="autodiff")
    parser.add_argument("--inputs")
    args = parser.parse_args(argv)
    if os.environ.get("FAKE_DMC_FAIL"):
        print("fake-dmc: error: failing on purpose", file=sys.stderr)
        return 3
    with open(args.model) as f:
        config = LayerConfig.from_json(json.load(f))
    given = read_safetensors(args.inputs).tensors if args.inputs else {}
    tensors, metadata = fake_dmc_tensors(config, args.seed, lengths=given)
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
