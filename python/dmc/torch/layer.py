"""dmc.torch.Layer: a compiled bundle as a torch.nn.Module (README.md, "Python").

    layer = dmc.torch.Layer("bert.dmlib")   # on the current CUDA device
    y = layer(x, lengths=lens)              # keyword inputs by the bundle's input names
    y.sum().backward()                      # x.grad, memory.grad, every parameter's grad

Parameters are nn.Parameters under the bundle's names (state_dict keys "attn.wq", ...,
"layer0.attn.wq" for a stack), shaped in the bundle's dims order and initialised as
params.py says. Stacked parameters (the compiler's QKV stacking) are views of one
allocation, as the runtime requires; a parameter moved out of it (e.g. `p.data = t`) is
copied back in at the next forward. training: DMRT_MODE_TRAIN forwards with autograd;
eval(): DMRT_MODE_INFERENCE forwards. The runtime's inference mode runs the same kernels,
dropout included: eval() of a bundle compiled with dropout needs `eval_bundle`, the same
model compiled with "dropout": 0 (it shares the parameters), and raises otherwise.
"""

import torch
from torch import nn

from .. import _dmrt
from . import params as P
from . import tensors as T
from .function import LayerFunction, Run, run_inference
from .pool import Pool

_INPUT_KEYWORDS = ("lengths", "memory", "memory_lengths")


def _resolve_device(device):
    if device is None:
        if not torch.cuda.is_available():
            return torch.device("cpu")
        return torch.device("cuda", torch.cuda.current_device())
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    if device.type not in ("cuda", "cpu"):
        raise ValueError(f"device {device}: a dmc layer runs on a CUDA device ('cpu': "
                         "validate-only, names and shapes without a GPU)")
    return device


def draw_seed(device):
    """(seed, offset) for dmrt_set_seed from the device's default CUDA generator, so that
    torch.manual_seed reproduces a run: the generator's seed and Philox offset, which is
    then advanced (no host synchronisation); torch.randint on the generator where the
    offset API is missing (PyTorch < 2.1)."""
    gen = torch.cuda.default_generators[device.index]
    try:
        offset = gen.get_offset()
        gen.set_offset(offset + 4)
        return gen.initial_seed() % 2**64, offset // 4
    except (AttributeError, RuntimeError):
        pass
    return int(torch.randint(0, 2**62, (1,), device=device).item()), 0


def _seed_pair(seed):
    if isinstance(seed, tuple) and len(seed) == 2:
        return int(seed[0]) % 2**64, int(seed[1]) % 2**64
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed % 2**64, 0
    raise TypeError(f"seed: an int or a (seed, offset) pair, got {seed!r}")


