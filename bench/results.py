"""Running every (case, system) and recording the outcome, whatever it is.

Pure Python: the runners are passed in (systems.RUNNERS on a GPU; fakes in the CPU
tests). A runner returns its measurement fields or raises; either way the run goes on
with the next system. Each system's entry has a status:
  ok       the measurement, plus throughput from the case's flop and ratios to dmc;
  failed   reason "<ExceptionType>: <first line of the message>" and the traceback's end;
  skipped  the time budget was spent before it started.
"""

import os
import time
import traceback
from dataclasses import dataclass

import model

SCHEMA = "dmc-bench/1"


@dataclass
class Settings:
    steps: int
    warmup: int
    profile_steps: int
    bundles: str  # folder of NAME.dmlib bundles, one per case
    budget_s: float  # no new system starts once this much time has passed
    dmc_run: str = None  # dmc-run for the fallback (None: the built one)
    reference: str = "auto"  # the PyTorch layer: "dmc", "bench" or "auto" (systems.py)
    tuned: str = None  # the cases' bundles compiled with this GPU's tuning database, or None

    def bundle(self, case):
        return os.path.join(self.bundles, case.name + ".dmlib")

    def tuned_bundle(self, case):
        """(bundle, the compile's tuning summary line) of `case` with this GPU's database."""
        if not self.tuned:
            raise RuntimeError("no tuning database for this GPU among the tuned bundles")
        summary = ""
        try:
            with open(os.path.join(self.tuned, case.name + ".tuning.txt")) as f:
                lines = [l.strip() for l in f if "kernel(s) measured" in l]
            summary = lines[-1] if lines else ""
        except OSError:
            pass
        return os.path.join(self.tuned, case.name + ".dmlib"), summary


def tuned_bundles(bundles, device):
    """The folder of tuned bundles made for `device`: make-bundles.sh compiles every case
    with each tuning-db/*.jsonl into BUNDLES-tuned/DB/ and writes the database's device
    name into DB/DEVICE. None when no database is for this device."""
    root = os.path.normpath(bundles) + "-tuned"
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return None
    for name in names:
        try:
            with open(os.path.join(root, name, "DEVICE")) as f:
                if f.read().strip() == device:
                    return os.path.join(root, name)
        except OSError:
            continue
    return None


def failure_reason(error, limit=240):
    """One line: the exception's type and the first line of its message."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0] if lines else '(no message)'}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def case_entry(case):
    return {
        "name": case.name, "description": case.description, "kind": case.kind,
        "shape": {"batch": case.batch, "seq": case.seq, "memory_seq": case.memory_seq,
                  "hidden": case.hidden, "heads": case.heads, "head_dim": case.head_dim,
                  "ffn": case.ffn},
        "dtype": case.dtype, "dropout": case.dropout,
        "flop": model.flop(case),
        "systems": {},
    }


def add_throughput(result, flop):
    """TFLOP/s of the step over the median wall time and over the GPU kernel time."""
    step = flop["step"]
    result["tflops_wall"] = step / (result["wall_ms"]["median"] * 1e-3) / 1e12
    if result.get("gpu_ms") is None:
        result["tflops_gpu"] = None
        result.setdefault("warnings", []).append(
            f"no GPU time: {result.get('gpu_error', 'not measured')}")
        return
    result["tflops_gpu"] = step / (result["gpu_ms"] * 1e-3) / 1e12
    if result["gpu_ms"] > 1.05 * result["wall_ms"]["median"]:
        result.setdefault("warnings", []).append(
            "GPU kernel time exceeds the median wall time: kernels on several streams "
            "overlapped, or the profiled steps differ from the timed ones")


def add_ratios(entry):
    """vs_dmc for every measured system: its figure / dmc's (> 1: dmc is faster or smaller)."""
    systems = entry["systems"]
    dmc = systems.get("dmc")
    for name, result in systems.items():
        if result.get("status") != "ok":
            continue
        if dmc is None or dmc.get("status") != "ok":
            result["vs_dmc"] = None
            continue
        ratios = {"wall": result["wall_ms"]["median"] / dmc["wall_ms"]["median"]}
        if result.get("gpu_ms") and dmc.get("gpu_ms"):
            ratios["gpu"] = result["gpu_ms"] / dmc["gpu_ms"]
        if result.get("peak_mib") and dmc.get("peak_mib"):
            ratios["memory"] = result["peak_mib"] / dmc["peak_mib"]
        result["vs_dmc"] = ratios


def describe(result):
    """The progress line's text for one system's result."""
    if result["status"] != "ok":
        return f"{result['status']}: {result['reason']}"
    gpu = "none" if result.get("gpu_ms") is None else f"{result['gpu_ms']:.3f} ms"
    return (f"ok: wall {result['wall_ms']['median']:.3f} ms, GPU {gpu}, "
            f"peak {result['peak_mib']:.0f} MiB, {result['tflops_wall']:.0f} TFLOP/s (wall)")


def run_cases(cases, runners, settings, log, on_update=None, clock=time.monotonic):
    """{'cases': [...]} with one entry per case and one result per runner.

    `log(line)` gets the progress lines; `on_update(cases)` is called after every system
    (the caller writes the JSON, so a killed run keeps what it measured).
    """
    start = clock()
    entries = []
    for case in cases:
        entry = case_entry(case)
        entries.append(entry)
        for name, runner in runners.items():
            elapsed = clock() - start
            if elapsed >= settings.budget_s:
                result = {"status": "skipped",
                          "reason": f"time budget of {settings.budget_s:g} s spent "
                                    f"({elapsed:.0f} s elapsed)"}
            else:
                log(f"{case.name}: {name} ...")
                began = clock()
                try:
                    result = {"status": "ok", **runner(case, settings)}
                    add_throughput(result, entry["flop"])
                except Exception as error:  # recorded; the run goes on
                    result = {"status": "failed", "reason": failure_reason(error),
                              "traceback": traceback.format_exc().splitlines()[-12:]}
                result["elapsed_s"] = clock() - began
            entry["systems"][name] = result
            log(f"{case.name}: {name} {describe(result)}")
            add_ratios(entry)
            if on_update is not None:
                on_update(entries)
    return entries


def all_ok(entries):
    """Every system ran on every case and got every figure."""
    return all(r["status"] == "ok" and r.get("gpu_ms") is not None
               for e in entries for r in e["systems"].values())
