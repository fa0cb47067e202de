"""A plain-PyTorch layer from a model description: the baseline next to dmc.torch.Layer.

dmc.torch.reference_layer(model_json_path) has the same parameter names and shapes as a
bundle compiled from that file and the semantics of examples/README.md (the same outputs
as tests/oracle/layers.py with dropout off): eager PyTorch, attention through
torch.nn.functional.scaled_dot_product_attention (a math fallback with the same result
where PyTorch < 2.0 lacks it), dropout from torch's own RNG when training (its masks
differ from dmc's Philox masks; the rates and the 1/(1-p) scaling are the same).
A row whose keys are all masked (length 0) gets zero attention weights, as in dmc.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from . import params as P
from .config import ModelConfig

_ACT = {"gelu": F.gelu, "relu": F.relu,
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}
_SDPA = getattr(F, "scaled_dot_product_attention", None)


def _sdpa(q, k, v, allowed, p):
    """q [b,h,j,d], k/v [b,h,n,d], allowed [b,1,j,n] bool; dropout p on the weights."""
    if _SDPA is not None:
        return _SDPA(q, k, v, attn_mask=allowed, dropout_p=p)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    w = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
    return F.dropout(w, p) @ v if p > 0 else w @ v


class ReferenceLayer(nn.Module):
    """forward(x, lengths=None, memory=None, memory_lengths=None, seed=None) -> y.

    `seed` is accepted for the signature of dmc.torch.Layer and ignored (torch's RNG
    draws the dropout masks). Parameters: fp32 on the CPU, initialised as params.py
    says; move and cast with .to().
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        shapes, dims = config.parameter_shapes(), config.parameter_dims()
        base = P.draw_base_seed()
        for name, shape in shapes.items():
            values = P.init_values(name, dims[name], shape, config.sizes(), base)
            P.register(self, name, nn.Parameter(values))

    def p(self, name):
        return P.lookup(self, name)

    def forward(self, x, lengths=None, memory=None, memory_lengths=None, seed=None):
        c = self.config
        given = {"lengths": lengths, "memory": memory, "memory_lengths": memory_lengths}
        wanted = set(c.input_names())
        for name, value in given.items():
            if (value is None) == (name in wanted):
                raise ValueError(f"input {name!r} is {'missing' if value is None else 'not an input'}"
                                 f" of this {c.kind} layer (inputs: {['x'] + sorted(wanted)})")
        rates = c.dropout if self.training else (0.0, 0.0, 0.0)
        for prefix in c.prefixes():
            x = self._layer(prefix, x, memory, lengths, memory_lengths, rates)
        return x

    def _layer(self, pre, x, memory, lengths, memory_lengths, rates):
        c = self.config
        causal = c.kind != "encoder"
        blocks = [lambda t: self._attention(pre + "attn", t, t, causal, lengths, rates[0])]
        if c.kind == "decoder":
            blocks.append(lambda t: self._attention(pre + "cross", t, memory, False,
                                                    memory_lengths, rates[0]))
        blocks.append(lambda t: self._ffn(pre, t, rates[2]))
        for n, block in enumerate(blocks, start=1):
            ln = (self.p(f"{pre}ln{n}.gamma"), self.p(f"{pre}ln{n}.beta"))
            if c.norm == "post":
                x = F.layer_norm(x + F.dropout(block(x), rates[1], self.training),
                                 (c.hidden,), *ln, c.eps)
            else:
                h = F.layer_norm(x, (c.hidden,), *ln, c.eps)
                x = x + F.dropout(block(h), rates[1], self.training)
        return x

    def _linear(self, x, w, b):
        """x [..., in] times w [out..., in...] (dims as stored) plus b."""
        return F.linear(x, w.reshape(-1, x.shape[-1]), None if b is None else b.reshape(-1))

    def _attention(self, pre, xq, xkv, causal, lengths, p):
        c = self.config
        bias = (lambda n: self.p(f"{pre}.b{n}")) if c.bias else (lambda n: None)
        b, j, n = xq.shape[0], xq.shape[1], xkv.shape[1]

        def heads(x, w, length):  # [b, t, i] -> [b, h, t, p]
            out = self._linear(x, self.p(f"{pre}.w{w}"), bias(w))
            return out.view(b, length, c.heads, c.head_dim).transpose(1, 2)

        q, k, v = heads(xq, "q", j), heads(xkv, "k", n), heads(xkv, "v", n)
        p = p if self.training else 0.0
        if lengths is None and _SDPA is not None and (not causal or j == n):
            # No mask tensor: SDPA may pick its fused (flash / memory-efficient)
            # kernels, as a PyTorch user's layer would; no row is fully masked.
            o = _SDPA(q, k, v, dropout_p=p, is_causal=causal)
            return self._project_out(pre, o, b, j, bias)
        masked = torch.zeros(b, 1, j, n, dtype=torch.bool, device=xq.device)
        keys = torch.arange(n, device=xq.device)
        if causal:
            masked |= (keys[None, :] > torch.arange(j, device=xq.device)[:, None])[None, None]
        if lengths is not None:
            masked |= (keys[None, :] >= lengths.to(xq.device).long()[:, None])[:, None, None, :]
        empty = masked.all(dim=-1, keepdim=True)  # [b,1,j,1]: all keys masked
        o = _sdpa(q, k, v, ~masked | empty, p)
        o = o.masked_fill(empty, 0.0)  # zero weights: zero output, no gradient
        return self._project_out(pre, o, b, j, bias)

    def _project_out(self, pre, o, b, j, bias):
        """o [b, h, j, p] -> the attention block's output [b, j, i]."""
        c = self.config
        o = o.transpose(1, 2).reshape(b, j, c.heads * c.head_dim)
        wo = self.p(f"{pre}.wo")
        return F.linear(o, wo.reshape(c.hidden, -1), bias("o"))

    def _ffn(self, pre, x, p):
        c = self.config
        b1 = self.p(f"{pre}ffn.b1") if c.bias else None
        b2 = self.p(f"{pre}ffn.b2") if c.bias else None
        h = _ACT[c.activation](F.linear(x, self.p(f"{pre}ffn.w1"), b1))
        return F.linear(F.dropout(h, p, self.training), self.p(f"{pre}ffn.w2"), b2)


def reference_layer(model_json_path) -> nn.Module:
    """The plain-PyTorch layer (ReferenceLayer) of model description `model_json_path`."""
    return ReferenceLayer(ModelConfig.load(model_json_path))
