"""Shared pieces of the benchmark's CPU tests: the import path and sample results."""

import copy
import json
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(TESTS)
REPO = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

import model  # noqa: E402

TINY_ENCODER = {"name": "tiny-encoder", "kind": "encoder", "batch": 2, "seq": 3, "hidden": 4,
                "heads": 2, "ffn": 8, "dropout": 0.1, "dtype": "bf16"}
TINY_DECODER = {"name": "tiny-decoder", "kind": "decoder", "batch": 2, "seq": 3,
                "memory_seq": 5, "hidden": 4, "heads": 2, "ffn": 8, "dropout": 0.1,
                "dtype": "bf16"}


def write_case(directory, description):
    """Writes a model description as NAME.json in `directory`; returns its Case."""
    path = os.path.join(directory, description["name"] + ".json")
    with open(path, "w") as f:
        json.dump(description, f)
    return model.load_case(path)


def measurement(wall, gpu, peak):
    """What a runner returns for a system that ran (times in ms, memory in MiB)."""
    return {"wall_ms": {"median": wall, "min": wall * 0.9, "max": wall * 1.2, "samples": 50},
            "gpu_ms": gpu, "gpu": {"kernel_ms": gpu}, "peak_mib": peak,
            "source": "in-process (torch.profiler, torch.cuda memory statistics)"}


SAMPLE = {
    "schema": "dmc-bench/1",
    "date": "2026-01-02T03:04:05+00:00",
    "command": "python3 bench/run.py --out gpu-out/bench",
    "settings": {"steps": 50, "warmup": 10, "profile_steps": 10, "budget_s": 420,
                 "bundles": "gpu-bundles/bench", "quick": False},
    "flop convention": "forward 2*M*N*K per GEMM",
    "environment": {"device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0",
                    "cuda (torch)": "13.0", "triton": "3.5.0", "dmc commit": "abc123",
                    "cublasLt loaded": {"/usr/lib/libcublasLt.so.13": "13.1.0"}},
    "cases": [{
        "name": "case-a", "flop": {"forward": 10**12, "backward": 2 * 10**12, "step": 3 * 10**12},
        "systems": {
            "dmc": dict(measurement(2.0, 1.5, 1000.0), status="ok", tflops_wall=1500.0,
                        tflops_gpu=2000.0, vs_dmc={"wall": 1.0, "gpu": 1.0, "memory": 1.0}),
            "eager": dict(measurement(3.0, 2.25, 1500.0), status="ok", tflops_wall=1000.0,
                          tflops_gpu=1333.3, vs_dmc={"wall": 1.5, "gpu": 1.5, "memory": 1.5}),
            "compile": {"status": "failed",
                        "reason": "BackendCompilerFailed: inductor | raised an error"},
            "compile-cudagraphs": {"status": "skipped", "reason": "time budget of 420 s spent"},
        }}],
}


def sample():
    return copy.deepcopy(SAMPLE)
