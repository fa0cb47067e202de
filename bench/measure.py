"""Timing one system's training step on the GPU, in this process.

measure(step, ...) runs `step` (forward + backward, returns nothing) as:
  1. warm-up steps (compilation, CUDA-graph capture, cuBLAS heuristics, allocator);
  2. `steps` steps, each alone between two synchronizations: the median host wall
     time, and the peak of torch.cuda.max_memory_allocated over them (the peak
     statistics reset just before, so the previous system's peak does not count);
  3. one profiler warm-up step and `profile_steps` steps under torch.profiler (CPU and
     CUDA activities): the device time of their kernels per step (kernel_trace.py).
     If profiling fails, gpu_ms is None and gpu_error says why (results.py counts the
     system as incomplete).
"""

import json
import os
import shutil
import statistics
import tempfile
import time

import kernel_trace


def _torch():
    import torch  # imported here: the CPU tests import this module's callers without CUDA
    return torch


def wall_times(step, steps, sync):
    """Host wall time (ms) of each of `steps` calls of step(), each between sync()s."""
    times = []
    for _ in range(steps):
        sync()
        start = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - start) * 1000.0)
    return times


def summarize_times(times):
    """{'median', 'min', 'max', 'samples'} of a list of milliseconds."""
    if not times:
        raise ValueError("no timed steps")
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "samples": len(times)}


def profile_kernels(step, profile_steps, top=8, gaps=False, trace_out=None):
    """Device time per step of `profile_steps` steps (kernel_trace.summarize's dict, with
    the `top` kernels taking the most time; with `gaps`, also "gaps":
    kernel_trace.idle_gaps' dict; `trace_out`: a path to keep the trace at)."""
    torch = _torch()
    from torch.profiler import ProfilerActivity, profile, schedule

    with tempfile.TemporaryDirectory(prefix="dmc-bench-trace-") as tmp:
        path = os.path.join(tmp, "trace.json")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=0, warmup=1, active=profile_steps, repeat=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
            for _ in range(profile_steps + 1):
                step()
                torch.cuda.synchronize()
                prof.step()
        if not os.path.exists(path):
            raise kernel_trace.TraceError("torch.profiler wrote no trace")
        if trace_out:
            shutil.copyfile(path, trace_out)
        with open(path) as f:
            trace = json.load(f)
        summary = kernel_trace.summarize(trace, profile_steps, top=top)
        if gaps:
            summary["gaps"] = kernel_trace.idle_gaps(trace, profile_steps, top=top)
        return summary


def profiler_check():
    """Profiles one small CUDA op before any system runs; returns what it recorded.

    It also loads CUPTI before anything captures a CUDA graph (PyTorch's known issue
    with profiling graphs created before the profiler's first use; the workaround of
    torch.profiler._utils._init_for_cuda_graphs). Raises TraceError if the profiler
    records no kernel here: the GPU times of the run would then be missing too.
    """
    torch = _torch()
    t = torch.ones(1 << 20, device="cuda")

    def step():
        t.mul_(1.0)
    return profile_kernels(step, 1)


def measure(step, steps, warmup, profile_steps):
    """Measures a CUDA training step; returns the system's result fields."""
    torch = _torch()
    sync = torch.cuda.synchronize
    start = time.perf_counter()
    for _ in range(warmup):
        step()
    sync()
    warmup_s = time.perf_counter() - start
    torch.cuda.reset_peak_memory_stats()
    resident = torch.cuda.memory_allocated()
    wall = summarize_times(wall_times(step, steps, sync))
    peak = torch.cuda.max_memory_allocated()
    free, total = torch.cuda.mem_get_info()
    result = {"gpu_ms": None}
    try:
        result["gpu"] = profile_kernels(step, profile_steps)
        # The time the GPU was busy (kernels side by side count once; for kernels one
        # after another it is their sum, plus any memcpy and memset).
        result["gpu_ms"] = result["gpu"]["busy_ms"]
    except Exception as e:  # the wall time and memory stand without it
        result["gpu_error"] = f"{type(e).__name__}: {e}".splitlines()[0]
    return dict(result, **{
        "wall_ms": wall,
        "peak_mib": peak / 2**20,
        "resident_mib": resident / 2**20,
        # The whole device's use after the timed steps: PyTorch's cached blocks and what
        # was allocated outside PyTorch's allocator (a runtime's own arena) included.
        "device_used_mib": (total - free) / 2**20,
        "warmup_s": warmup_s,
        "source": "in-process (torch.profiler, torch.cuda memory statistics)",
    })
