"""The autograd Function: a bundle's forward and backward on PyTorch's current stream.

Forward (DMRT_MODE_TRAIN) takes a runtime instance from the layer's pool, gives it an
arena from PyTorch's caching allocator (a torch.uint8 tensor of the training plan's size,
DMRT_OPEN_EXTERNAL_ARENA), binds inputs, parameters and a fresh y, and runs. The arena
and the instance stay with the autograd node until its backward, which binds dy and fresh
gradient buffers (all in one allocation, stacked parameters' gradients at their offsets
from each other as the runtime requires: tensors.GradientLayout), runs, and hands both
back: several forwards of one layer may be pending at once (a layer used twice,
activation checkpointing), each on its own instance.
"""

import torch
from torch.autograd.function import once_differentiable

from .. import _dmrt
from . import tensors as T


def stream_of(device):
    return torch.cuda.current_stream(device).cuda_stream


class Run:
    """What one call needs: the layer's instance pool and the bound tensors' descriptions."""

    def __init__(self, pool, device, input_descs, param_descs, output_desc, grad_descs, seed):
        self.pool, self.device, self.seed = pool, device, seed
        self.input_descs, self.param_descs = input_descs, param_descs
        self.output_desc, self.grad_descs = output_desc, grad_descs


def _forward(run, inputs, params, mode):
    """Runs a forward of `mode` on an instance from the pool with a fresh arena from
    PyTorch's allocator: (instance, arena, y). The instance is released on failure."""
    handle = run.pool.acquire()
    try:
        arena = torch.empty(handle.arena_bytes(mode), dtype=torch.uint8, device=run.device)
        handle.set_arena(arena.data_ptr(), arena.numel())
        for desc, t in zip(run.input_descs, inputs):
            T.bind(handle, desc, t)
        run.pool.bind_parameters(handle, run.param_descs, params)
        y = torch.empty(run.output_desc.shape, dtype=T.torch_dtype(run.output_desc),
                        device=run.device)
        T.bind(handle, run.output_desc, y)
        handle.set_seed(*run.seed)
        handle.forward(stream_of(run.device), mode)
    except BaseException:
        run.pool.release(handle)
        raise
    return handle, arena, y


def run_inference(run, inputs, params):
    """An inference forward (no autograd): the inference plan's arena, freed after (the
    allocator reuses it only for work queued later on this stream)."""
    handle, _, y = _forward(run, inputs, params, _dmrt.MODE_INFERENCE)
    run.pool.release(handle)
    return y


class LayerFunction(torch.autograd.Function):
    """apply(run, *inputs, *params) -> y; gradients of the float inputs and parameters."""

    @staticmethod
    def forward(ctx, run, *tensors):
        n = len(run.input_descs)
        inputs, params = tensors[:n], tensors[n:]
        handle, arena, y = _forward(run, inputs, params, _dmrt.MODE_TRAIN)
        ctx.run, ctx.handle, ctx.arena = run, handle, arena
        # The runtime's backward reads the bound inputs and parameters again: keep them,
        # and let autograd check that nothing changed them in place before backward.
        ctx.save_for_backward(*tensors)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        run, handle = ctx.run, ctx.handle
        if handle is None:
            raise RuntimeError("dmc layer: backward through this forward ran already "
                               "(use retain_graph=False; the runtime keeps one set of "
                               "saved activations per forward)")
        tensors = ctx.saved_tensors  # the version check; the bound pointers stay valid
        stream = stream_of(run.device)
        try:
            want = T.torch_dtype(run.output_desc)
            dy = dy.to(want).contiguous()
            dy = dy.clone() if dy.data_ptr() % 256 else dy
            handle.bind(run.pool.dy_desc, dy.data_ptr(), dy.numel() * dy.element_size())
            layout = run.pool.gradient_layout(run.grad_descs)
            grads = layout.allocate(run.device)
            for group in layout.groups:
                T.bind_group(handle, group, grads)
            handle.backward(stream)
            ctx.arena.record_stream(torch.cuda.current_stream(run.device))
        finally:
            ctx.handle, ctx.arena = None, None
            run.pool.release(handle)
        del tensors
        out = [None]  # run
        for desc in run.input_descs:
            out.append(grads.get(desc.name + ".grad"))
        for desc in run.param_descs:
            out.append(grads[desc.name + ".grad"])
        return tuple(out)
