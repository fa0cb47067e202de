"""Independent PyTorch reference for dmc transformer layers, forward and backward.

Written from the `dmc eval` model contract only, not from dmc's code. Dimension letters:
b batch, j query position, k self-attention key position, m memory position, i hidden,
h heads, p head dim, u FFN.

Dropout uses the counter-based masks documented in examples/README.md ("Dropout masks"),
recomputed by philox.py; a key row with every key masked gets zero attention weights
(the defined result, see examples/README.md "Masks"), not the NaN of a plain softmax.
"""

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from philox import Layout, dropout_keep
from safetensors_io import to_torch

_KINDS = ("encoder", "decoder", "gpt")
# kind -> (default activation, default norm placement)
_DEFAULTS = {"encoder": ("gelu", "post"), "decoder": ("relu", "post"), "gpt": ("gelu_tanh", "pre")}
_ACTIVATIONS = {
    "gelu": lambda t: F.gelu(t),
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "relu": F.relu,
}


_DROPOUT_KINDS = ("attention", "hidden", "activation")


def _dropout_rates(dropout):
    """(attention, hidden, activation) probabilities from a model's `dropout` field."""
    if isinstance(dropout, (int, float)):
        rates = {kind: float(dropout) for kind in _DROPOUT_KINDS}
    elif isinstance(dropout, dict):
        unknown = set(dropout) - set(_DROPOUT_KINDS)
        if unknown:
            raise ValueError(f"unknown dropout fields {sorted(unknown)}")
        rates = {kind: float(dropout.get(kind, 0.0)) for kind in _DROPOUT_KINDS}
    else:
        raise ValueError(f"dropout must be a number or an object, got {dropout!r}")
    if not all(0.0 <= p < 1.0 for p in rates.values()):
        raise ValueError(f"dropout probabilities must be in [0, 1): {rates}")
    return tuple(rates[kind] for kind in _DROPOUT_KINDS)


