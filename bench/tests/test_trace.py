#!/usr/bin/env python3
"""bench/kernel_trace.py on written Kineto traces, and on a real (CPU-only) profiler trace;
bench/dmcrun.py's parsing of `dmc-run --bench` output."""

import json
import os
import tempfile
import unittest

import fixtures  # noqa: F401 (import path)

import dmcrun
import kernel_trace


def event(name, cat, dur, ph="X", ts=0):
    return {"ph": ph, "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": 0}


def trace(steps, kernels_per_step, extra=()):
    """Steps 10 ms apart, each with its kernels one after another."""
    events = [event(f"ProfilerStep#{n}", "user_annotation", 5000, ts=10000 * n)
              for n in range(steps)]
    # The same ranges drawn on the GPU timeline: never counted as kernels.
    events += [event(f"ProfilerStep#{n}", "gpu_user_annotation", 4000, ts=10000 * n)
               for n in range(steps)]
    for n in range(steps):
        events += [event("sm90_xmma_gemm_bf16", "kernel", 300, ts=10000 * n),
                   event("softmax_dropout", "kernel", 100, ts=10000 * n + 300)][:kernels_per_step]
    events += [event("aten::mm", "cpu_op", 50), event("cudaLaunchKernel", "cuda_runtime", 5),
               event("CompiledFunction", "gpu_user_annotation", 900, ts=100000),
               event("Memset (Device)", "gpu_memset", 2, ts=100000),
               event("Memcpy DtoD", "gpu_memcpy", 8, ts=100010),
               event("flow", "ac2g", 0, ph="s")]
    return {"traceEvents": events + list(extra)}


class Summarize(unittest.TestCase):
    def test_kernels_per_step(self):
        s = kernel_trace.summarize(trace(4, 2), 4)
        self.assertAlmostEqual(s["kernel_ms"], 0.4)  # (300 + 100) us per step
        self.assertEqual(s["kernels"], 2)
        self.assertAlmostEqual(s["memset_ms"], 0.002 / 4)
        self.assertAlmostEqual(s["memcpy_ms"], 0.008 / 4)
        self.assertEqual(s["top"][0], ["sm90_xmma_gemm_bf16", 0.3, 1.0])
        # One after another: busy as long as the sum of everything.
        self.assertAlmostEqual(s["busy_ms"], 0.4 + 0.010 / 4)

    def test_overlapping_kernels_count_once_in_busy_time(self):
        # A GEMM of 300 us with a 100 us kernel inside it and one of 100 us starting
        # 250 us in: busy 400 us of 500 summed; a gap between steps is not busy.
        extra = [event("k_inside", "kernel", 100, ts=100), event("k_tail", "kernel", 100, ts=250)]
        s = kernel_trace.summarize(trace(1, 1, extra), 1)
        self.assertAlmostEqual(s["kernel_ms"], 0.5)
        self.assertAlmostEqual(s["busy_ms"], 0.350 + 0.010)
        with self.assertRaisesRegex(kernel_trace.TraceError, "no valid start"):
            kernel_trace.summarize(trace(1, 1, [event("k", "kernel", 5, ts=None)]), 1)

    def test_old_category_names(self):
        s = kernel_trace.summarize(trace(1, 0, [event("k", "Kernel", 250)]), 1)
        self.assertAlmostEqual(s["kernel_ms"], 0.25)

    def test_wrong_step_count(self):
        with self.assertRaisesRegex(kernel_trace.TraceError, "recorded 3 steps.*expected 4"):
            kernel_trace.summarize(trace(3, 2), 4)

    def test_no_kernels(self):
        with self.assertRaisesRegex(kernel_trace.TraceError, "no CUDA kernel"):
            kernel_trace.summarize(trace(2, 0), 2)

    def test_bad_duration_and_format(self):
        with self.assertRaisesRegex(kernel_trace.TraceError, "no valid duration"):
            kernel_trace.summarize(trace(1, 1, [event("k", "kernel", None)]), 1)
        with self.assertRaisesRegex(kernel_trace.TraceError, "not a Chrome trace"):
            kernel_trace.summarize({"events": []}, 1)

    def test_a_real_cpu_profiler_trace(self):
        # This machine's torch has no CUDA: its trace has the steps but no kernel.
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.json")
            a = torch.randn(32, 32)
            with profile(activities=[ProfilerActivity.CPU], on_trace_ready=lambda p:
                         p.export_chrome_trace(path),
                         schedule=schedule(wait=0, warmup=1, active=3, repeat=1)) as prof:
                for _ in range(4):
                    (a @ a).sum()
                    prof.step()
            with open(path) as f:
                recorded = json.load(f)
        with self.assertRaisesRegex(kernel_trace.TraceError, "no CUDA kernel in 3 steps"):
            kernel_trace.summarize(recorded, 3)
        with self.assertRaisesRegex(kernel_trace.TraceError, "recorded 3 steps"):
            kernel_trace.summarize(recorded, 4)


