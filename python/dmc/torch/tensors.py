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


ELEMENT_SIZES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4}


def element_size(desc):
    return ELEMENT_SIZES[desc.dtype]


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


class GradientLayout:
    """Every gradient of a backward in one allocation: each caller buffer (a group of
    slices, tensors.group_by_buffer) starts 256-byte aligned, its slices at their
    buffer_offset. One torch.empty and one split_with_sizes per backward instead of an
    allocation per buffer (host time: bert-large binds 17 gradients in 13 buffers).
    Gradients of mixed dtypes fall back to one allocation per buffer."""

    ALIGN = 256

    def __init__(self, groups):
        self.groups = groups
        dtypes = {d.dtype for group in groups for d in group}
        self.dtype = dtypes.pop() if len(dtypes) == 1 else None
        if self.dtype is None:
            return
        size = ELEMENT_SIZES[self.dtype]
        self.sizes, self.names, self.shapes = [], [], []
        at = 0  # elements
        for group in groups:
            start = at
            for d in sorted(group, key=lambda d: d.buffer_offset):
                offset = start + d.buffer_offset // size
                if offset > at:
                    self.sizes.append(offset - at)  # a gap: no gradient
                    self.names.append(None)
                    self.shapes.append(None)
                self.sizes.append(d.bytes // size)
                self.names.append(d.name)
                self.shapes.append(d.shape)
                at = offset + d.bytes // size
            end = start + group[0].buffer_bytes // size
            end = -(-end * size // self.ALIGN) * self.ALIGN // size  # the next buffer aligned
            if end > at:
                self.sizes.append(end - at)
                self.names.append(None)
                self.shapes.append(None)
            at = end
        self.elements = at

    def allocate(self, device):
        """{name: gradient tensor}, each slice of a buffer at its offset in the buffer."""
        if self.dtype is None:
            views = {}
            for group in self.groups:
                views.update(allocate_group(group, device))
            return views
        flat = torch.empty(self.elements, dtype=TORCH_DTYPES[self.dtype], device=device)
        parts = flat.split_with_sizes(self.sizes)
        return {n: part.view(shape) for n, part, shape in zip(self.names, parts, self.shapes)
                if n is not None}


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


def nbytes(tensor):
    return tensor.numel() * tensor.element_size()


def bind(handle, desc, tensor):
    handle.bind(desc, address(tensor), nbytes(tensor))


def bound_at(handle, group, tensors):
    """True if every slice of the group is bound where `tensors` has it (PyTorch's
    caching allocator often hands a step the addresses of the step before)."""
    return all(handle.bound_at(d.name, address(tensors[d.name]), nbytes(tensors[d.name]))
               for d in group)


def bind_group(handle, group, tensors):
    """Binds every slice of one caller buffer (`tensors`: name -> tensor), unless all are
    bound there already. The runtime keeps a stacked buffer's slices at their offsets
    from each other, so a buffer that moved (a new allocation each backward, parameters
    re-placed) is unbound as a whole first; binding one slice at the new place while the
    others sit at the old one would be refused (DMRT_ERROR_BINDING)."""
    if bound_at(handle, group, tensors):
        return
    if len(group) > 1:
        for d in group:
            handle.unbind(d.name)
    for d in group:
        bind(handle, d, tensors[d.name])

