"""Tiny CLI over tests/oracle/safetensors_io.py for lit tests.

  st.py list FILE                 one line per tensor: name dtype shape dims
  st.py maxdiff A B NAME          max |A[NAME] - B[NAME]|
  st.py differ A B                names of the tensors whose bits differ (or "none")
  st.py close A B RTOL [SKIP..]   tensors (but SKIP) where max|A-B| > RTOL * max|A| (or "none"), and
                                  the worst ratio; a tensor of zeros in A is listed as "zero"
  st.py write FILE NAME:DIMS:SHAPE[,..] ...   zeros of float32 (DIMS into metadata; '-' for none)
  st.py inexact FILE bf16|fp16    per float tensor: how many values that type cannot hold exactly
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.environ["ORACLE_DIR"])
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402


def main(argv):
    cmd = argv[0]
    if cmd == "list":
        f = read_safetensors(argv[1])
        for name, array in f.tensors.items():
            print(name, f.dtypes[name], list(array.shape), f.metadata.get("dims." + name, "-"))
    elif cmd == "maxdiff":
        a = read_safetensors(argv[1]).tensors
        b = read_safetensors(argv[2]).tensors
        print("maxdiff %.3g" % float(np.max(np.abs(a[argv[3]] - b[argv[3]]))))
    elif cmd == "differ":
        a = read_safetensors(argv[1]).tensors
        b = read_safetensors(argv[2]).tensors
        assert sorted(a) == sorted(b), "different tensors"
        names = [n for n in sorted(a) if a[n].tobytes() != b[n].tobytes()]
        print("tensors", len(a), "differ:", " ".join(names) if names else "none")
    elif cmd == "close":
        a = read_safetensors(argv[1]).tensors
        b = read_safetensors(argv[2]).tensors
        assert sorted(a) == sorted(b), "different tensors"
        rtol, bad, worst, skip = float(argv[3]), [], 0.0, set(argv[4:])
        assert skip <= set(a), "unknown tensors to skip"
        for n in sorted(a):
            if n in skip:
                continue
            x = np.asarray(a[n], dtype=np.float64)
            y = np.asarray(b[n], dtype=np.float64)
            scale = float(np.max(np.abs(x))) if x.size else 0.0
            if scale == 0.0:
                bad.append(n + "(zero)")
                continue
            ratio = float(np.max(np.abs(x - y))) / scale
            worst = max(worst, ratio)
            if ratio > rtol:
                bad.append(n)
        print("tensors", len(a), "beyond", argv[3] + ":", " ".join(bad) if bad else "none")
        print("worst %.3g" % worst)
    elif cmd == "write":
        tensors, meta = {}, {}
        for spec in argv[2:]:
            name, dims, shape = spec.split(":")
            tensors[name] = np.zeros([int(s) for s in shape.split(",")], dtype=np.float32)
            if dims != "-":
                meta["dims." + name] = dims
        write_safetensors(argv[1], tensors, meta)
    elif cmd == "inexact":
        f = read_safetensors(argv[1])
        narrow = np.float16 if argv[2] == "fp16" else None
        for name, array in f.tensors.items():
            if not np.issubdtype(array.dtype, np.floating):
                continue
            a = np.asarray(array, dtype=np.float32)
            if narrow is not None:
                bad = np.sum(a.astype(narrow).astype(np.float32) != a)
            else:  # bf16: the low 16 bits of the float32 are zero
                bad = np.sum((a.view(np.uint32) & 0xFFFF) != 0)
            print("inexact %s %d" % (name, int(bad)))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
