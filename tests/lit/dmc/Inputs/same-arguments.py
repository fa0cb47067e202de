"""same-arguments.py ORACLE_DIR RUN EVAL: every tensor of RUN (dmc-run's
arguments) equals EVAL's tensor of that name bit for bit. Prints the count,
or the first difference (exit 1)."""
import sys

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402
import safetensors_io as io  # noqa: E402

run_t = io.read_safetensors(sys.argv[2]).tensors
ev_t = io.read_safetensors(sys.argv[3]).tensors
for name, value in run_t.items():
    if name not in ev_t:
        print(f"{name}: not in {sys.argv[3]}")
        sys.exit(1)
    a, b = np.asarray(value), np.asarray(ev_t[name])
    if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b):
        print(f"{name} differs: {a.dtype}{a.shape} vs {b.dtype}{b.shape}")
        sys.exit(1)
print(f"arguments identical: {len(run_t)}")
