"""Cross-checks layers.py against PyTorch's own nn.TransformerEncoderLayer / DecoderLayer.

The oracle's reference is hand-written einsums; this confirms its semantics (projections,
masks, norm placement, activations) with an implementation it shares no code with. A model
without biases is compared with the nn layer's biases set to zero.
"""

import torch
import torch.nn.functional as F

from layers import float_input_dims, forward, parameter_dims

_NN_ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "relu": F.relu,
}


def _load_attention(module, params, prefix, config):
    """Copies dmc-layout attention weights into an nn.MultiheadAttention."""
    projected = config.heads * config.head_dim
    module.in_proj_weight.copy_(torch.cat(
        [params[f"{prefix}.w{n}"].reshape(projected, config.hidden) for n in "qkv"]))
    module.out_proj.weight.copy_(params[f"{prefix}.wo"].reshape(config.hidden, projected))
    if config.bias:
        module.in_proj_bias.copy_(torch.cat([params[f"{prefix}.b{n}"].reshape(-1) for n in "qkv"]))
        module.out_proj.bias.copy_(params[f"{prefix}.bo"])
    else:
        module.in_proj_bias.zero_()
        module.out_proj.bias.zero_()


def _nn_layer(config, params):
    """An nn transformer layer in float64 holding the same weights as `params`."""
    layer_class = torch.nn.TransformerDecoderLayer if config.kind == "decoder" \
        else torch.nn.TransformerEncoderLayer
    layer = layer_class(config.hidden, config.heads, config.ffn, dropout=0.0,
                        activation=_NN_ACTIVATIONS[config.activation],
                        layer_norm_eps=config.eps, batch_first=True,
                        norm_first=config.norm == "pre").double().train()
    with torch.no_grad():
        _load_attention(layer.self_attn, params, "attn", config)
        if config.kind == "decoder":
            _load_attention(layer.multihead_attn, params, "cross", config)
        for index, linear in ((1, layer.linear1), (2, layer.linear2)):
            linear.weight.copy_(params[f"ffn.w{index}"])
            if config.bias:
                linear.bias.copy_(params[f"ffn.b{index}"])
            else:
                linear.bias.zero_()
        norms = [layer.norm1, layer.norm2] + ([layer.norm3] if config.kind == "decoder" else [])
        for index, norm in enumerate(norms, start=1):
            norm.weight.copy_(params[f"ln{index}.gamma"])
            norm.bias.copy_(params[f"ln{index}.beta"])
    return layer


def _padding_mask(lengths, keys):
    return None if lengths is None else torch.arange(keys)[None, :] >= lengths[:, None]


def _nn_forward(config, layer, tensors):
    x = tensors["x"]
    causal = torch.triu(torch.full((config.seq, config.seq), float("-inf"),
                                   dtype=torch.float64), diagonal=1)
    if config.kind == "decoder":
        lengths = tensors.get("memory_lengths")
        return layer(x, tensors["memory"], tgt_mask=causal,
                     memory_key_padding_mask=_padding_mask(lengths, config.memory_seq))
    mask = causal if config.kind == "gpt" else None
    return layer(x, src_mask=mask,
                 src_key_padding_mask=_padding_mask(tensors.get("lengths"), config.seq))


def max_difference(config, arrays):
    """Max abs difference of y and the float input gradients: layers.py vs torch.nn."""
    params = {name: torch.tensor(arrays[name], dtype=torch.float64)
              for name in parameter_dims(config)}
    dy = torch.tensor(arrays["dy"], dtype=torch.float64)
    lengths = {name: torch.tensor(arrays[name], dtype=torch.int64)
               for name in ("lengths", "memory_lengths") if name in arrays}
    results = []
    for run in (lambda t: forward(config, {**params, **t}),
                lambda t: _nn_forward(config, _nn_layer(config, params), t)):
        inputs = {name: torch.tensor(arrays[name], dtype=torch.float64, requires_grad=True)
                  for name in float_input_dims(config)}
        y = run({**inputs, **lengths})
        y.backward(dy)
        results.append([y.detach()] + [inputs[name].grad for name in inputs])
    return max(float((a - b).abs().max()) for a, b in zip(*results))