# What dmc-run --bench prints (runtime/tools/RunBench.cpp's formats).
BENCH_OUTPUT = """\
dmc-run: bert-large-b8-l512 on NVIDIA H100 80GB HBM3 (sm_90); arena 288.75 MiB (kernel \
workspaces 0.02 MiB; inference alone 216.00 MiB), cuBLASLt workspace 32 MiB, \
caller buffers 120.50 MiB
dmc-run: timing 50 steps (after 10 warm-up) with CUDA graphs ...
dmc-run: timing 50 steps with plain launches ...
dmc-run: summary (median ms)       forward  backward  step   host enqueue us
dmc-run:   CUDA graphs               0.312     0.655   0.967      11.5
dmc-run:   plain launches            0.340     0.700   1.040     160.0
dmc-run:   sum of steps' own times   0.300     0.610   0.910  (13 + 18 steps)
dmc-run: launch overhead: plain - graphs = 0.073 ms per step; graphs - sum of steps = 0.057 ms
"""


class IdleGaps(unittest.TestCase):
    def step_events(self, n, gap_before_b, overlap=False):
        """Step n: kernel a [0, 100), b after `gap_before_b` us idle, c beside b when
        `overlap` (no idle before it), else after 2 us idle."""
        t = 10000 * n
        b0 = 100 + gap_before_b
        c0 = b0 + 10 if overlap else b0 + 50 + 2
        return [event("a", "kernel", 100, ts=t), event("b", "kernel", 50, ts=t + b0),
                event("c", "kernel", 30, ts=t + c0)]

    def test_idle_attributed_to_what_starts_after_it(self):
        events = [e for n in range(3) for e in self.step_events(n, 5.0)]
        g = kernel_trace.idle_gaps({"traceEvents": events}, 3)
        self.assertAlmostEqual(g["idle_us"], 7.0)
        self.assertEqual(g["before"][0][0], "b")
        self.assertAlmostEqual(g["before"][0][1], 5.0)
        self.assertAlmostEqual(g["before"][1][1], 2.0)

    def test_overlapping_kernels_wait_for_nothing(self):
        events = [e for n in range(2) for e in self.step_events(n, 4.0, overlap=True)]
        g = kernel_trace.idle_gaps({"traceEvents": events}, 2)
        self.assertAlmostEqual(g["idle_us"], 4.0)
        self.assertEqual([b[0] for b in g["before"]], ["b"])

    def test_the_time_between_steps_is_not_idle_inside_one(self):
        # Steps 10 ms apart: none of that counts.
        events = [e for n in range(4) for e in self.step_events(n, 0.0)]
        self.assertAlmostEqual(kernel_trace.idle_gaps({"traceEvents": events}, 4)["idle_us"], 2.0)

    def test_uneven_steps_are_refused(self):
        events = [e for n in range(2) for e in self.step_events(n, 1.0)][:-1]
        with self.assertRaisesRegex(kernel_trace.TraceError, "5 device activities do not split "
                                    "into 2 steps"):
            kernel_trace.idle_gaps({"traceEvents": events}, 2)


class DmcRun(unittest.TestCase):
    def test_parse(self):
        r = dmcrun.parse(BENCH_OUTPUT)
        self.assertEqual(r["wall_ms"]["median"], 0.967)
        self.assertEqual(r["gpu_ms"], 0.91)
        self.assertEqual(r["gpu"], {"forward_ms": 0.3, "backward_ms": 0.61})
        self.assertAlmostEqual(r["peak_mib"], 288.75 + 32 + 120.5)
        self.assertEqual(r["device"], "NVIDIA H100 80GB HBM3 (sm_90)")
        self.assertTrue(r["source"].startswith("dmc-run --bench"))

    def test_missing_lines(self):
        text = "\n".join(l for l in BENCH_OUTPUT.splitlines() if "CUDA graphs  " not in l)
        with self.assertRaisesRegex(ValueError, "printed no CUDA graphs line"):
            dmcrun.parse(text)
        with self.assertRaisesRegex(ValueError, "memory, CUDA graphs.*ends: nothing"):
            dmcrun.parse("")

    def test_find(self):
        with self.assertRaisesRegex(FileNotFoundError, "no dmc-run executable at /nowhere"):
            dmcrun.find("/repo", "/nowhere")


if __name__ == "__main__":
    unittest.main()