@dataclass(frozen=True)
class LayerConfig:
    """The fields of a dmc model JSON that determine the layer's math."""

    kind: str
    batch: int
    seq: int
    memory_seq: int
    hidden: int
    heads: int
    head_dim: int
    ffn: int
    activation: str
    norm: str
    eps: float
    bias: bool
    key_padding: bool
    dropout: tuple = (0.0, 0.0, 0.0)  # attention, hidden, activation

    @classmethod
    def from_json(cls, model):
        """Builds a config from a parsed model JSON, applying the documented defaults.

        Raises ValueError for models whose fields are invalid.
        """
        kind = model.get("kind")
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        activation, norm = _DEFAULTS[kind]
        activation = model.get("activation", activation)
        norm = model.get("norm", norm)
        if activation not in _ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}")
        if norm not in ("pre", "post"):
            raise ValueError(f"norm must be 'pre' or 'post', got {norm!r}")
        if int(model.get("layers", 1)) != 1:
            raise ValueError("the oracle models one layer")
        hidden, heads = int(model["hidden"]), int(model["heads"])
        if "head_dim" not in model and hidden % heads:
            raise ValueError(f"hidden {hidden} is not divisible by heads {heads}")
        config = cls(
            kind=kind,
            batch=int(model["batch"]),
            seq=int(model["seq"]),
            memory_seq=int(model["memory_seq"]) if kind == "decoder" else 0,
            hidden=hidden,
            heads=heads,
            head_dim=int(model.get("head_dim", hidden // heads)),
            ffn=int(model["ffn"]),
            activation=activation,
            norm=norm,
            eps=float(model.get("layernorm_eps", 1e-5)),
            bias=bool(model.get("bias", True)),
            key_padding=bool(model.get("key_padding", False)),
            dropout=_dropout_rates(model.get("dropout", 0.0)),
        )
        if min(config.sizes().values()) <= 0:
            raise ValueError(f"all sizes must be positive: {config.sizes()}")
        return config

    @property
    def has_dropout(self):
        return any(p > 0.0 for p in self.dropout)

    def sizes(self):
        """Maps each dimension letter to its extent."""
        sizes = {"b": self.batch, "j": self.seq, "k": self.seq, "i": self.hidden,
                 "h": self.heads, "p": self.head_dim, "u": self.ffn}
        if self.kind == "decoder":
            sizes["m"] = self.memory_seq
        return sizes

    def shape(self, dims):
        """The shape of a tensor stored with dimension letters `dims`."""
        sizes = self.sizes()
        return tuple(sizes[letter] for letter in dims)


def _attention_parameters(prefix, bias):
    names = {f"{prefix}.wq": "hpi", f"{prefix}.bq": "hp", f"{prefix}.wk": "hpi",
             f"{prefix}.bk": "hp", f"{prefix}.wv": "hpi", f"{prefix}.bv": "hp",
             f"{prefix}.wo": "ihp", f"{prefix}.bo": "i"}
    return {name: dims for name, dims in names.items() if bias or not _is_bias(name)}


def _is_bias(name):
    """True for the linear biases that `bias: false` removes (LayerNorm beta stays)."""
    return name.rsplit(".", 1)[-1] in ("bq", "bk", "bv", "bo", "b1", "b2")


def float_input_dims(config):
    """Float inputs that receive gradients: name -> dims."""
    dims = {"x": "bji"}
    if config.kind == "decoder":
        dims["memory"] = "bmi"
    return dims


def length_input_dims(config):
    """I32 key-padding length inputs: name -> dims (empty without key padding)."""
    if not config.key_padding:
        return {}
    return {"memory_lengths": "b"} if config.kind == "decoder" else {"lengths": "b"}


def parameter_dims(config):
    """All parameters of the layer, in a fixed order: name -> dims."""
    dims = dict(_attention_parameters("attn", config.bias))
    if config.kind == "decoder":
        dims.update(_attention_parameters("cross", config.bias))
    ffn = {"ffn.w1": "ui", "ffn.b1": "u", "ffn.w2": "iu", "ffn.b2": "i"}
    dims.update({name: d for name, d in ffn.items() if config.bias or not _is_bias(name)})
    for index in range(1, 4 if config.kind == "decoder" else 3):
        dims[f"ln{index}.gamma"] = "i"
        dims[f"ln{index}.beta"] = "i"
    return dims


class _Dropout:
    """Applies dmc's dropout ops in the order the frontend numbers them (ids 0, 1, ...).

    Only ops with p > 0 exist and take an id; within a layer, in order of evaluation: the
    attention weights [b,h,j,k or m] of each attention block, the FFN activation [b,j,u],
    and each residual branch [b,j,i] just before its addition (a block's inner dropout
    comes before its residual's).
    """

    def __init__(self, seed, layout):
        self.seed, self.layout, self.next_id = seed, layout, 0

    def __call__(self, t, p):
        if p == 0.0:
            return t
        if self.seed is None:
            raise ValueError("a model with dropout needs the run's seed")
        keep = dropout_keep(self.seed, self.next_id, p, tuple(t.shape), self.layout)
        self.next_id += 1
        return t * torch.from_numpy(keep).to(device=t.device, dtype=t.dtype) * (1.0 / (1.0 - p))


def _attention(params, prefix, xq, xkv, config, causal, lengths, dropout):
    """Multi-head attention of queries from xq [b,j,i] over keys/values from xkv [b,n,i]."""

    def project(x, name):
        out = torch.einsum("bni,hpi->bnhp", x, params[f"{prefix}.w{name}"])
        return out + params[f"{prefix}.b{name}"] if config.bias else out

    q, k, v = project(xq, "q"), project(xkv, "k"), project(xkv, "v")
    scores = torch.einsum("bjhp,bnhp->bhjn", q, k) / math.sqrt(config.head_dim)
    queries, keys = scores.shape[-2], scores.shape[-1]
    key_index = torch.arange(keys, device=scores.device)
    masked = torch.zeros(scores.shape[0], 1, queries, keys, dtype=torch.bool, device=scores.device)
    if causal:
        query_index = torch.arange(queries, device=scores.device)
        masked |= (key_index[None, :] > query_index[:, None])[None, None]
    if lengths is not None:
        masked |= (key_index[None, :] >= lengths[:, None].long())[:, None, None, :]
    # A row whose keys are all masked has zero weights (dmc's defined result; a plain
    # softmax would give NaN): softmax over unmasked scores, then zero such rows.
    empty = masked.all(dim=-1, keepdim=True)
    scores = scores.masked_fill(masked, float("-inf")).masked_fill(empty, 0.0)
    weights = torch.softmax(scores, dim=-1) * (~empty).to(scores.dtype)
    weights = dropout(weights, config.dropout[0])
    heads = torch.einsum("bhjn,bnhp->bjhp", weights, v)
    out = torch.einsum("bjhp,ihp->bji", heads, params[f"{prefix}.wo"])
    return out + params[f"{prefix}.bo"] if config.bias else out


def _ffn(params, x, config, dropout):
    hidden = torch.einsum("bji,ui->bju", x, params["ffn.w1"])
    if config.bias:
        hidden = hidden + params["ffn.b1"]
    activated = dropout(_ACTIVATIONS[config.activation](hidden), config.dropout[2])
    out = torch.einsum("bju,iu->bji", activated, params["ffn.w2"])
    return out + params["ffn.b2"] if config.bias else out


def _layer_norm(params, index, x, config):
    gamma, beta = params[f"ln{index}.gamma"], params[f"ln{index}.beta"]
    return F.layer_norm(x, (config.hidden,), gamma, beta, config.eps)


def forward(config, tensors, seed=None, layout=Layout()):
    """The layer's output y [b,j,i] from a dict of torch inputs and parameters.

    `seed` is the run's dropout seed (needed only with dropout); `layout` the dropout
    counter layout (the documented one unless a test plants a fault).
    """
    p = tensors
    dropout = _Dropout(seed, layout)
    causal = config.kind != "encoder"
    self_lengths = tensors.get("lengths")
    memory, cross_lengths = tensors.get("memory"), tensors.get("memory_lengths")

    def self_attention(t):
        return _attention(p, "attn", t, t, config, causal, self_lengths, dropout)

    def cross_attention(t):
        return _attention(p, "cross", t, memory, config, False, cross_lengths, dropout)

    blocks = [self_attention] + ([cross_attention] if config.kind == "decoder" else [])
    blocks.append(lambda t: _ffn(p, t, config, dropout))
    h = tensors["x"]
    for index, block in enumerate(blocks, start=1):
        if config.norm == "post":
            h = _layer_norm(p, index, h + dropout(block(h), config.dropout[1]), config)
        else:
            h = h + dropout(block(_layer_norm(p, index, h, config)), config.dropout[1])
    return h


def reference(config, arrays, seed=None, layout=Layout(), dtype=torch.float64, device="cpu"):
    """Computes y and the gradient of sum(y * dy) from numpy inputs.

    `arrays` holds every float input, length input, parameter and `dy`; `seed` is the
    dropout seed of the run. The computation runs in `dtype` on `device` (the oracle:
    float64 on the CPU; the GPU check against a compiled layer: float32 on "cuda").
    Returns numpy float64 arrays: "y" and "<name>.grad" for every float input and
    parameter. Raises ValueError if any of them is not finite.
    """
    differentiable = list(float_input_dims(config)) + list(parameter_dims(config))
    tensors = {name: to_torch(arrays[name]).to(device=device, dtype=dtype).requires_grad_()
               for name in differentiable}
    for name in length_input_dims(config):
        tensors[name] = to_torch(arrays[name]).to(device).long()
    y = forward(config, tensors, seed, layout)
    y.backward(to_torch(arrays["dy"]).to(device=device, dtype=dtype))
    results = {"y": y.detach().cpu().double().numpy()}
    for name in differentiable:
        results[f"{name}.grad"] = tensors[name].grad.cpu().double().numpy()
    for name, value in results.items():
        if not np.all(np.isfinite(value)):
            raise ValueError(f"the PyTorch reference {name} is not finite")
    return results
