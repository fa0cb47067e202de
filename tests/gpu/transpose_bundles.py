#!/usr/bin/env python3
"""Bundles with an inserted transpose kernel, tiled and as the strided loop.

  transpose_bundles.py DMC MODEL.json OUT_DIR [dmc compile args...]

Writes OUT_DIR/NAME-tile-v<VEC>y<TY>.dmlib (one per tile: vectors of 2 and 1, 8,
16 and 4 rows of threads) and OUT_DIR/NAME-strided.dmlib: MODEL's default
configuration, except that the first contraction whose operand a has its
contracted dim innermost reads it with that dim outermost (bji -> ibj) through
an inserted `dm.kernel "transpose"` (config.json `transposes`). The tile
bundles give the transpose each tile's knobs (through shared memory,
codegen/TileEmitter.cpp; its default is the first); the strided one gives it
the loop over the output with one thread per point. Extra arguments (e.g. --reference) go to both
compiles. The GPU run (run-device.sh) checks both against their references
and times the two transposes side by side.
"""
import json
import os
import subprocess
import sys
import tempfile


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"transpose_bundles: {' '.join(cmd)} failed:\n{r.stderr}")
    return r.stdout


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    dmc, model, out = sys.argv[1:4]
    extra = sys.argv[4:]
    name = os.path.splitext(os.path.basename(model))[0]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain.dmlib")
        run([dmc, "compile", model, "-o", plain])
        manifest = json.load(open(os.path.join(plain, "manifest.json")))
        tensors = manifest["tensors"]
        config = json.loads(run([dmc, "compile", model, "--print-config"]))
        chosen = None
        for n, c in enumerate(manifest["contractions"]):
            a = tensors[c["a"]]
            operands, result = c["equation"].split("->")
            da, db = operands.split(",")
            k = a["dims"][-1]
            if len(a["dims"]) == 3 and k in db and k not in result:
                chosen = (f"c{n}", a["name"], k + a["dims"][:-1])
                break
        if chosen is None:
            sys.exit(f"transpose_bundles: {model}: no contraction reads a 3-dim operand a "
                     "along its contracted dim")
        contraction, tensor, dims = chosen
        config["transposes"] = [dict(contraction=contraction, operand="a", tensor=tensor,
                                     dims=dims, bytes=0)]
        config["contractions"] = [c for c in config["contractions"] if c["name"] != contraction]
        config["kernels"] = []
        tiled_cfg = os.path.join(tmp, "default.json")
        json.dump(config, open(tiled_cfg, "w"))
        # The printed configuration names the inserted kernel and its knobs.
        config = json.loads(run([dmc, "compile", model, "--config", tiled_cfg, "--print-config"]))
        kernel = next(k for k in config["kernels"] if k["name"].endswith("_transpose"))
        if not kernel["lane_dim"]:
            sys.exit(f"transpose_bundles: {kernel['name']} is not tiled by default: {kernel}")
        lane = kernel["lane_dim"]
        variants = [(f"tile-v{vec}y{ty}", dict(lane_dim=lane, tx=32, ty=ty, per_thread=1,
                                                vec=vec, split=1))
                    for vec in (2, 1) for ty in (8, 16, 4)]
        variants.append(("strided", dict(lane_dim="", tx=256, ty=1, per_thread=1, vec=1,
                                         split=1)))
        for label, knobs in variants:
            kernel.update(knobs)
            cfg = os.path.join(tmp, label + ".json")
            json.dump(config, open(cfg, "w"))
            dest = os.path.join(out, f"{name}-{label}.dmlib")
            run([dmc, "compile", model, "--config", cfg, "-o", dest] + extra)
            print(f"transpose_bundles: {dest}: {tensor} read by {contraction} as {dims} "
                  f"through {kernel['name']} ({label})")


if __name__ == "__main__":
    main()
