"""The benchmark's JSON (run.py's bench.json) as Markdown.

    python3 bench/table.py OUT/bench.json            # prints bench.md's text

A system that did not run shows "failed: <reason>" or "skipped: <reason>" in place of
its figures. Ratios are the system's figure over dmc's: above 1, dmc is faster (or
uses less memory).
"""

import argparse
import json
import sys

COLUMNS = ("case", "system", "wall ms", "GPU ms", "peak MiB", "TFLOP/s wall",
           "TFLOP/s GPU", "wall / dmc", "GPU / dmc", "memory / dmc")


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _number(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(result, key):
    ratios = result.get("vs_dmc") or {}
    return f"{ratios[key]:.2f}x" if key in ratios else "-"


def row(case, system, result):
    """The table cells of one system's result on one case."""
    if result.get("status") != "ok":
        reason = f"{result.get('status', 'failed')}: {result.get('reason', 'no reason recorded')}"
        return [case, system, reason] + [""] * (len(COLUMNS) - 3)
    mark = "" if result.get("source", "").startswith("in-process") else " *"
    return [case, system + mark, _number(result["wall_ms"]["median"], 3),
            _number(result.get("gpu_ms"), 3), _number(result.get("peak_mib"), 0),
            _number(result["tflops_wall"], 0), _number(result.get("tflops_gpu"), 0),
            _ratio(result, "wall"), _ratio(result, "gpu"), _ratio(result, "memory")]


def table(results):
    """The results table: one row per (case, system), in run order."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for entry in results["cases"]:
        for system, result in entry["systems"].items():
            lines.append("| " + " | ".join(_cell(c) for c in row(entry["name"], system, result))
                         + " |")
    return "\n".join(lines)


def notes(results):
    """What the columns mean, and anything a row needs said about it."""
    s = results["settings"]
    out = [f"One training step (forward + backward) of one layer; median host wall time "
           f"of {s['steps']} steps after {s['warmup']} warm-up steps (each step between "
           f"two synchronizations); GPU ms: the time the GPU ran a step's kernels, "
           f"memcpys and memsets (the union of their intervals: kernels side by side count "
           f"once; torch.profiler, {s['profile_steps']} steps); peak: "
           f"torch.cuda.max_memory_allocated over the timed steps; TFLOP/s from the "
           f"step's GEMM flop ({results['flop convention']}); x / dmc: the system's figure "
           f"over dmc's (> 1: dmc is faster or smaller)."]
    modules = {}
    for entry in results["cases"]:
        for system, result in entry["systems"].items():
            if result.get("module"):
                modules.setdefault(system, set()).add(result["module"])
    if modules:
        out.append("Layers: " + "; ".join(f"{system}: {', '.join(sorted(m))}"
                                          for system, m in modules.items()) + ".")
    for entry in results["cases"]:
        for system, result in entry["systems"].items():
            in_process = result.get("source", "").startswith("in-process")
            if result.get("status") == "ok" and not in_process:
                out.append(f"\\* {entry['name']} {system}: {result['source']}.")
            if result.get("status") == "ok" and system == "dmc-tuned" and result.get("note"):
                out.append(f"{entry['name']} {system}: {result['note']}.")
            for warning in result.get("warnings", []):
                out.append(f"Warning, {entry['name']} {system}: {warning}.")
    return out


def document(results):
    """bench.md: title, environment, the table, the notes."""
    env = results["environment"]
    lines = [f"# dmc benchmark: {env.get('device', 'unknown device')}, {results['date']}", "",
             f"Command: `{results['command']}`", ""]
    lines += [f"- {key}: {value}" for key, value in env.items()]
    lines += ["", table(results), ""] + [n + "\n" for n in notes(results)]
    return "\n".join(lines).rstrip() + "\n"


def load(path):
    """A bench.json, checked for the fields the tables read."""
    with open(path) as f:
        results = json.load(f)
    for field in ("schema", "cases", "settings", "environment", "date", "command",
                  "flop convention"):
        if field not in results:
            raise ValueError(f"{path}: not a dmc benchmark result (no '{field}')")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description="Prints a benchmark JSON as Markdown.")
    parser.add_argument("json", help="bench.json written by bench/run.py")
    args = parser.parse_args(argv)
    try:
        sys.stdout.write(document(load(args.json)))
    except (OSError, ValueError, KeyError) as e:
        print(f"table: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
