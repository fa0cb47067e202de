"""What the figures were measured on: device, library versions, dmc's commit.

Each probe is best-effort and says why when it cannot answer (the value is then a
string starting with "unknown:"), so a missing tool never stops a run.
"""

import ctypes
import os
import platform
import re
import subprocess

STAMP = "SOURCE"  # written by tests/gpu/make-bundles.sh beside the bench bundles


def _unknown(error):
    return f"unknown: {type(error).__name__}: {error}"


def git_commit(repo):
    """`git describe`-like text for the work tree: commit hash, '+dirty' if edited."""
    try:
        head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except Exception as e:  # no git, or not a repository (a copied work tree)
        return _unknown(e)


def bundle_stamp(bundles):
    """The commit make-bundles.sh recorded for the bundles (its SOURCE file)."""
    try:
        with open(os.path.join(bundles, STAMP)) as f:
            return f.read().strip()
    except OSError as e:
        return _unknown(e)


def cublaslt_versions():
    """cublasLtGetVersion() of every libcublasLt loaded in this process, by path.

    PyTorch and the dmc runtime may load different copies (a wheel's and the CUDA
    toolkit's); call after both have run a step.
    """
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "libcublasLt" in line})
    except OSError as e:
        return {"error": _unknown(e)}
    versions = {}
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            lib.cublasLtGetVersion.restype = ctypes.c_size_t
            v = lib.cublasLtGetVersion()
            versions[path] = f"{v // 10000}.{v // 100 % 100}.{v % 100}"
        except Exception as e:
            versions[path] = _unknown(e)
    return versions or {"error": "unknown: no libcublasLt loaded"}


def _driver():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        return out.strip().splitlines()[0]
    except Exception as e:
        return _unknown(e)


def environment(repo, bundles):
    """The device and software of this run (call after the GPU has been used)."""
    import torch
    env = {"python": platform.python_version(), "host": platform.node(),
           "torch": torch.__version__, "cuda (torch)": torch.version.cuda,
           "dmc commit": git_commit(repo), "bundles built at": bundle_stamp(bundles)}
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception as e:
        env["triton"] = _unknown(e)
    try:
        env["cudnn"] = torch.backends.cudnn.version()
        env["preferred blas (torch.backends.cuda)"] = str(
            torch.backends.cuda.preferred_blas_library())
    except Exception as e:
        env["preferred blas (torch.backends.cuda)"] = _unknown(e)
    env["cublasLt loaded"] = cublaslt_versions()
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env["device"] = p.name
        env["compute capability"] = f"{p.major}.{p.minor}"
        env["sm count"] = p.multi_processor_count
        env["device memory GiB"] = round(p.total_memory / 2**30, 1)
        env["driver"] = _driver()
    return env


def short_device(env):
    """'NVIDIA H100 80GB HBM3' -> 'H100 80GB HBM3' (for titles)."""
    return re.sub(r"^NVIDIA\s+", "", env.get("device", "unknown device"))
