"""Where a bundle's training step spends its time, kernel by kernel, inside the step.

`dmc compile --db` predicts a step as the sum of its steps' medians, each measured
alone by dmrt-tune (config.json's `prediction`, with each step's part in
`prediction.steps`); `dmc-run --bench` then measures the whole step. This script tells
the two apart: it runs the bundle through dmc.torch.Layer (the runtime's CUDA graphs
by default), records `--profile-steps` steps with torch.profiler (Kineto: kernels
launched from CUDA graphs appear one by one, with their own durations) and prints each
kernel's device time per step beside its predicted time. dmc's kernels are named after
their step (k<N>_...); every other kernel is a library kernel (cuBLASLt), and their
total stands beside the contractions' predicted sum.

    python3 bench/step_profile.py BUNDLE --case bench/cases/NAME.json \
        [--no-graphs] [--steps N] [--profile-steps N] [--json OUT] [--trace OUT]

Run on a GPU machine with the runtime built (bench/run-device.sh builds it).
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

_DMC_KERNEL = re.compile(r"^(k\d+)_")


def predicted_times(config):
    """({"k3": us, ...}, {"c2": us, ...}) from a parsed config.json: `prediction.steps`,
    kernels by their step ("k3" of "k3_gelu_dropout"), contractions by name; two empty
    dicts when the bundle has no per-step prediction (compiled without --db, or before
    config.json had one)."""
    steps = (config.get("prediction") or {}).get("steps") or {}
    kernels, contractions = {}, {}
    for name, us in steps.items():
        m = _DMC_KERNEL.match(name)
        if m:
            kernels[m.group(1)] = float(us)
        else:
            contractions[name] = float(us)
    return kernels, contractions


def split(summary):
    """(rows, library_ms): each dmc step's kernels as [step, name, ms, launches] in step
    order (a step's launches summed: a kernel with column sums also runs its finishing
    launch, "<entry>_finish"; the name is the step's entry) and the summed per-step
    time of every other kernel, from kernel_trace.summarize."""
    steps, library = {}, 0.0
    for name, ms, launches in summary["top"]:
        m = _DMC_KERNEL.match(name)
        if not m:
            library += ms
            continue
        row = steps.setdefault(m.group(1), [m.group(1), name, 0.0, 0.0])
        if len(name) < len(row[1]):
            row[1] = name
        row[2] += ms
        row[3] += launches
    rows = sorted(steps.values(), key=lambda r: int(r[0][1:]))
    return rows, library


def report(summary, kernels=None, contractions=None):
    """The printed table: each dmc kernel (with its prediction when known), the library
    kernels' total, and the step's kernel and busy time, per step."""
    rows, library = split(summary)
    out = [f"{'step':<5} {'kernel':<44} {'in step us':>10} {'predicted':>10} {'ratio':>6}"]
    dmc_total = pred_total = 0.0
    for step, name, ms, launches in rows:
        us = 1000.0 * ms
        dmc_total += us
        p = (kernels or {}).get(step)
        extra = "" if launches == 1 else f"  ({launches:g} launches)"
        if p:
            pred_total += p
            out.append(f"{step:<5} {name[:44]:<44} {us:10.2f} {p:10.2f} {us / p:6.3f}{extra}")
        else:
            out.append(f"{step:<5} {name[:44]:<44} {us:10.2f} {'-':>10} {'':>6}{extra}")
    lib_us = 1000.0 * library
    c_pred = sum((contractions or {}).values())
    out.append(f"{'':<5} {'dmc kernels':<44} {dmc_total:10.2f} "
               + (f"{pred_total:10.2f} {dmc_total / pred_total:6.3f}" if pred_total else ""))
    out.append(f"{'':<5} {'library kernels (cuBLASLt)':<44} {lib_us:10.2f} "
               + (f"{c_pred:10.2f} {lib_us / c_pred:6.3f}" if c_pred else ""))
    out.append(f"kernel time {1000.0 * summary['kernel_ms']:.1f} us per step, device busy "
               f"{1000.0 * summary['busy_ms']:.1f} us, {summary['kernels']:g} kernels")
    gaps = summary.get("gaps")
    if gaps:
        out.append(f"device idle inside the step: {gaps['idle_us']:.1f} us; the most before:")
        for name, us, times in gaps["before"][:8]:
            out.append(f"  {us:7.2f} us  {name[:70]}" + ("" if times == 1 else f" ({times:g}x)"))
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("bundle")
    p.add_argument("--case", required=True, help="bench/cases/NAME.json the bundle was made from")
    p.add_argument("--no-graphs", action="store_true", help="plain launches, not CUDA graphs")
    p.add_argument("--steps", type=int, default=20, help="warm-up steps before profiling")
    p.add_argument("--profile-steps", type=int, default=20)
    p.add_argument("--json", help="also write the per-step summary here")
    p.add_argument("--trace", help="also keep the profiler's Chrome trace here")
    args = p.parse_args(argv)
    if args.steps < 1 or args.profile_steps < 1:
        p.error("--steps and --profile-steps must be >= 1")
    with open(os.path.join(args.bundle, "config.json")) as f:
        kernels, contractions = predicted_times(json.load(f))
    import measure
    import model
    import systems
    case = model.load_case(args.case)
    model.check_bundle(case, args.bundle)
    dmc_torch, why = systems._import_dmc_torch()
    if dmc_torch is None:
        sys.exit(f"step_profile: python/dmc unavailable: {why}")
    layer = dmc_torch.Layer(args.bundle, graphs=not args.no_graphs)
    x, memory, dy = systems._inputs(case)
    step = systems._step(layer, layer, x, memory, dy)
    for _ in range(args.steps):
        step()
    summary = measure.profile_kernels(step, args.profile_steps, top=1000, gaps=True,
                                       trace_out=args.trace)
    import torch
    print(f"step_profile: {os.path.basename(args.bundle.rstrip('/'))} on "
          f"{torch.cuda.get_device_name()}, {'plain launches' if args.no_graphs else 'CUDA graphs'}, "
          f"{args.profile_steps} profiled steps")
    print(report(summary, kernels, contractions))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
