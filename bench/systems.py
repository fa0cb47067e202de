"""The systems a case is timed on, each a function (case, settings) -> result.

  dmc                 the compiled bundle through dmc.torch.Layer (python/dmc), in this
                      process; without that package, dmc-run --bench (dmcrun.py)
  eager               the plain-PyTorch layer (SDPA attention), eager
  compile             torch.compile(layer) (Inductor, default mode)
  compile-cudagraphs  torch.compile(layer, mode="reduce-overhead") (CUDA graphs)
  dmc-tuned           the bundle compiled with this GPU's tuning database (tuning-db/),
                      run by default when make-bundles.sh made one for this device
  dmc-plain           (not run by default) dmc.torch.Layer(bundle, graphs=False): kernel
                      by kernel launches instead of the runtime's CUDA graphs (the
                      default since 2026-11-27)
  dmc-graphs          (not run by default) dmc.torch.Layer(bundle, graphs=True)

Every system gets fresh inputs of the case's shapes and dtype (x, memory for a decoder,
requiring gradients, and dy) and runs the same step: gradients of the layer and its
inputs set to None, y = layer(x[, memory]), y.backward(dy), so parameter and input
gradients are computed everywhere and nothing accumulates. The PyTorch layer comes from
dmc.torch.reference_layer, or bench/reference.py where python/dmc lacks it
(Settings.reference chooses).
"""

import gc
import os
import sys
import time

import dmcrun
import measure
import model

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SYSTEMS = ("dmc", "eager", "compile", "compile-cudagraphs")  # the default; "dmc-plain", "dmc-graphs" on request


def _import_dmc_torch():
    """python/dmc's torch module, or None with the reason it could not be imported."""
    path = os.path.join(REPO, "python")
    if path not in sys.path:
        sys.path.insert(0, path)
    try:
        import dmc.torch as dmc_torch
        return dmc_torch, None
    except Exception as e:  # ImportError, or a library that failed to load
        return None, f"{type(e).__name__}: {e}"


def reference_layer(case, which="auto"):
    """(module, where it came from): `which` is "dmc" (python/dmc's reference layer),
    "bench" (bench/reference.py) or "auto" (python/dmc's where it has one)."""
    if which in ("auto", "dmc"):
        dmc_torch, why = _import_dmc_torch()
        if dmc_torch is not None and hasattr(dmc_torch, "reference_layer"):
            return dmc_torch.reference_layer(case.path), "dmc.torch.reference_layer"
        if which == "dmc":
            raise RuntimeError(f"dmc.torch.reference_layer unavailable: "
                               f"{why or 'python/dmc has no reference_layer'}")
    import reference
    return reference.reference_layer(case.path), "bench/reference.py (stand-in)"


def _dtype(case):
    import torch
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[case.dtype]


def _inputs(case):
    import torch
    dtype = _dtype(case)
    shape = (case.batch, case.seq, case.hidden)
    x = torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True)
    dy = torch.randn(shape, device="cuda", dtype=dtype)
    memory = None
    if case.kind == "decoder":
        memory = torch.randn((case.batch, case.memory_seq, case.hidden), device="cuda",
                             dtype=dtype, requires_grad=True)
    return x, memory, dy


def _step(module, call, x, memory, dy, before=None):
    """The training step of `call` (the module or its compiled form)."""
    params = list(module.parameters())
    inputs = [t for t in (x, memory) if t is not None]

    def step():
        if before is not None:
            before()
        for t in params + inputs:
            t.grad = None
        y = call(x) if memory is None else call(x, memory=memory)
        y.backward(dy)
    return step


def _release():
    """Frees what the system left; quiet, so that an earlier error stays the reported one."""
    import torch
    gc.collect()
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    except Exception:  # a sticky CUDA error: the next system reports it
        pass


def run_dmc(case, settings, graphs=None, bundle=None):
    """dmc.torch.Layer with its defaults, or with the runtime's CUDA graphs on or off."""
    dmc_torch, why = _import_dmc_torch()
    bundle = bundle or settings.bundle(case)
    model.check_bundle(case, bundle)  # made from this case, not stale
    if dmc_torch is None and graphs is None:
        result = dmcrun.bench(dmcrun.find(REPO, settings.dmc_run), bundle, settings.steps,
                              settings.warmup)
        result["note"] = f"python/dmc unavailable ({why}): timed by dmc-run in a subprocess"
        return result
    if dmc_torch is None:
        raise RuntimeError(f"python/dmc unavailable: {why}")
    start = time.perf_counter()
    layer = dmc_torch.Layer(bundle) if graphs is None else dmc_torch.Layer(bundle, graphs=graphs)
    x, memory, dy = _inputs(case)
    setup_s = time.perf_counter() - start
    try:
        result = measure.measure(_step(layer, layer, x, memory, dy), settings.steps,
                                 settings.warmup, settings.profile_steps)
    finally:
        del layer, x, memory, dy
        _release()
    result["setup_s"] = setup_s
    result["module"] = "dmc.torch.Layer" + ("" if graphs is None else f"(graphs={graphs})")
    return result


def _run_torch(case, settings, compile_mode):
    import torch
    start = time.perf_counter()
    module, origin = reference_layer(case, settings.reference)
    module = module.to(device="cuda", dtype=_dtype(case)).train()
    call, before = module, None
    if compile_mode is not None:
        torch._dynamo.reset()  # no guards or automatic dynamic shapes from an earlier case
        call = torch.compile(module, mode=compile_mode, dynamic=False)
        if compile_mode == "reduce-overhead":
            before = torch.compiler.cudagraph_mark_step_begin
    x, memory, dy = _inputs(case)
    setup_s = time.perf_counter() - start
    try:
        result = measure.measure(_step(module, call, x, memory, dy, before), settings.steps,
                                 settings.warmup, settings.profile_steps)
    finally:
        del call, module, x, memory, dy
        if compile_mode is not None:
            torch._dynamo.reset()
        _release()
    result["setup_s"] = setup_s  # building; the compilation is in warmup_s (first call)
    result["module"] = origin
    return result


def run_dmc_tuned(case, settings):
    """run_dmc on the bundle compiled with this GPU's tuning database."""
    bundle, summary = settings.tuned_bundle(case)
    result = run_dmc(case, settings, bundle=bundle)
    result["note"] = f"tuned ({os.path.basename(settings.tuned)}): {summary or 'no summary'}"
    return result


RUNNERS = {
    "dmc": run_dmc,
    "dmc-tuned": run_dmc_tuned,
    "dmc-graphs": lambda case, settings: run_dmc(case, settings, graphs=True),
    "dmc-plain": lambda case, settings: run_dmc(case, settings, graphs=False),
    "eager": lambda case, settings: _run_torch(case, settings, None),
    "compile": lambda case, settings: _run_torch(case, settings, "default"),
    "compile-cudagraphs": lambda case, settings: _run_torch(case, settings, "reduce-overhead"),
}
