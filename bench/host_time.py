#!/usr/bin/env python3
"""Host time per training step of dmc.torch.Layer, CUDA graphs on and off.

For each bundle in --bundles (default gpu-bundles/bench, from tests/gpu/make-bundles.sh):
--warmup steps, then --steps steps queued without synchronizing (parameter gradients and
input gradients set to None, y = layer(**inputs), y.backward(dy)), for graphs=True and
graphs=False, --rounds times in turn. Prints per bundle and mode the host time per step
(the Python loop's time while queuing), the queued step time (the same loop until the
GPU has finished too) and the graph captures + updates the runtime counted during the
timed steps (dmrt_internal_graph_counts). Runs on a GPU machine with python/dmc's
libdmrt.so (DMC_LIBDMRT or build-gpu/runtime/libdmrt.so).

  python3 bench/host_time.py [--bundles DIR] [--steps 100] [--warmup 10] [--rounds 2]

Exit status 0, or 2 without a CUDA device, without bundles, or on a usage error.
"""

import argparse
import ctypes
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundles", default=os.path.join(REPO, "gpu-bundles", "bench"))
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    if args.steps < 1 or args.warmup < 1 or args.rounds < 1:
        p.error("--steps, --warmup and --rounds must be >= 1")
    return args


def time_layer(dt, torch, counts, bundle, graphs, steps, warmup):
    """(host ms, queued step ms, captures + updates) of `steps` steps of one Layer."""
    layer = dt.Layer(bundle, graphs=graphs)
    inputs = {}
    for d in layer.input_descs:
        if d.dtype == "i32":  # key lengths: one key each (any valid length times the same)
            inputs[d.name] = torch.ones(d.shape, dtype=torch.int32, device=layer.device)
        else:
            inputs[d.name] = torch.randn(*d.shape, device=layer.device, dtype=layer.dtype,
                                         requires_grad=True)
    dy = torch.randn(layer.output_desc.shape, device=layer.device, dtype=layer.dtype)

    def step():
        for p in layer.parameters():
            p.grad = None
        for t in inputs.values():
            t.grad = None
        layer(**inputs).backward(dy)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    before = counts(layer)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    host = (time.perf_counter() - start) / steps * 1e3
    torch.cuda.synchronize()
    queued = (time.perf_counter() - start) / steps * 1e3
    return host, queued, counts(layer) - before


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    bundles = sorted(glob.glob(os.path.join(args.bundles, "*.dmlib")))
    if not bundles:
        print(f"host_time: no *.dmlib in {args.bundles} (run tests/gpu/make-bundles.sh)",
              file=sys.stderr)
        return 2
    import torch
    if not torch.cuda.is_available():
        print("host_time: no CUDA device visible to PyTorch: run this on a GPU machine",
              file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.join(REPO, "python"))
    import dmc.torch as dt
    from dmc import _dmrt
    lib = _dmrt.library()
    lib.dmrt_internal_graph_counts.argtypes = [ctypes.c_void_p] * 3

    def counts(layer):
        made, updated = ctypes.c_int32(), ctypes.c_int32()
        handle = layer._pool.acquire()  # the instance the steps ran on (one is free)
        lib.dmrt_internal_graph_counts(handle.ptr, ctypes.byref(made), ctypes.byref(updated))
        layer._pool.release(handle)
        return made.value + updated.value

    print(f"host_time: {torch.cuda.get_device_name()}, {args.steps} steps after "
          f"{args.warmup} warm-up, {args.rounds} round(s); ms per step")
    for bundle in bundles:
        runs = {True: [], False: []}
        for _ in range(args.rounds):
            for graphs in (True, False):
                runs[graphs].append(time_layer(dt, torch, counts, bundle, graphs, args.steps,
                                               args.warmup))

        def show(rs):
            return (f"host {', '.join(f'{r[0]:.3f}' for r in rs)}, queued step "
                    f"{', '.join(f'{r[1]:.3f}' for r in rs)}")

        name = os.path.basename(bundle)[:-len(".dmlib")]
        changed = sum(r[2] for r in runs[True])
        print(f"{name:34s} graphs: {show(runs[True])}, captures + updates {changed} | "
              f"plain: {show(runs[False])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