class Layer(nn.Module):
    """A compiled layer (any bundle: one layer, or a stack compiled with "layers" > 1).

    Layer(bundle_path, device=None, eval_bundle=None, graphs=True): `device` a CUDA
    device (default: the current one; "cpu" or no CUDA: the bundle is opened
    validate-only, parameters on the CPU, forward raises); `graphs` runs each phase as
    the runtime's CUDA graph (one launch; a tensor bound at a new address updates the
    graph in place, and PyTorch's caching allocator mostly hands a step the addresses
    of the step before); graphs=False launches kernel by kernel.
    """

    def __init__(self, bundle_path, device=None, eval_bundle=None, graphs=True):
        super().__init__()
        self.device = _resolve_device(device)
        flags = _dmrt.OPEN_EXTERNAL_ARENA | (0 if graphs else _dmrt.OPEN_NO_GRAPHS)
        if self.device.type != "cuda":
            flags = _dmrt.OPEN_VALIDATE_ONLY
        self.bundle_path = str(bundle_path)
        self._pool = Pool(self.bundle_path, self.device, flags)
        descs = self._pool.tensors
        self.input_descs = [d for d in descs if d.role == "input"]
        self.param_descs = [d for d in descs if d.role == "param"]
        self.grad_descs = [d for d in descs if d.role == "grad"]
        outputs = [d for d in descs if d.role == "output"]
        if len(outputs) != 1 or self._pool.dy_desc is None:
            raise ValueError(f"bundle {bundle_path}: expected one output y and its dy, found "
                             f"outputs {[d.name for d in outputs]}")
        self.output_desc = outputs[0]
        self.dtype = T.torch_dtype(self.output_desc)
        self._eval_pool = None
        if eval_bundle is not None:
            self._eval_pool = Pool(str(eval_bundle), self.device, flags)
            self._check_eval_bundle(str(eval_bundle))
        self._make_parameters()

    # ---- what the bundle is ----
    @property
    def input_names(self):
        return [d.name for d in self.input_descs]

    @property
    def has_dropout(self):
        return bool(self._pool.dropout_kernels)

    @property
    def model(self):
        return self._pool.model

    def extra_repr(self):
        return (f"{self.bundle_path!r}, model={self.model!r}, inputs={self.input_names}, "
                f"dtype={self.dtype}, device={self.device}, dropout={self.has_dropout}")

    def _check_eval_bundle(self, path):
        pool = self._eval_pool
        if pool.dropout_kernels:
            raise ValueError(f"eval_bundle {path}: has dropout kernels "
                             f"{pool.dropout_kernels}; compile it with \"dropout\": 0")
        mine = {d.name: (d.role, d.shape, d.dtype) for d in self._pool.tensors
                if d.role in ("input", "param", "output")}
        theirs = {d.name: (d.role, d.shape, d.dtype) for d in pool.tensors
                  if d.role in ("input", "param", "output")}
        if mine != theirs:
            diff = sorted(set(mine.items()) ^ set(theirs.items()))[:4]
            raise ValueError(f"eval_bundle {path}: its inputs, parameters or output differ "
                             f"from {self.bundle_path}'s (first differences: {diff})")

    # ---- parameters ----
    def _make_parameters(self):
        sizes = P.sizes_of(self.param_descs)
        base = P.draw_base_seed()
        self._groups = T.group_by_buffer(self.param_descs)
        for group in self._groups:
            views = T.allocate_group(group, self.device)
            for d in group:
                values = P.init_values(d.name, d.dims, d.shape, sizes, base)
                with torch.no_grad():
                    views[d.name].copy_(values)
                P.register(self, d.name, nn.Parameter(views[d.name]))

    def _parameters_for_run(self):
        """The parameters in param_descs order, placed as the runtime needs them."""
        params = {d.name: P.lookup(self, d.name) for d in self.param_descs}
        for d in self.param_descs:
            T.check_parameter(d, params[d.name], self.device)
        for group in self._groups:
            if len(group) == 1:
                p = params[group[0].name]
                if not p.is_contiguous() or p.data_ptr() % 256:
                    p.data = p.data.contiguous().clone()
            elif not T.placed_as_group(group, params):
                views = T.allocate_group(group, self.device)
                for d in group:
                    with torch.no_grad():
                        views[d.name].copy_(params[d.name])
                    params[d.name].data = views[d.name]
        return [params[d.name] for d in self.param_descs]

    # ---- running ----
    def forward(self, x, lengths=None, memory=None, memory_lengths=None, seed=None):
        given = {"x": x, "lengths": lengths, "memory": memory, "memory_lengths": memory_lengths}
        names = self.input_names
        for name, value in given.items():
            if value is None and name in names:
                raise ValueError(f"input {name!r} is missing: the bundle's inputs are {names}")
            if value is not None and name not in names:
                raise ValueError(f"{name!r} is not an input of this bundle (its inputs: "
                                 f"{names})")
        inputs = [T.check_input(d, given[d.name], self.device) for d in self.input_descs]
        pool = self._pool
        if not self.training and self.has_dropout:
            if self._eval_pool is None:
                raise RuntimeError(
                    f"dmc layer {self.bundle_path}: eval() needs dropout off, but the bundle "
                    f"applies dropout in its forward kernels {pool.dropout_kernels} and the "
                    "runtime's inference mode runs the same kernels; compile the model with "
                    "\"dropout\": 0 and pass it as Layer(..., eval_bundle=PATH)")
            pool = self._eval_pool
        if self._pool.validate_only:
            raise RuntimeError(f"dmc layer {self.bundle_path}: opened without a CUDA device "
                               f"(validate-only on {self.device}); create it when "
                               "torch.cuda.is_available()")
        has_dropout = bool(pool.dropout_kernels)
        if seed is not None:
            seed = _seed_pair(seed)
        else:
            seed = draw_seed(self.device) if has_dropout else (0, 0)
        params = self._parameters_for_run()
        run = Run(pool, self.device, self.input_descs, self.param_descs, self.output_desc,
                  self.grad_descs, seed)
        float_inputs = [t for t in inputs if t.is_floating_point()]
        needs_grad = torch.is_grad_enabled() and any(
            t.requires_grad for t in float_inputs + params)
        if not needs_grad:
            return run_inference(run, inputs, params)
        return LayerFunction.apply(run, *inputs, *params)


class Stack(Layer):
    """A bundle compiled with "layers" > 1: parameters `layer<n>.<name>` (one set per
    layer, some stacked across layers by the compiler, e.g. a decoder's cross-attention
    K/V), run as one bundle. `num_layers` and `layer_names(n)` describe them."""

    def __init__(self, bundle_path, device=None, eval_bundle=None, graphs=True):
        super().__init__(bundle_path, device, eval_bundle, graphs)
        prefixes = {d.name.split(".", 1)[0] for d in self.param_descs}
        if not all(p.startswith("layer") and p[5:].isdigit() for p in prefixes):
            raise ValueError(f"bundle {bundle_path}: not a stack (parameters without a "
                             f"layer<n>. prefix: {sorted(prefixes)[:4]}); use dmc.torch.Layer")
        self.num_layers = len(prefixes)

    def layer_names(self, n):
        """The parameter names of layer n, without the `layer<n>.` prefix."""
        prefix = f"layer{n}."
        return [d.name[len(prefix):] for d in self.param_descs if d.name.startswith(prefix)]
