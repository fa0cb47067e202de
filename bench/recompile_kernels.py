#!/usr/bin/env python3
"""Copy a bundle with some of its kernels compiled again, for kernel studies.

    bench/recompile_kernels.py SRC.dmlib DST.dmlib --kernels 7[,8...]
        [--include DIR ...] [--compiler nvrtc|nvcc] [--min-blocks N]

DST is SRC with kernels/k<N>.cubin rebuilt from its own kernels/k<N>.cu, with the
headers of each --include DIR found before the repository's (a shadowed
codegen/attention/device/GradKV.h, say), and the manifest's cubin_bytes and
cubin_fnv1a64 rewritten to match, so the runtime opens it (`dmc-run DST --dry-run`
checks that on a machine without a GPU). --compiler nvrtc (default) compiles with
dmc's own NVRTC options (codegen/nvrtc/NvrtcCompiler.cpp), nvcc with `nvcc -cubin`.
--min-blocks N rewrites the copied source's __launch_bounds__(T) as (T, N).

Timing studies only: a kernel built from edited headers computes what the edit
makes it compute, and the manifest no longer says which source that was. The
bounds and variants in docs/fused-attention.md ("grad-kv's keep bits by
butterflies") were measured with bundles made this way and `dmrt-bench --kernel`.
Exit: 0 ok, 1 a compile failed, 2 bad arguments or bundle."""

import argparse
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NVRTC_LIB = "/usr/local/cuda/lib64/libnvrtc.so"
PRE_INCLUDE = "runtime/format/device/Types.h"


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def nvrtc(source, options, arch):
    """(cubin bytes, log) of `source` compiled by NVRTC; cubin None on failure."""
    lib = ctypes.CDLL(NVRTC_LIB)
    opts = [f"--gpu-architecture={arch}", "-std=c++17", "-default-device",
            f"--pre-include={PRE_INCLUDE}", "--ptxas-options=-v"] + options
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), source, b"kernel.cu", 0, None, None)
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    # NVRTC looks in the current directory before -I: compile from an empty one.
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as empty:
        os.chdir(empty)
        try:
            rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        finally:
            os.chdir(here)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace")
    cubin = None
    if rc == 0:
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(prog, buf)
        cubin = buf.raw
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return cubin, text


def nvcc(path, includes, arch, out):
    cmd = ["nvcc", f"-arch={arch}", "-cubin", "-std=c++17", "-w", "-Xptxas", "-v",
           "-o", out] + includes + [path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return (open(out, "rb").read() if r.returncode == 0 else None), r.stderr


def registers(log):
    """ptxas's "Used N registers" of the log, or ""."""
    m = re.findall(r"Used (\d+) registers", log)
    return f"{m[-1]} registers" if m else ""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--kernels", required=True, help="kernel ids, comma-separated")
    p.add_argument("--include", action="append", default=[], help="header directory searched "
                   "before the repository (repeatable)")
    p.add_argument("--compiler", choices=["nvrtc", "nvcc"], default="nvrtc")
    p.add_argument("--min-blocks", type=int, help="__launch_bounds__(T) -> (T, N)")
    a = p.parse_args(argv)

    manifest_path = os.path.join(a.src, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        print(f"recompile_kernels: {manifest_path}: {e}", file=sys.stderr)
        return 2
    kernels = manifest.get("kernels", [])
    try:
        ids = [int(x) for x in a.kernels.split(",")]
    except ValueError:
        print(f"recompile_kernels: --kernels '{a.kernels}': not a list of kernel ids",
              file=sys.stderr)
        return 2
    for i in ids:
        if not 0 <= i < len(kernels):
            print(f"recompile_kernels: --kernels: {a.src} has kernels 0..{len(kernels) - 1}, "
                  f"not {i}", file=sys.stderr)
            return 2
    for d in a.include:
        if not os.path.isdir(d):
            print(f"recompile_kernels: --include {d}: no such directory", file=sys.stderr)
            return 2
    if os.path.abspath(a.src) == os.path.abspath(a.dst):
        print("recompile_kernels: DST must differ from SRC", file=sys.stderr)
        return 2

    if os.path.exists(a.dst):
        shutil.rmtree(a.dst)
    shutil.copytree(a.src, a.dst)
    includes = ["-I" + os.path.abspath(d) for d in a.include] + ["-I" + REPO]
    arch = manifest.get("arch", "sm_90a")
    for i in ids:
        k = kernels[i]
        cu = os.path.join(a.dst, k["source"])
        out = os.path.join(a.dst, k["cubin"])
        with open(cu) as f:
            source = f.read()
        if a.min_blocks:
            source = re.sub(r"__launch_bounds__\((\d+)\)",
                            lambda m: f"__launch_bounds__({m.group(1)}, {a.min_blocks})", source)
            with open(cu, "w") as f:
                f.write(source)
        if a.compiler == "nvrtc":
            cubin, log = nvrtc(source.encode(), includes, arch)
        else:
            cubin, log = nvcc(cu, includes, arch, out)
        if cubin is None:
            print(f"recompile_kernels: k{i} ({k['name']}, {cu}) failed to compile:\n{log}",
                  file=sys.stderr)
            return 1
        with open(out, "wb") as f:
            f.write(cubin)
        k["cubin_bytes"] = len(cubin)
        k["cubin_fnv1a64"] = fnv1a64(cubin)
        print(f"recompile_kernels: {a.dst} k{i} {k['name']}: {a.compiler}, {registers(log)}")
    with open(os.path.join(a.dst, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
