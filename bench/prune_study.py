#!/usr/bin/env python3
"""What pruning the cuBLASLt algorithm sweeps with the cost model costs.

Reads dmrt-bench runs made with `--contraction all --algorithms all` and no
--prune-algorithms (exhaustive: every enumerated algorithm timed and checked)
and replays `--prune-algorithms N` on them: per contraction the kept entries
are entry 0 (the heuristic's best, the step's default) and the N - 1 others
with the lowest `prior_model_us` (the model as dmrt-bench prices them before
timing, its GEMM rate the step's own: what pruning ranks by), and the pruned
selection is the fastest passing kept entry. Prints, per N, the sum over the
contractions of the pruned selection against the exhaustive optimum (the
fastest passing entry of the whole sweep), the worst contraction, and the
algorithms measured.

    python3 bench/prune_study.py RUN.json [RUN.json ...] [--n 1,2,4,8,12,16]
"""
import argparse
import json
import math
import sys


def sweeps(path):
    """(name, runs) of every contraction of a run with an exhaustive sweep."""
    with open(path) as f:
        run = json.load(f)
    if run.get("options", {}).get("prune_algorithms", 0):
        sys.exit(f"{path}: made with --prune-algorithms: the study needs exhaustive sweeps")
    out = []
    for s in run.get("steps", []):
        runs = s.get("algorithm_runs")
        if s.get("kind") != "contraction" or not runs:
            continue
        if any("prior_model_us" not in r for r in runs):
            sys.exit(f"{path}: {s.get('name')}: no prior_model_us (an older dmrt-bench)")
        out.append((f"{path}: c{s['id']} {s.get('name', '')}", runs))
    return out


def fastest(runs, indices):
    times = [runs[i]["median_us"] for i in indices
             if runs[i].get("pass") and runs[i].get("median_us", 0) > 0]
    return min(times) if times else math.inf


def kept(runs, n):
    """Entry 0 and the n - 1 others the prior model prices lowest (unpriced last)."""
    if n <= 0 or n >= len(runs):
        return list(range(len(runs)))
    key = lambda i: runs[i]["prior_model_us"] if runs[i]["prior_model_us"] >= 0 else math.inf
    rest = sorted(range(1, len(runs)), key=lambda i: (key(i), i))
    return sorted([0] + rest[: n - 1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--n", default="1,2,4,8,12,16")
    a = p.parse_args()
    ns = [int(x) for x in a.n.split(",")]
    all_sweeps = [s for path in a.runs for s in sweeps(path)]
    if not all_sweeps:
        sys.exit("no contraction with an exhaustive algorithm sweep in " + ", ".join(a.runs))
    optimum = [fastest(runs, range(len(runs))) for _, runs in all_sweeps]
    if any(math.isinf(o) for o in optimum):
        sys.exit("a contraction has no passing algorithm")
    total = sum(optimum)
    considered = sum(len(r) for _, r in all_sweeps)
    print(f"{len(all_sweeps)} contraction sweeps, {considered} algorithms timed exhaustively; "
          f"exhaustive optimum {total:.1f} us in all")
    print(f"{'N':>4} {'measured':>9} {'pruned us':>10} {'loss us':>8} {'loss %':>7} "
          f"{'worst contraction %':>20} {'optimum kept':>13}")
    for n in ns:
        picked, worst, found, measured = 0.0, 0.0, 0, 0
        for (name, runs), opt in zip(all_sweeps, optimum):
            idx = kept(runs, n)
            measured += len(idx)
            t = fastest(runs, idx)
            picked += t
            worst = max(worst, 100 * (t / opt - 1))
            found += t == opt
        print(f"{n:>4} {measured:>9} {picked:>10.1f} {picked - total:>8.1f} "
              f"{100 * (picked / total - 1):>7.2f} {worst:>20.2f} "
              f"{found:>6}/{len(all_sweeps)}")


if __name__ == "__main__":
    main()
