"""The benchmark's JSON as a PNG bar chart (matplotlib, Agg backend).

Two panels, achieved TFLOP/s over the median wall time and over the GPU kernel time:
one group of bars per case, one bar per system (throughput is comparable across
cases, times are not). A system that did not run gets no bar but its status ("failed",
"skipped") written where the bar would be.

    python3 bench/chart.py OUT/bench.json OUT/bench.png
"""

import argparse
import sys

COLORS = {"dmc": "#1b7837", "dmc-tuned": "#5aae61", "dmc-graphs": "#7fbf7b",
          "dmc-plain": "#a6dba0", "eager": "#762a83", "compile": "#2166ac",
          "compile-cudagraphs": "#67a9cf"}


def render(results, path):
    """Writes the chart of `results` (a loaded bench.json) to `path`."""
    import matplotlib.pyplot as plt
    fig = figure(results)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def figure(results):
    """The matplotlib figure of `results`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [e["name"] for e in results["cases"]]
    systems = []
    for entry in results["cases"]:
        systems += [s for s in entry["systems"] if s not in systems]
    if not cases or not systems:
        raise ValueError("no case or system to draw")
    width = 0.8 / len(systems)
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 1.6 * len(cases) + 3), 8), sharex=True)
    for axis, key, label in ((axes[0], "tflops_wall", "TFLOP/s (median wall time)"),
                             (axes[1], "tflops_gpu", "TFLOP/s (GPU kernel time)")):
        top = max([r[key] for e in results["cases"] for r in e["systems"].values()
                   if r.get(key) is not None] + [1.0])
        for n, system in enumerate(systems):
            for c, entry in enumerate(results["cases"]):
                result = entry["systems"].get(system)
                x = c + (n - (len(systems) - 1) / 2) * width
                if result is None:
                    continue
                if result.get(key) is not None:
                    axis.bar(x, result[key], width, color=COLORS.get(system, "gray"))
                else:
                    status = result.get("status", "failed")
                    axis.text(x, 0.02 * top, "no figure" if status == "ok" else status,
                              rotation=90, ha="center", va="bottom", fontsize=7,
                              color="firebrick")
        axis.set_ylabel(label)
        axis.set_ylim(0, top * 1.15)
        axis.set_xlim(-0.5, len(cases) - 0.5)
        axis.grid(axis="y", alpha=0.3)
    from matplotlib.patches import Patch
    axes[0].legend(handles=[Patch(color=COLORS.get(s, "gray"), label=s) for s in systems],
                   loc="upper left", fontsize=8, ncol=len(systems))
    axes[1].set_xticks(range(len(cases)))
    axes[1].set_xticklabels(cases, rotation=20, ha="right", fontsize=8)
    env = results["environment"]
    fig.suptitle(f"One training step per layer (fwd + bwd), {env.get('device', '?')}, "
                 f"{results['date'][:10]}", fontsize=10)
    fig.tight_layout()
    return fig


def main(argv=None):
    import table
    parser = argparse.ArgumentParser(description="Draws a benchmark JSON as a PNG.")
    parser.add_argument("json")
    parser.add_argument("png")
    args = parser.parse_args(argv)
    try:
        render(table.load(args.json), args.png)
    except ImportError as e:
        print(f"chart: matplotlib is not available ({e})", file=sys.stderr)
        return 77
    except (OSError, ValueError, KeyError) as e:
        print(f"chart: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
