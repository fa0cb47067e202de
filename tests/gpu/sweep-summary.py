#!/usr/bin/env python3
"""Per-kernel summaries of dmrt-bench --json files.

  sweep-summary.py OUT.json ...   a configuration sweep: the same model compiled
  with `dmc compile --config-index N` for several N. Prints, per kernel: bytes,
  best/median/worst median time over the configurations, best GB/s and % of the
  copy bandwidth measured in the same runs, the best configuration's % of a copy
  moving its bytes timed the same way (%size-copy, the step's
  pct_same_size_copy; "-" in files without it), and the best configuration.

  sweep-summary.py --compare A.json B.json   the same bundle timed two ways
  (e.g. --timing stream and --timing isolated --flush-l2): one line per kernel
  with both median times, their ratio and both GB/s.

Files written before dmrt-bench had --timing hold isolated timings.
"""
import json
import statistics
import sys


def timing(run):
    """The run's timing mode and its buffer-set counts per step."""
    mode = run.get("options", {}).get("timing", "isolated")
    sets = [s.get("buffer_sets", 1) for s in run["steps"] if "median_us" in s]
    return mode, sets


def describe_timing(runs):
    modes = sorted({timing(r)[0] for r in runs})
    sets = [n for r in runs for n in timing(r)[1]]
    text = "timing " + "/".join(modes)
    if len(modes) > 1:
        text += " (MIXED: times are not comparable)"
    if "stream" in modes and sets:
        text += f", {min(sets)}-{max(sets)} buffer sets"
    if any(r.get("options", {}).get("flush_l2") for r in runs):
        text += ", L2 flushed"
    return text


def size_copy_cell(step, width=10):
    """The step's pct_same_size_copy right-aligned, "-" when absent or 0."""
    pct = step.get("pct_same_size_copy") or 0
    return f"{pct:{width - 1}.1f}%" if pct > 0 else f"{'-':>{width}}"


def kernel_steps(run):
    return {s["id"]: s for s in run["steps"]
            if s.get("kind") == "kernel" and "median_us" in s}


def sweep(paths):
    runs = [json.load(open(p)) for p in paths]
    copy = statistics.median(r["device"]["copy_gbs"] for r in runs)
    manifests = {}
    for p, r in zip(paths, runs):
        bundle = r["bundle"]
        manifests[p] = {k["id"]: k["config"] for k in
                        json.load(open(bundle + "/manifest.json"))["kernels"]}
    rows = {}
    for p, r in zip(paths, runs):
        for kid, s in kernel_steps(r).items():
            rows.setdefault(kid, []).append((s["median_us"], s["bytes"], s["name"],
                                             manifests[p][kid], s))
    print(f"device {runs[0]['device']['name']}; copy bandwidth {copy:.0f} GB/s (median over runs); "
          f"{len(runs)} configurations; {describe_timing(runs)}")
    print(f"{'id':>3} {'kernel':<28} {'MB':>8} {'best us':>9} {'median':>9} {'worst':>9} "
          f"{'GB/s':>7} {'%copy':>6} {'%size-copy':>10}  best configuration")
    total_best = 0.0
    for kid in sorted(rows):
        times = sorted(rows[kid], key=lambda t: t[:4])
        best = times[0]
        med = statistics.median(t[0] for t in times)
        gbs = best[1] / best[0] / 1e3
        total_best += best[0]
        print(f"{kid:>3} {best[2]:<28} {best[1] / 1e6:8.1f} {best[0]:9.1f} {med:9.1f} "
              f"{times[-1][0]:9.1f} {gbs:7.0f} {100 * gbs / copy:5.1f}% "
              f"{size_copy_cell(best[4])}  {best[3]}")
    print(f"sum of best kernel times: {total_best:.1f} us")


def compare(path_a, path_b):
    a, b = json.load(open(path_a)), json.load(open(path_b))
    ka, kb = kernel_steps(a), kernel_steps(b)
    ta, tb = describe_timing([a]), describe_timing([b])
    print(f"A = {path_a} ({ta}); B = {path_b} ({tb})")
    print(f"{'id':>3} {'kernel':<28} {'MB':>8} {'A us':>9} {'B us':>9} {'B/A':>6} "
          f"{'A GB/s':>7} {'B GB/s':>7}")
    sum_a = sum_b = 0.0
    for kid in sorted(set(ka) & set(kb)):
        sa, sb = ka[kid], kb[kid]
        sum_a += sa["median_us"]
        sum_b += sb["median_us"]
        ratio = sb["median_us"] / sa["median_us"] if sa["median_us"] > 0 else float("nan")
        print(f"{kid:>3} {sa['name']:<28} {sa['bytes'] / 1e6:8.1f} {sa['median_us']:9.1f} "
              f"{sb['median_us']:9.1f} {ratio:6.2f} {sa['gbs']:7.0f} {sb['gbs']:7.0f}")
    only = sorted(set(ka) ^ set(kb))
    if only:
        print(f"kernels timed in only one file: {only}")
    print(f"sum of median kernel times: A {sum_a:.1f} us, B {sum_b:.1f} us")


def main(argv):
    if argv[:1] == ["--compare"]:
        if len(argv) != 3:
            sys.exit("usage: sweep-summary.py --compare A.json B.json")
        compare(argv[1], argv[2])
    elif not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    else:
        sweep(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
