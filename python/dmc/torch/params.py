"""Parameters under their dmc names, and their initialisation.

nn.Module attribute names cannot hold dots, so a parameter `attn.wq` lives in a child
module `attn` as `wq` (`layer0.attn.wq`: `layer0` -> `attn` -> `wq`); named_parameters()
and state_dict() then give exactly the bundle's names.

Initialisation (the same for dmc.torch.Layer and dmc.torch.reference_layer, so that one
torch.manual_seed gives both the same values): as torch.nn.Linear and torch.nn.LayerNorm
initialise the matching layers of a PyTorch transformer:
  - a projection weight (P.wq, P.wk, P.wv, P.wo, ffn.w1, ffn.w2): uniform in
    [-1/sqrt(fan_in), 1/sqrt(fan_in)] (nn.Linear's kaiming_uniform_(a=sqrt(5))), fan_in
    the product of the weight's input dims (i for wq/wk/wv/w1; h*p for wo; u for w2);
  - its bias (P.bq, ..., ffn.b2): uniform in the same range (nn.Linear's bias);
  - layer norms: gamma = 1, beta = 0 (nn.LayerNorm).
`dmc eval` draws weights from the same range (runtime/ReferenceData.h, range
1/sqrt(fan_in)) but biases with range 0.1 and gamma 1 +- 0.1: those are test data, not
a training start. Values are drawn in fp32 on the CPU, each parameter from its own
torch.Generator seeded by (one draw from torch's default CPU generator, the name), so the
result depends neither on the parameter order nor on the device, then cast and moved.
"""

import math
import zlib

import torch
from torch import nn

# output dims of each projection, by the last component of its name
_OUTPUT_DIMS = {"wq": "hp", "wk": "hp", "wv": "hp", "wo": "i", "w1": "u", "w2": "i"}
_BIAS_OF = {"bq": "wq", "bk": "wk", "bv": "wv", "bo": "wo", "b1": "w1", "b2": "w2"}
# canonical dims of each weight (what fan_in reads when only a bias is known)
_WEIGHT_DIMS = {"wq": "hpi", "wk": "hpi", "wv": "hpi", "wo": "ihp", "w1": "ui", "w2": "iu"}


def fan_in(name, dims, sizes):
    """fan_in of weight `name` (or of the weight of bias `name`): its input dims' product."""
    leaf = name.rsplit(".", 1)[-1]
    weight = _BIAS_OF.get(leaf, leaf)
    if weight not in _OUTPUT_DIMS:
        raise ValueError(f"{name}: not a projection weight or bias")
    wdims = dims if leaf == weight else _WEIGHT_DIMS[weight]
    return math.prod(sizes[c] for c in wdims if c not in _OUTPUT_DIMS[weight])


def init_values(name, dims, shape, sizes, base_seed):
    """The initial fp32 CPU tensor of parameter `name` (see the module docstring)."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "gamma":
        return torch.ones(shape)
    if leaf == "beta":
        return torch.zeros(shape)
    bound = 1.0 / math.sqrt(fan_in(name, dims, sizes))
    g = torch.Generator().manual_seed((base_seed + zlib.crc32(name.encode())) % (2**63))
    return (torch.rand(shape, generator=g) * 2.0 - 1.0) * bound


def draw_base_seed():
    """One draw from torch's default CPU generator (torch.manual_seed reproduces it)."""
    return int(torch.randint(0, 2**62, (1,)).item())


def sizes_of(descs):
    """Dimension letter -> extent, from tensor descriptions (anything with .dims, .shape)."""
    sizes = {}
    for d in descs:
        for c, n in zip(d.dims, d.shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"dimension {c!r} has extents {sizes[c]} and {n}")
    return sizes


class Container(nn.Module):
    """A child module that only holds parameters (one component of a dotted name)."""

    def forward(self, *args, **kwargs):
        raise RuntimeError("a parameter container is not callable")


def register(root, name, parameter):
    """Registers `parameter` under the dotted `name` below `root`, making containers."""
    *path, leaf = name.split(".")
    module = root
    for part in path:
        child = module._modules.get(part)
        if child is None:
            if hasattr(module, part):
                raise ValueError(f"parameter {name!r}: {part!r} clashes with an attribute "
                                 f"of {type(module).__name__}")
            child = Container()
            module.add_module(part, child)
        module = child
    module.register_parameter(leaf, parameter)


def lookup(root, name):
    """The parameter registered under dotted `name`."""
    module = root
    *path, leaf = name.split(".")
    for part in path:
        module = module._modules[part]
    return module._parameters[leaf]
