"""Torch tensors against a bundle's tensor descriptions: checks with clear errors, buffers.

Errors name the tensor, what was given and what the bundle needs:
  TypeError   not a torch.Tensor; a float tensor of another dtype; a float lengths tensor
  ValueError  another shape (with the bundle's dimension letters)
  ValueError  a tensor on the CPU or another device
Non-contiguous inputs are copied to a contiguous tensor (the runtime reads row-major
memory), as are inputs not 256-byte aligned (a slice of a larger tensor); integer
lengths of another integer dtype (int64) are converted to int32.
"""

import torch

TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
                "i32": torch.int32}


def torch_dtype(desc):
    return TORCH_DTYPES[desc.dtype]


def check_input(desc, value, device):
    """`value` as the tensor to bind for input `desc` (see the module docstring)."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"input {desc.name!r}: expected a torch.Tensor, got "
                        f"{type(value).__name__}")
    want = torch_dtype(desc)
    if want == torch.int32:
        if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"input {desc.name!r}: dtype {value.dtype}, the bundle needs "
                            f"integer key lengths (torch.int32; int64 is converted)")
    elif value.dtype != want:
        raise TypeError(f"input {desc.name!r}: dtype {value.dtype}, the bundle needs {want} "
                        f"({desc.dtype}); convert with .to({want})")
    if tuple(value.shape) != desc.shape:
        raise ValueError(f"input {desc.name!r}: shape {tuple(value.shape)}, the bundle needs "
                         f"{desc.shape} [{', '.join(desc.dims)}] (a bundle is compiled for "
                         "one shape)")
    if value.device != device:
        where = "on the CPU" if value.device.type == "cpu" else f"on {value.device}"
        raise ValueError(f"input {desc.name!r} is {where}; the layer runs on {device} "
                         f"(move it with .to('{device}'))")
    if value.dtype != want:
        value = value.to(want)
    value = value.contiguous()
    return value.clone() if value.data_ptr() % 256 else value  # the runtime's alignment


def check_parameter(desc, value, device):
    """Raises if parameter `value` no longer fits `desc` (e.g. after .double() or .cpu())."""
    want = torch_dtype(desc)
    if value.dtype != want or value.device != device or tuple(value.shape) != desc.shape:
        raise ValueError(f"parameter {desc.name!r} is {value.dtype} {tuple(value.shape)} on "
                         f"{value.device}; the bundle needs {want} {desc.shape} on {device} "
                         "(a dmc layer's parameters keep the bundle's dtype and device)")


def element_size(desc):
    return torch.empty((), dtype=torch_dtype(desc)).element_size()


def group_by_buffer(descs):
    """[[desc, ...] per caller buffer], in first-appearance order; a stacked buffer (the
    compiler's QKV stacking) has several slices, each at its buffer_offset."""
    groups = {}
    for d in descs:
        groups.setdefault(d.buffer, []).append(d)
    return list(groups.values())


def allocate_group(group, device):
    """One allocation for a caller buffer: {name: view of it at its offset}."""
    first = group[0]
    size = element_size(first)
    storage = torch.empty(first.buffer_bytes // size, dtype=torch_dtype(first), device=device)
    views = {}
    for d in group:
        start = d.buffer_offset // size
        n = d.bytes // size
        views[d.name] = storage[start:start + n].view(d.shape)
    return views


def placed_as_group(group, tensors):
    """True if the tensors of a stacked group sit in one allocation at their offsets."""
    first = group[0]
    base = tensors[first.name].data_ptr() - first.buffer_offset
    for d in group:
        t = tensors[d.name]
        if t.data_ptr() - base != d.buffer_offset or not t.is_contiguous():
            return False
    return True


def address(tensor):
    return tensor.data_ptr()


def bind(handle, desc, tensor):
    handle.bind(desc, address(tensor), tensor.numel() * tensor.element_size())


def bind_group(handle, group, tensors):
    """Binds every slice of one caller buffer (`tensors`: name -> tensor). The runtime
    keeps a stacked buffer's slices at their offsets from each other, so a buffer that
    moved (a new allocation each backward, parameters re-placed) is unbound as a whole
    first; binding one slice at the new place while the others sit at the old one would
    be refused (DMRT_ERROR_BINDING)."""
    if len(group) > 1:
        for d in group:
            handle.unbind(d.name)
    for d in group:
        bind(handle, d, tensors[d.name])

