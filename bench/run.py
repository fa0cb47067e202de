#!/usr/bin/env python3
"""dmc against PyTorch: one training step per case on one GPU, in one process.

For every case of bench/cases/ (a model description; its bundle compiled by
tests/gpu/make-bundles.sh into gpu-bundles/bench/NAME.dmlib), four systems: dmc (the
bundle through dmc.torch.Layer), PyTorch eager with SDPA attention, torch.compile and
torch.compile with CUDA graphs (mode="reduce-overhead"). For each: median wall time,
GPU kernel time (torch.profiler), peak memory, TFLOP/s and the ratios to dmc.

    python3 bench/run.py [--cases A,B] [--steps 50] [--warmup 10] [--out DIR] [--quick]

Writes DIR/bench.json (everything) and DIR/bench.md (the table), both again after every
system, and DIR/bench.png (the chart) at the end; progress lines go to stderr. A system that
fails on a case is recorded as "failed: <reason>" and the run goes on.
Exit status: 0 every system ran on every case; 1 some failed or were skipped (the
outputs are written all the same); 2 usage error, unknown case, no CUDA device.
"""

import argparse
import datetime
import json
import os
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import model  # noqa: E402
import results as results_mod  # noqa: E402
import table  # noqa: E402

REPO = os.path.dirname(HERE)
FLOP_CONVENTION = ("forward 2*M*N*K per GEMM, attention's two included (causal attention "
                   "counted in full), backward twice the forward")
