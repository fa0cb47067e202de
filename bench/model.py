"""A benchmark case: one dmc model description (bench/cases/*.json), its sizes,
the shapes of its caller tensors and the flop of its contractions.

Pure Python (no torch): the CPU tests check the flop count against a hand count and
against `dmc graph --emit=summary`.

Flop convention: every contraction (GEMM) of the layer, attention's two included, at
2*M*N*K; causal attention is counted in full (as the dense GEMMs dmc runs, not the
half a causal kernel skips); the backward pass is twice the forward (two GEMMs per
forward GEMM: one per operand gradient). Elementwise and normalization flop are left
out (under 0.5% of a step for every case here).
"""

import json
import os
from dataclasses import dataclass

KINDS = ("encoder", "decoder", "gpt")


@dataclass(frozen=True)
class Case:
    name: str
    path: str
    kind: str
    batch: int
    seq: int
    memory_seq: int  # 0 unless kind == "decoder"
    hidden: int
    heads: int
    head_dim: int
    ffn: int
    bias: bool
    dtype: str
    dropout: object  # the model's `dropout` field as written
    description: str


def load_case(path):
    """Reads one model description; raises ValueError naming the file and field."""
    try:
        with open(path) as f:
            model = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read the model description: {e}") from None

    def need(field):
        if field not in model:
            raise ValueError(f"{path}: missing field '{field}'")
        value = model[field]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{path}: '{field}' must be an integer >= 1, got {value!r}")
        return value

    kind = model.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{path}: 'kind' must be one of {KINDS}, got {kind!r}")
    if int(model.get("layers", 1)) != 1:
        raise ValueError(f"{path}: the benchmark times one layer ('layers' must be 1)")
    hidden, heads = need("hidden"), need("heads")
    if "head_dim" in model:
        head_dim = need("head_dim")
    elif hidden % heads:
        raise ValueError(f"{path}: hidden {hidden} is not divisible by heads {heads}")
    else:
        head_dim = hidden // heads
    name = model.get("name") or os.path.splitext(os.path.basename(path))[0]
    return Case(name=name, path=os.path.abspath(path), kind=kind, batch=need("batch"),
                seq=need("seq"), memory_seq=need("memory_seq") if kind == "decoder" else 0,
                hidden=hidden, heads=heads, head_dim=head_dim, ffn=need("ffn"),
                bias=bool(model.get("bias", True)), dtype=model.get("dtype", "bf16"),
                dropout=model.get("dropout", 0.0), description=model.get("description", ""))


def load_cases(directory, names=None):
    """Cases of `directory` (sorted by file name), or the ones named, in that order."""
    available = {os.path.splitext(f)[0]: os.path.join(directory, f)
                 for f in sorted(os.listdir(directory)) if f.endswith(".json")}
    if names is None:
        names = list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ValueError(f"unknown case(s) {', '.join(unknown)}; "
                         f"available: {', '.join(available)}")
    return [load_case(available[n]) for n in names]


def gemms(case):
    """The forward contractions as (label, M, N, K): C[M,N] = A[M,K] B[K,N]."""
    b, lq, i, h, p, u = case.batch, case.seq, case.hidden, case.heads, case.head_dim, case.ffn
    hp = h * p
    out = []

    def attention(prefix, keys):
        out.extend([(f"{prefix}.q", b * lq, hp, i), (f"{prefix}.k", b * keys, hp, i),
                    (f"{prefix}.v", b * keys, hp, i),
                    # per (batch, head): scores [lq, keys] and weighted values [lq, p]
                    (f"{prefix}.scores", b * h * lq, keys, p),
                    (f"{prefix}.weighted", b * h * lq, p, keys),
                    (f"{prefix}.o", b * lq, i, hp)])

    attention("attn", lq)
    if case.kind == "decoder":
        attention("cross", case.memory_seq)
    out.extend([("ffn.w1", b * lq, u, i), ("ffn.w2", b * lq, i, u)])
    return out


def flop(case):
    """{'forward', 'backward', 'step'}: flop of the contractions of one training step."""
    forward = sum(2 * m * n * k for _, m, n, k in gemms(case))
    return {"forward": forward, "backward": 2 * forward, "step": 3 * forward}


def caller_shapes(case):
    """Shapes of the inputs and parameters a bundle of this case must have (name -> shape)."""
    b, lq, i, h, p, u = case.batch, case.seq, case.hidden, case.heads, case.head_dim, case.ffn
    shapes = {"x": [b, lq, i]}
    if case.kind == "decoder":
        shapes["memory"] = [b, case.memory_seq, i]
    for prefix in ["attn"] + (["cross"] if case.kind == "decoder" else []):
        for w in "qkv":
            shapes[f"{prefix}.w{w}"] = [h, p, i]
            if case.bias:
                shapes[f"{prefix}.b{w}"] = [h, p]
        shapes[f"{prefix}.wo"] = [i, h, p]
        if case.bias:
            shapes[f"{prefix}.bo"] = [i]
    shapes.update({"ffn.w1": [u, i], "ffn.w2": [i, u]})
    if case.bias:
        shapes.update({"ffn.b1": [u], "ffn.b2": [i]})
    for n in range(1, 4 if case.kind == "decoder" else 3):
        shapes[f"ln{n}.gamma"] = [i]
        shapes[f"ln{n}.beta"] = [i]
    return shapes


def check_bundle(case, bundle):
    """Raises ValueError unless `bundle`'s manifest was compiled from this case.

    Compares the model name, and the name, shape and dtype of every input and parameter,
    so a stale bundle (a case edited after make-bundles.sh) is refused by name.
    """
    manifest_path = os.path.join(bundle, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{manifest_path}: cannot read the bundle manifest ({e}); "
                         f"run tests/gpu/make-bundles.sh") from None
    if manifest.get("model") != case.name:
        raise ValueError(f"{bundle}: compiled from model '{manifest.get('model')}', "
                         f"not '{case.name}'")
    tensors = {t["name"]: t for t in manifest.get("tensors", [])
               if t.get("role") in ("input", "param")}
    expected = caller_shapes(case)
    if set(tensors) != set(expected):
        raise ValueError(f"{bundle}: inputs and parameters {sorted(tensors)} differ from "
                         f"the case's {sorted(expected)} (stale bundle: rerun make-bundles.sh)")
    for name, shape in expected.items():
        got = tensors[name]
        if got.get("shape") != shape or got.get("dtype") != case.dtype:
            raise ValueError(f"{bundle}: tensor {name} is {got.get('dtype')} "
                             f"{got.get('shape')}, the case needs {case.dtype} {shape} "
                             f"(stale bundle: rerun make-bundles.sh)")
