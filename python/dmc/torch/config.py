"""The model description (model.json, examples/README.md) as dmc.torch needs it.

Defaults and checks follow compiler/ModelConfig.cpp: kind decides the default activation
and norm placement; a number for `dropout` sets all three rates; `layers` > 1 prefixes
parameter names with `layer<n>.`. This is not a second validator of model files: the
compiler rejects bad ones with its own messages; here a bad field is a ValueError.
"""

import json
from dataclasses import dataclass

KINDS = ("encoder", "decoder", "gpt")
DEFAULTS = {"encoder": ("gelu", "post"), "decoder": ("relu", "post"), "gpt": ("gelu_tanh", "pre")}
ACTIVATIONS = ("gelu", "gelu_tanh", "relu")
DTYPES = ("bf16", "f16", "f32")
_DROPOUT_KINDS = ("attention", "hidden", "activation")


def _dropout(value):
    if isinstance(value, (int, float)):
        rates = {k: float(value) for k in _DROPOUT_KINDS}
    elif isinstance(value, dict):
        unknown = sorted(set(value) - set(_DROPOUT_KINDS))
        if unknown:
            raise ValueError(f"dropout: unknown fields {unknown} (allowed: {_DROPOUT_KINDS})")
        rates = {k: float(value.get(k, 0.0)) for k in _DROPOUT_KINDS}
    else:
        raise ValueError(f"dropout must be a number or an object, got {value!r}")
    for k, p in rates.items():
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout.{k} = {p}: must be in [0, 1)")
    return tuple(rates[k] for k in _DROPOUT_KINDS)


@dataclass(frozen=True)
class ModelConfig:
    kind: str
    hidden: int
    heads: int
    head_dim: int
    ffn: int
    activation: str
    norm: str
    eps: float
    bias: bool
    key_padding: bool
    dropout: tuple  # (attention, hidden, activation)
    layers: int
    dtype: str
    name: str

    @classmethod
    def from_dict(cls, m):
        kind = m.get("kind")
        if kind not in KINDS:
            raise ValueError(f"kind: {kind!r} (allowed: {KINDS})")
        activation, norm = DEFAULTS[kind]
        activation, norm = m.get("activation", activation), m.get("norm", norm)
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation: {activation!r} (allowed: {ACTIVATIONS})")
        if norm not in ("pre", "post"):
            raise ValueError(f"norm: {norm!r} (allowed: 'pre', 'post')")
        dtype = m.get("dtype", "bf16")
        if dtype not in DTYPES:
            raise ValueError(f"dtype: {dtype!r} (allowed: {DTYPES})")
        hidden, heads = int(m["hidden"]), int(m["heads"])
        if "head_dim" not in m and hidden % heads:
            raise ValueError(f"hidden {hidden} is not divisible by heads {heads}")
        return cls(kind=kind, hidden=hidden, heads=heads,
                   head_dim=int(m.get("head_dim", hidden // max(heads, 1))),
                   ffn=int(m["ffn"]), activation=activation, norm=norm,
                   eps=float(m.get("layernorm_eps", 1e-5)), bias=bool(m.get("bias", True)),
                   key_padding=bool(m.get("key_padding", False)),
                   dropout=_dropout(m.get("dropout", 0.0)), layers=int(m.get("layers", 1)),
                   dtype=dtype, name=str(m.get("name", "layer")))

    @classmethod
    def load(cls, path):
        with open(path) as f:
            try:
                return cls.from_dict(json.load(f))
            except (KeyError, ValueError, TypeError) as e:
                what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
                raise ValueError(f"{path}: {what}") from None

    def sizes(self):
        return {"i": self.hidden, "h": self.heads, "p": self.head_dim, "u": self.ffn}

    def prefixes(self):
        """Parameter name prefix of each layer: [""] or ["layer0.", "layer1.", ...]."""
        return [""] if self.layers == 1 else [f"layer{n}." for n in range(self.layers)]

    def input_names(self):
        """Keyword inputs of forward besides x, in the bundle's names."""
        names = ["memory"] if self.kind == "decoder" else []
        if self.key_padding:
            names.append("memory_lengths" if self.kind == "decoder" else "lengths")
        return names

    def parameter_dims(self):
        """Every parameter: name -> dims (the order of examples/README.md)."""
        out = {}
        for prefix in self.prefixes():
            blocks = ["attn", "cross"] if self.kind == "decoder" else ["attn"]
            for b in blocks:
                for w in "qkv":
                    out[f"{prefix}{b}.w{w}"] = "hpi"
                    if self.bias:
                        out[f"{prefix}{b}.b{w}"] = "hp"
                out[f"{prefix}{b}.wo"] = "ihp"
                if self.bias:
                    out[f"{prefix}{b}.bo"] = "i"
            out[f"{prefix}ffn.w1"], out[f"{prefix}ffn.w2"] = "ui", "iu"
            if self.bias:
                out[f"{prefix}ffn.b1"], out[f"{prefix}ffn.b2"] = "u", "i"
            for n in range(1, 4 if self.kind == "decoder" else 3):
                out[f"{prefix}ln{n}.gamma"] = out[f"{prefix}ln{n}.beta"] = "i"
        return out

    def parameter_shapes(self):
        sizes = self.sizes()
        return {n: tuple(sizes[c] for c in d) for n, d in self.parameter_dims().items()}
