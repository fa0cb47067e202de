#!/usr/bin/env python3
"""Violin plots of a tuning database's measurements, one violin per kernel or contraction.

Usage: violins.py -o OUT.svg IN.json, IN.json as `dmc compile --db-report`
writes it: {"title": "...", "kernels": [{"name": "k3_softmax", "times_us":
[...], "default_us": 12.3 or null, "chosen_us": 11.0}]}. Each violin is the
distribution of the kernel's measured median times over its configurations
(the paper's Fig. 5), relative to its fastest so that kernels of different
sizes share one axis; the default configuration is marked with a circle, the
chosen one with a diamond. Exit status 3 without matplotlib (the caller
says so in the page), 2 on bad input.
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", dest="out", required=True)
    p.add_argument("input")
    a = p.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("violins.py: matplotlib is missing (Debian: apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 3
    with open(a.input) as f:
        data = json.load(f)
    kernels = [k for k in data.get("kernels", []) if len(k.get("times_us", [])) > 0]
    if not kernels:
        print("violins.py: no kernel has measurements", file=sys.stderr)
        return 2
    rel = [[t / min(k["times_us"]) for t in k["times_us"]] for k in kernels]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(kernels) + 2), 4.2))
    positions = list(range(1, len(kernels) + 1))
    single = [i for i, r in enumerate(rel) if len(r) < 2]
    multi = [i for i, r in enumerate(rel) if len(r) >= 2]
    if multi:
        ax.violinplot([rel[i] for i in multi], positions=[positions[i] for i in multi],
                      showextrema=True, showmedians=True, widths=0.8)
    for i in single:  # one measurement: a point, no distribution to draw
        ax.plot(positions[i], rel[i][0], "_", color="C0", markersize=14)
    fastest = [min(k["times_us"]) for k in kernels]
    labelled = set()
    for i, k in enumerate(kernels):
        for key, marker, color, size in (("default_us", "o", "C3", 6), ("chosen_us", "D", "C2", 5)):
            if k.get(key) is None:
                continue
            name = key[:-3]
            ax.plot(positions[i], k[key] / fastest[i], marker, color=color, markersize=size,
                    label=None if name in labelled else name)
            labelled.add(name)
    ax.set_xticks(positions)
    ax.set_xticklabels([k["name"] for k in kernels], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("median time / fastest configuration")
    ax.set_title(data.get("title", ""), fontsize=9)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    if a.out.endswith(".png"):
        fig.savefig(a.out, format="png")
    else:  # no RDF metadata block: the page names no URL
        fig.savefig(a.out, format="svg",
                    metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
