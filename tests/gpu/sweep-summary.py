#!/usr/bin/env python3
"""Per-kernel summary of a configuration sweep: dmrt-bench --json files of the
same model compiled with `dmc compile --config-index N` for several N.

  sweep-summary.py OUT.json ...   prints, per kernel: bytes, best/median/worst
  median time over the configurations, best GB/s and % of the copy bandwidth
  measured in the same runs, and the best configuration.
"""
import json
import statistics
import sys


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    copy = statistics.median(r["device"]["copy_gbs"] for r in runs)
    manifests = {}
    for p, r in zip(paths, runs):
        bundle = r["bundle"]
        manifests[p] = {k["id"]: k["config"] for k in
                        json.load(open(bundle + "/manifest.json"))["kernels"]}
    rows = {}
    for p, r in zip(paths, runs):
        for s in r["steps"]:
            if s.get("kind") != "kernel" or "median_us" not in s:
                continue
            rows.setdefault(s["id"], []).append((s["median_us"], s["bytes"], s["name"],
                                                 manifests[p][s["id"]]))
    print(f"device {runs[0]['device']['name']}; copy bandwidth {copy:.0f} GB/s (median over runs); "
          f"{len(runs)} configurations")
    print(f"{'id':>3} {'kernel':<28} {'MB':>8} {'best us':>9} {'median':>9} {'worst':>9} "
          f"{'GB/s':>7} {'%copy':>6}  best configuration")
    total_best = 0.0
    for kid in sorted(rows):
        times = sorted(rows[kid])
        best = times[0]
        med = statistics.median(t[0] for t in times)
        gbs = best[1] / best[0] / 1e3
        total_best += best[0]
        print(f"{kid:>3} {best[2]:<28} {best[1] / 1e6:8.1f} {best[0]:9.1f} {med:9.1f} "
              f"{times[-1][0]:9.1f} {gbs:7.0f} {100 * gbs / copy:5.1f}%  {best[3]}")
    print(f"sum of best kernel times: {total_best:.1f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
