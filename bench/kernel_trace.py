"""GPU time per step from a torch.profiler (Kineto) Chrome trace.

Pure Python: reads the exported JSON (`prof.export_chrome_trace`), so the CPU tests
check it on written traces. Only device activities are summed: CUDA kernels (category
"kernel"), and apart from them memcpy and memset; CPU ops, runtime calls and GPU user
annotations (record_function ranges drawn on the GPU timeline, which would count every
kernel twice) are left out. Kernels launched from CUDA graphs appear one by one.

Two totals: the sum of the activities' durations, and the time the device was busy with
any of them (the union of their intervals). They agree when activities run one after
another; kernels running side by side (dmc's graphs overlap independent steps) count once
in the busy time, which is what a step costs.
"""

import re
from collections import defaultdict

_STEP = re.compile(r"^ProfilerStep#\d+$")
# Kineto's categories (lower case since PyTorch 2.0; "Kernel", "Memcpy", "Memset" before).
_KERNEL = {"kernel"}
_MEMCPY = {"gpu_memcpy", "memcpy"}
_MEMSET = {"gpu_memset", "memset"}


class TraceError(ValueError):
    """The trace cannot give a GPU time (nothing recorded, wrong number of steps)."""


def _duration_us(event):
    dur = event.get("dur")
    if not isinstance(dur, (int, float)) or dur < 0:
        raise TraceError(f"trace event {event.get('name')!r} has no valid duration: {dur!r}")
    return float(dur)


def _union_us(intervals):
    """Total length of the union of [start, end) intervals."""
    total, reach = 0.0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _start_us(event):
    ts = event.get("ts")
    if not isinstance(ts, (int, float)):
        raise TraceError(f"trace event {event.get('name')!r} has no valid start: {ts!r}")
    return float(ts)


def _complete_events(trace, steps):
    """(category in lower case, name, event) of every complete ("X") event of `trace`,
    after checking `steps` and the trace's shape."""
    if steps < 1:
        raise TraceError(f"steps must be >= 1, got {steps}")
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise TraceError("not a Chrome trace: no traceEvents list")
    for event in events:
        if isinstance(event, dict) and event.get("ph") == "X":
            yield str(event.get("cat", "")).lower(), str(event.get("name", "")), event


def summarize(trace, steps, top=8):
    """Per-step device time of the `steps` profiled steps of `trace` (parsed JSON).

    Returns {"kernel_ms", "memcpy_ms", "memset_ms", "busy_ms", "kernels", "top"} per
    step: the sums of kernel, memcpy and memset durations, the union of all their
    intervals, and `top` the kernels taking the most time ([name, ms per step, launches
    per step]).
    Raises TraceError when the trace recorded another number of steps than `steps`
    (counted from its ProfilerStep#N ranges on the CPU side) or no kernel at all.
    """
    recorded = set()
    kernel_us = memcpy_us = memset_us = 0.0
    kernels = 0
    intervals = []
    by_name = defaultdict(lambda: [0.0, 0])
    for category, name, event in _complete_events(trace, steps):
        if _STEP.match(name) and category != "gpu_user_annotation":
            recorded.add(name)
        elif category in _KERNEL:
            us = _duration_us(event)
            intervals.append((_start_us(event), _start_us(event) + us))
            kernel_us += us
            kernels += 1
            by_name[name][0] += us
            by_name[name][1] += 1
        elif category in _MEMCPY or category in _MEMSET:
            us = _duration_us(event)
            intervals.append((_start_us(event), _start_us(event) + us))
            if category in _MEMCPY:
                memcpy_us += us
            else:
                memset_us += us
    if len(recorded) != steps:
        raise TraceError(f"the profiler recorded {len(recorded)} steps "
                         f"({', '.join(sorted(recorded)) or 'none'}), expected {steps}")
    if kernels == 0:
        raise TraceError(f"the profiler recorded no CUDA kernel in {steps} steps "
                         f"(is CUPTI available? was the step run on the GPU?)")
    ranked = sorted(by_name.items(), key=lambda kv: -kv[1][0])[:top]
    return {
        "kernel_ms": kernel_us / 1000.0 / steps,
        "memcpy_ms": memcpy_us / 1000.0 / steps,
        "memset_ms": memset_us / 1000.0 / steps,
        "busy_ms": _union_us(intervals) / 1000.0 / steps,
        "kernels": kernels / steps,
        "top": [[name, us / 1000.0 / steps, count / steps] for name, (us, count) in ranked],
    }


def idle_gaps(trace, steps, top=10):
    """The device's idle time inside each step, and which activity each idle stretch
    waited for: {"idle_us": idle microseconds per step, "before": [[name, us per step,
    times per step], ...] the `top` activities that started after the most idle time}.

    The device activities (kernels, memcpy, memset) are taken in order of start and cut
    into `steps` runs of equal length, which needs steps that do not overlap (the
    profiled steps synchronize in between, as measure.profile_kernels' do); within a
    step, an activity that starts after every earlier one has ended waited for that
    long. Raises TraceError when the activities do not split into equal steps."""
    device = []
    for category, name, event in _complete_events(trace, steps):
        if category in _KERNEL or category in _MEMCPY or category in _MEMSET:
            start = _start_us(event)
            device.append((start, start + _duration_us(event), name))
    if not device or len(device) % steps:
        raise TraceError(f"{len(device)} device activities do not split into {steps} steps")
    device.sort()
    per = len(device) // steps
    idle = 0.0
    before = defaultdict(lambda: [0.0, 0])
    for n in range(steps):
        run = device[n * per:(n + 1) * per]
        reach = run[0][1]
        for start, end, name in run[1:]:
            if start > reach:
                idle += start - reach
                before[name][0] += start - reach
                before[name][1] += 1
            reach = max(reach, end)
    ranked = sorted(before.items(), key=lambda kv: -kv[1][0])[:top]
    return {"idle_us": idle / steps,
            "before": [[name, us / steps, count / steps] for name, (us, count) in ranked]}
