"""A plain-PyTorch layer from a dmc model description: the baselines' model.

A stand-in for `dmc.torch.reference_layer` (python/dmc), used only when that package
is not importable: eager PyTorch, attention through
`torch.nn.functional.scaled_dot_product_attention`, the semantics of
examples/README.md (post- or pre-LN, dropout on the attention weights, after the FFN
activation and on each residual branch) and dmc's parameter names and layouts
(`attn.wq` [h,p,i], `ffn.w1` [u,i], `ln1.gamma` [i], ...), so that
`named_parameters()` lists the same names as the compiled layer. Dropout masks are
PyTorch's own (not dmc's Philox masks): for timing only. Key padding is not modelled
(the benchmark cases have none).

    layer = reference_layer("bench/cases/bert-base-b32-l128.json")
    y = layer(x)                    # x [b, j, i]
    y = layer(x, memory=m)          # decoder
"""

import json
import math

import torch
import torch.nn.functional as F
from torch import nn

_ACTIVATIONS = {"gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
                "relu": F.relu}
_DEFAULTS = {"encoder": ("gelu", "post"), "decoder": ("relu", "post"), "gpt": ("gelu_tanh", "pre")}
_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def _rates(dropout):
    if isinstance(dropout, (int, float)):
        return float(dropout), float(dropout), float(dropout)
    return tuple(float(dropout.get(k, 0.0)) for k in ("attention", "hidden", "activation"))


def _uniform(shape, bound, center=0.0):
    return nn.Parameter(center + bound * (2 * torch.rand(shape) - 1))


class Attention(nn.Module):
    """wq, wk, wv [h,p,i], bq, bk, bv [h,p], wo [i,h,p], bo [i]."""

    def __init__(self, hidden, heads, head_dim, bias):
        super().__init__()
        self.heads, self.head_dim, self.bias = heads, head_dim, bias
        for w in "qkv":
            setattr(self, f"w{w}", _uniform((heads, head_dim, hidden), 1 / math.sqrt(hidden)))
            if bias:
                setattr(self, f"b{w}", _uniform((heads, head_dim), 0.1))
        self.wo = _uniform((hidden, heads, head_dim), 1 / math.sqrt(heads * head_dim))
        if bias:
            self.bo = _uniform((hidden,), 0.1)

    def _project(self, t, name):
        w = getattr(self, f"w{name}").flatten(0, 1)  # [h*p, i]: nn.Linear's layout
        b = getattr(self, f"b{name}").flatten() if self.bias else None
        out = F.linear(t, w, b)  # [b, n, h*p]
        return out.unflatten(-1, (self.heads, self.head_dim)).transpose(1, 2)  # [b, h, n, p]

    def forward(self, xq, xkv, causal, dropout_p):
        q, k, v = self._project(xq, "q"), self._project(xkv, "k"), self._project(xkv, "v")
        o = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=causal)
        o = o.transpose(1, 2).flatten(2)  # [b, j, h*p]
        return F.linear(o, self.wo.flatten(1), self.bo if self.bias else None)


class FeedForward(nn.Module):
    """w1 [u,i], b1 [u], w2 [i,u], b2 [i]."""

    def __init__(self, hidden, ffn, bias, activation):
        super().__init__()
        self.bias, self.activation = bias, _ACTIVATIONS[activation]
        self.w1 = _uniform((ffn, hidden), 1 / math.sqrt(hidden))
        self.w2 = _uniform((hidden, ffn), 1 / math.sqrt(ffn))
        if bias:
            self.b1, self.b2 = _uniform((ffn,), 0.1), _uniform((hidden,), 0.1)

    def forward(self, t, dropout_p, training):
        h = self.activation(F.linear(t, self.w1, self.b1 if self.bias else None))
        h = F.dropout(h, dropout_p, training)
        return F.linear(h, self.w2, self.b2 if self.bias else None)


class LayerNorm(nn.Module):
    """gamma, beta [i]."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.gamma = _uniform((hidden,), 0.1, center=1.0)
        self.beta = _uniform((hidden,), 0.1)

    def forward(self, t):
        return F.layer_norm(t, t.shape[-1:], self.gamma, self.beta, self.eps)


class ReferenceLayer(nn.Module):
    def __init__(self, model):
        super().__init__()
        kind = model["kind"]
        if kind not in _DEFAULTS:
            raise ValueError(f"unknown layer kind {kind!r}")
        if model.get("key_padding") or int(model.get("layers", 1)) != 1:
            raise ValueError("the stand-in reference layer models one layer without key padding")
        activation, norm = _DEFAULTS[kind]
        self.kind, self.norm = kind, model.get("norm", norm)
        self.p_attention, self.p_hidden, self.p_activation = _rates(model.get("dropout", 0.0))
        hidden, heads = model["hidden"], model["heads"]
        head_dim, bias = model.get("head_dim", hidden // heads), model.get("bias", True)
        self.attn = Attention(hidden, heads, head_dim, bias)
        if kind == "decoder":
            self.cross = Attention(hidden, heads, head_dim, bias)
        self.ffn = FeedForward(hidden, model["ffn"], bias, model.get("activation", activation))
        eps = model.get("layernorm_eps", 1e-5)
        for n in range(1, 4 if kind == "decoder" else 3):
            setattr(self, f"ln{n}", LayerNorm(hidden, eps))
        self.to(_DTYPES[model.get("dtype", "bf16")])

    def forward(self, x, memory=None):
        if (memory is None) != (self.kind != "decoder"):
            raise ValueError("a decoder layer takes memory; other layers do not")
        train = self.training
        p_att = self.p_attention if train else 0.0
        blocks = [lambda t: self.attn(t, t, self.kind != "encoder", p_att)]
        if self.kind == "decoder":
            blocks.append(lambda t: self.cross(t, memory, False, p_att))
        blocks.append(lambda t: self.ffn(t, self.p_activation, train))
        h = x
        for n, block in enumerate(blocks, start=1):
            ln = getattr(self, f"ln{n}")
            if self.norm == "post":
                h = ln(h + F.dropout(block(h), self.p_hidden, train))
            else:
                h = h + F.dropout(block(ln(h)), self.p_hidden, train)
        return h


def reference_layer(model_json_path):
    """The plain-PyTorch layer of a model description (on the CPU; move it with .to)."""
    with open(model_json_path) as f:
        return ReferenceLayer(json.load(f))