QUICK_CASES = ["bert-base-b32-l128"]
# The default order: the anchor case first (DEVICE.md's reference figures), so that a
# run cut short by the time budget still has it.
CASE_ORDER = ["bert-large-b8-l512", "bert-large-b96-l128", "bert-base-b32-l128",
              "gpt2-medium-b8-l1024", "vit-base-b64-l197", "transformer-big-decoder-b32-l128"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", help="comma-separated case names (default: every case; "
                   f"--quick: {','.join(QUICK_CASES)})")
    p.add_argument("--systems", default=None,
                   help="comma-separated systems (default: dmc, eager, compile, "
                        "compile-cudagraphs, and dmc-tuned where make-bundles.sh compiled "
                        "the cases with a tuning database for this GPU)")
    p.add_argument("--steps", type=int, help="timed steps per system (default 50; --quick 10)")
    p.add_argument("--warmup", type=int, help="warm-up steps (default 10; --quick 3)")
    p.add_argument("--profile-steps", type=int,
                   help="steps under torch.profiler (default 10; --quick 3)")
    p.add_argument("--out", default="bench-out", help="output folder (default bench-out)")
    p.add_argument("--bundles", default=os.path.join(REPO, "gpu-bundles", "bench"),
                   help="folder of the cases' bundles (default gpu-bundles/bench)")
    p.add_argument("--budget-s", type=float, default=420.0,
                   help="no system starts after this many seconds (default 420)")
    p.add_argument("--dmc-run", help="dmc-run for the fallback (default: build-gpu's)")
    p.add_argument("--reference", choices=("auto", "dmc", "bench"), default="auto",
                   help="the baselines' PyTorch layer: dmc.torch.reference_layer (dmc), "
                        "bench/reference.py (bench), or the first where it exists (auto)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: one small case, 10 steps, 3 warm-up, 3 profiled")
    args = p.parse_args(argv)
    quick = args.quick
    args.steps = args.steps if args.steps is not None else (10 if quick else 50)
    args.warmup = args.warmup if args.warmup is not None else (3 if quick else 10)
    if args.profile_steps is None:
        args.profile_steps = 3 if quick else 10
    if args.steps < 1 or args.profile_steps < 1:
        p.error("--steps and --profile-steps must be >= 1")
    if args.warmup < 3:
        p.error("--warmup must be >= 3 (torch.compile records its CUDA graphs on the third call)")
    return args


def log(line, _start=time.monotonic()):
    print(f"[bench {time.monotonic() - _start:6.1f}s] {line}", file=sys.stderr, flush=True)


def write_json(path, document):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def benchmark(args, argv, cases, runners, device, environment, tuned=None):
    """Runs `runners` over `cases` and writes bench.json, bench.md and bench.png.

    `environment()` is called after the runs (library versions are known only once
    every system has loaded its libraries); `tuned` is the folder of this GPU's tuned
    bundles (results.tuned_bundles) or None. Returns the exit status.
    """
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "bench.json")
    settings = results_mod.Settings(steps=args.steps, warmup=args.warmup,
                                    profile_steps=args.profile_steps, bundles=args.bundles,
                                    budget_s=args.budget_s, dmc_run=args.dmc_run,
                                    reference=args.reference,
                                    tuned=tuned)
    document = {
        "schema": results_mod.SCHEMA,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python3", "bench/run.py"] + [shlex.quote(a) for a in argv]),
        "settings": {"steps": args.steps, "warmup": args.warmup,
                     "profile_steps": args.profile_steps, "budget_s": args.budget_s,
                     "reference": args.reference,
                     "bundles": os.path.relpath(args.bundles, REPO), "quick": args.quick},
        "flop convention": FLOP_CONVENTION,
        "environment": {"device": device},
        "cases": [],
    }
    log(f"{len(cases)} case(s) x {len(runners)} system(s) on {device}; {args.steps} steps, "
        f"{args.warmup} warm-up; writing {args.out}/")

    def update(entries):  # after every system: a run cut short keeps its JSON and table
        document["cases"] = entries
        write_json(json_path, document)
        with open(os.path.join(args.out, "bench.md"), "w") as f:
            f.write(table.document(document))

    entries = results_mod.run_cases(cases, runners, settings, log, on_update=update)
    document["environment"] = environment()
    update(entries)
    charted = True
    try:
        import chart
        chart.render(document, os.path.join(args.out, "bench.png"))
    except Exception as e:  # the JSON and the table stand without the chart
        log(f"no chart: {results_mod.failure_reason(e)}")
        charted = False
    log(f"wrote {json_path}, bench.md" + (", bench.png" if charted else " (no bench.png)"))
    sys.stdout.write(table.table(document) + "\n")
    return 0 if results_mod.all_ok(entries) and charted else 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    default_systems = args.systems is None
    systems = [s.strip() for s in (args.systems or "dmc,eager,compile,compile-cudagraphs")
               .split(",") if s.strip()]
    names = args.cases.split(",") if args.cases else (QUICK_CASES if args.quick else None)
    try:
        cases = model.load_cases(os.path.join(HERE, "cases"), names)
        if names is None:  # every case, in CASE_ORDER, then any other
            cases.sort(key=lambda c: CASE_ORDER.index(c.name) if c.name in CASE_ORDER
                       else len(CASE_ORDER))
    except ValueError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    import torch
    import systems as systems_mod
    unknown = [s for s in systems if s not in systems_mod.RUNNERS]
    if unknown or not systems:
        print(f"bench: unknown system(s) {unknown}; known: {', '.join(systems_mod.RUNNERS)}",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench: no CUDA device visible to PyTorch: run this on a GPU machine",
              file=sys.stderr)
        return 2
    import env
    import measure
    try:
        check = measure.profiler_check()
        check = f"ok: {check['kernels']:g} kernel(s) recorded for one CUDA op"
    except Exception as e:  # the run goes on: each system reports its own GPU time
        check = f"FAILED, GPU times will be missing: {results_mod.failure_reason(e)}"
    log(f"profiler check {check}")
    device = torch.cuda.get_device_name(0)
    tuned = results_mod.tuned_bundles(args.bundles, device)  # found once, used by dmc-tuned
    if default_systems and tuned:
        systems.insert(1, "dmc-tuned")
    return benchmark(args, argv, cases, {s: systems_mod.RUNNERS[s] for s in systems},
                     device,
                     lambda: dict(env.environment(REPO, args.bundles), **{"profiler check": check}),
                     tuned)


if __name__ == "__main__":
    sys.exit(main())
