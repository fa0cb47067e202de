#!/usr/bin/python3
"""Cross-checks layers.py against PyTorch's own nn.TransformerEncoderLayer / DecoderLayer.

The oracle's reference is hand-written einsums; this confirms its semantics (projections,
masks, norm placement, activations, layernorm eps) with an implementation it shares no
code with. A model without biases is compared with the nn layer's biases set to zero.

Usage: crosscheck.py [--plant FAULT] [MODEL.json ...]   (default: every oracle model)

For each model: random weights and inputs (lengths as the oracle passes them to dmc), y and
the gradients of x (and memory) from both, in float64; it fails if they differ by more than
1e-10 relative to the largest of them. Models with dropout are skipped (torch.nn's dropout
is not dmc's); a batch element whose keys are all masked is left out (torch.nn gives NaN,
dmc defines zero weights: layers.py's treatment of it is checked by the oracle itself).
--plant FAULT feeds the nn layer a permuted weight or a wrong mask: the run must then fail.
"""

import argparse
import glob
import json
import os
import sys

import torch
import torch.nn.functional as F

import testdata
from layers import LayerConfig, float_input_dims, forward, length_input_dims, parameter_dims

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL = 1e-10
# Faults that --plant feeds the nn layer (not layers.py).
PLANTS = ("permuted-weight", "wrong-mask", "wrong-eps")

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


def _nn_layer(config, params, plant=None):
    """An nn transformer layer in float64 holding the same weights as `params`."""
    if plant == "permuted-weight":  # query heads rolled by one: q_h meets k_{h+1}
        params = dict(params, **{"attn.wq": torch.roll(params["attn.wq"], 1, dims=0)})
    layer_class = torch.nn.TransformerDecoderLayer if config.kind == "decoder" \
        else torch.nn.TransformerEncoderLayer
    layer = layer_class(config.hidden, config.heads, config.ffn, dropout=0.0,
                        activation=_NN_ACTIVATIONS[config.activation],
                        layer_norm_eps=config.eps * (10.0 if plant == "wrong-eps" else 1.0),
                        batch_first=True,
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


def _nn_forward(config, layer, tensors, plant=None):
    x = tensors["x"]
    causal = torch.triu(torch.full((config.seq, config.seq), float("-inf"),
                                   dtype=torch.float64), diagonal=1)
    if plant == "wrong-mask":  # the causal mask on the wrong side of the diagonal
        causal = causal.T.contiguous()
    if config.kind == "decoder":
        lengths = tensors.get("memory_lengths")
        return layer(x, tensors["memory"], tgt_mask=causal,
                     memory_key_padding_mask=_padding_mask(lengths, config.memory_seq))
    # An encoder has no causal mask: the wrong mask is one.
    mask = causal if (config.kind == "gpt") != (plant == "wrong-mask") else None
    return layer(x, src_mask=mask,
                 src_key_padding_mask=_padding_mask(tensors.get("lengths"), config.seq))


def _without_empty_rows(config, arrays):
    """Drops batch elements with a length 0 (torch.nn has NaN where dmc defines zeros)."""
    keep = torch.ones(config.batch, dtype=torch.bool)
    for name in ("lengths", "memory_lengths"):
        if name in arrays:
            keep &= torch.as_tensor(arrays[name]) > 0
    if bool(keep.all()):
        return config, arrays
    batch_names = set(float_input_dims(config)) | {"dy", "lengths", "memory_lengths"}
    kept = keep.numpy()
    arrays = {name: value[kept] if name in batch_names else value
              for name, value in arrays.items()}
    return config.__class__(**{**config.__dict__, "batch": int(kept.sum())}), arrays


def max_difference(config, arrays, plant=None):
    """Max abs difference of y and the float input gradients: layers.py vs torch.nn,
    relative to the largest magnitude of those tensors."""
    config, arrays = _without_empty_rows(config, arrays)
    params = {name: torch.tensor(arrays[name], dtype=torch.float64)
              for name in parameter_dims(config)}
    dy = torch.tensor(arrays["dy"], dtype=torch.float64)
    lengths = {name: torch.tensor(arrays[name], dtype=torch.int64)
               for name in ("lengths", "memory_lengths") if name in arrays}
    results = []
    for run in (lambda t: forward(config, {**params, **t}),
                lambda t: _nn_forward(config, _nn_layer(config, params, plant), t, plant)):
        inputs = {name: torch.tensor(arrays[name], dtype=torch.float64, requires_grad=True)
                  for name in float_input_dims(config)}
        y = run({**inputs, **lengths})
        y.backward(dy)
        results.append([y.detach()] + [inputs[name].grad for name in inputs])
    scale = max(float(a.abs().max()) for a in results[0])
    difference = max(float((a - b).abs().max()) for a, b in zip(*results))
    return difference / scale if difference == difference else float("inf")


def check(model_path, plant=None, seed=11):
    """(relative difference, or None if the model is skipped) for one model file."""
    with open(model_path) as f:
        config = LayerConfig.from_json(json.load(f))
    if config.has_dropout:
        return None
    inputs = {**float_input_dims(config), **parameter_dims(config), "dy": "bji"}
    inputs.update(length_input_dims(config))
    arrays = testdata.random_inputs(config, inputs, seed, model_path)
    return max_difference(config, arrays, plant)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plant", choices=PLANTS, help="a fault fed to the torch.nn layer")
    parser.add_argument("models", nargs="*", help="model JSONs (default: every oracle model)")
    args = parser.parse_args(argv)
    models = args.models or sorted(glob.glob(os.path.join(HERE, "models", "*.json")))
    mismatched, checked = [], 0
    for model_path in models:
        difference = check(model_path, args.plant)
        name = os.path.basename(model_path)
        if difference is None:
            print(f"{name}: skipped (dropout)")
            continue
        checked += 1
        ok = difference <= RTOL
        print(f"{name}: layers.py vs torch.nn relative difference {difference:.2e} "
              f"{'ok' if ok else f'MISMATCH (> {RTOL:g})'}")
        if not ok:
            mismatched.append(name)
    print(f"crosscheck{' with planted ' + args.plant if args.plant else ''}: "
          f"{checked - len(mismatched)} of {checked} models agree")
    return 1 if mismatched or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
