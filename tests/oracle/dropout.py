#!/usr/bin/python3
"""dmc's dropout masks against an independent Philox4x32-10 (philox.py, pure numpy).

Usage: dropout.py --dmc PATH_TO_DMC [--model MODEL.json] [--stage S] [--plant FAULT]

1. philox.py reproduces Random123's known-answer vectors.
2. `dmc eval --train` on a model with every dropout kind (default: models/decoder-dropout.json,
   six dropout ops: attention weights bhjk and bhjm, activation bju, hidden branches bji) at
   a seed whose two 32-bit halves are both nonzero. The reference recomputes every mask from
   the counter layout documented in examples/README.md and must match y and every gradient.
   Each op's keep rate is reported (so an all-kept mask cannot pass silently).
3. Each wrong counter layout in philox.FAULTS (key words swapped, op id off by one, wrong
   tag word, one element per Philox call, the 16-bit halves swapped) must make that
   comparison fail.

With --plant FAULT the reference uses that wrong layout in place of the documented one, so
the run must fail (exit 1): ctest runs it so (WILL_FAIL) to show that the check can fail.
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

import oracle
import philox
from layers import LayerConfig
from safetensors_io import read_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))


def _op_shapes(config):
    """(op id, order dims, p) of every dropout op, numbered as documented."""
    attention, hidden, activation = config.dropout
    blocks = [("bhjk", attention)]
    if config.kind == "decoder":
        blocks.append(("bhjm", attention))
    blocks.append(("bju", activation))
    ops = []
    for inner, p_inner in blocks:
        for dims, p in ((inner, p_inner), ("bji", hidden)):
            if p > 0.0:
                ops.append((len(ops), dims, p))
    return ops


def _report_keep_rates(config, seed):
    """Prints each op's keep rate; returns problems if a mask keeps (nearly) everything."""
    problems = []
    for op_id, dims, p in _op_shapes(config):
        keep = philox.dropout_keep(seed, op_id, p, config.shape(dims))
        rate = float(keep.mean())
        print(f"  dropout op {op_id} over {dims} ({keep.size} elements), p {p}: "
              f"keeps {rate:.3f}")
        if not 0 < rate < 1:
            problems.append(f"dropout op {op_id} keeps {rate:.3f}: the mask tests nothing")
    return problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dmc", required=True)
    parser.add_argument("--model", default=os.path.join(HERE, "models", "decoder-dropout.json"))
    parser.add_argument("--stage", default="autodiff")
    parser.add_argument("--plant", choices=sorted(philox.FAULTS),
                        help="compare against this wrong counter layout only")
    args = parser.parse_args(argv)

    failures = philox.check_known_answers()
    print(f"philox.py known-answer vectors: {'ok' if not failures else 'FAIL'}")
    with open(args.model) as f:
        config = LayerConfig.from_json(json.load(f))
    if not config.has_dropout:
        failures.append(f"{args.model} has no dropout")
    failures += _report_keep_rates(config, oracle.SEED)

    with tempfile.TemporaryDirectory(prefix="dmc-dropout-") as workdir:
        out_path = os.path.join(workdir, "out.safetensors")
        inputs_path = oracle.write_lengths(config, args.model,
                                           os.path.join(workdir, "lengths.safetensors"))
        problem = oracle.run_dmc(args.dmc, args.model, out_path, args.stage, inputs_path)
        if problem:
            print(f"FAIL {problem}")
            return 1
        data = read_safetensors(out_path)
    if data.metadata.get("seed") != str(oracle.SEED):
        failures.append(f"dmc reports seed {data.metadata.get('seed')!r}, ran {oracle.SEED}")

    layouts = {args.plant: philox.FAULTS[args.plant]} if args.plant else \
        {"documented layout": philox.Layout(), **philox.FAULTS}
    for name, layout in layouts.items():
        result = oracle.compare(config, data, 1e-4, layout)
        # With --plant, the planted layout stands in for the documented one: it must fail.
        expect_pass = args.plant is not None or layout == philox.Layout()
        if result.passed:
            worst = max(row[2] / row[3] for row in result.rows)
            print(f"{name}: all {result.compared} tensors match (worst relative error "
                  f"{worst:.1e}), {len(result.zeros)} asserted zero")
        else:
            print(f"{name}: mismatch in {len(result.failing_tensors())} tensors, e.g.")
            for tensor, message in result.problems[:3]:
                print(f"    {tensor}: {message}")
        if result.passed != expect_pass:
            failures.append(f"{name}: the comparison {'passed' if result.passed else 'failed'}"
                            f", expected it to {'pass' if expect_pass else 'fail'}")
    for message in failures:
        print(f"FAIL {message}")
    print("dropout masks:", "FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
