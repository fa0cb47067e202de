"""The dmc side's fallback when python/dmc is not importable: `dmc-run BUNDLE --bench`.

It runs in a subprocess with its own stream and buffers, so its figures are not the
in-process ones of the other systems and say so (`source`):
  wall_ms  the median whole step with CUDA graphs between CUDA events (dmc-run's own
           timing, not host wall time around a PyTorch call);
  gpu_ms   the sum of every step's own time (dmrt_profile: each kernel or contraction
           alone between events, plain launches);
  peak_mib arena + cuBLASLt workspace + caller buffers (the layer's whole footprint).
"""

import os
import re
import subprocess

_NUMBER = r"([0-9]+(?:\.[0-9]*)?)"
_MEMORY = re.compile(r"^dmc-run: .* on (?P<device>.*); arena " + _NUMBER +
                     r" MiB .*cuBLASLt workspace " + _NUMBER + r" MiB, caller buffers " +
                     _NUMBER + r" MiB", re.M)
_GRAPHS = re.compile(r"^dmc-run:\s+CUDA graphs\s+" + r"\s+".join([_NUMBER] * 3), re.M)
_SUM = re.compile(r"^dmc-run:\s+sum of steps' own times\s+" + r"\s+".join([_NUMBER] * 3), re.M)


def candidates(repo):
    """Where run-device.sh's and .ci's builds put dmc-run."""
    return [os.path.join(repo, p) for p in ("build-gpu/bin/dmc-run",
                                            "build-gpu/runtime/tools/dmc-run",
                                            "build/bin/dmc-run")]


def find(repo, given=None):
    """The dmc-run to use: `given`, else the first built one; raises if none."""
    paths = [given] if given else candidates(repo)
    for path in paths:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"no dmc-run executable at {', '.join(paths)} "
                            f"(build the runtime: tests/gpu/run-device.sh conventions)")


def parse(text):
    """Result fields from dmc-run --bench's output; raises ValueError naming what is missing."""
    found = {"memory": _MEMORY.search(text), "CUDA graphs": _GRAPHS.search(text),
             "sum of steps' own times": _SUM.search(text)}
    missing = [name for name, match in found.items() if match is None]
    if missing:
        tail = " | ".join(text.strip().splitlines()[-3:])
        raise ValueError(f"dmc-run --bench printed no {', '.join(missing)} line "
                         f"(its output ends: {tail or 'nothing'})")
    memory, graphs, sums = found["memory"], found["CUDA graphs"], found["sum of steps' own times"]
    arena, workspace, callers = (float(memory.group(i)) for i in (2, 3, 4))
    step = float(graphs.group(3))
    return {
        "wall_ms": {"median": step, "min": None, "max": None, "samples": None},
        "gpu_ms": float(sums.group(3)),
        "gpu": {"forward_ms": float(sums.group(1)), "backward_ms": float(sums.group(2))},
        "peak_mib": arena + workspace + callers,
        "device": memory.group("device"),
        "source": "dmc-run --bench (subprocess): wall_ms is its CUDA-graph step between "
                  "CUDA events, gpu_ms the sum of its steps' own times, peak_mib arena + "
                  "cuBLASLt workspace + caller buffers",
    }


def bench(dmc_run, bundle, steps, warmup, timeout_s=300):
    """Runs dmc-run --bench on `bundle` and parses it; raises RuntimeError on failure."""
    command = [dmc_run, bundle, "--bench", "--reps", str(steps), "--warmup", str(warmup)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{' '.join(command)} ran past {timeout_s} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"dmc-run --bench exited {done.returncode}: {last[0]}")
    result = parse(done.stdout)
    result["command"] = " ".join(command)
    return result
