"""Runtime instances of one bundle, handed out one per pending forward.

A dmrt layer instance keeps one forward's saved activations until its backward, so each
forward in flight needs its own instance; the pool opens another when all are busy
(cubins are loaded once per process: docs/runtime-api.md, "Several instances"). Each
instance remembers what it has bound (_dmrt.Handle.bound), so a tensor at the address it
was bound at is not bound again.
"""

import json
import os

from .. import _dmrt
from . import tensors as T


def forward_dropout_kernels(bundle_path):
    """Names of the bundle's forward kernels that apply dropout.

    The manifest does not record the model's dropout rates; the compiler creates dropout
    ops only for p > 0 and names each fused kernel after its ops (e.g.
    `bias_dropout_add_layernorm`), so a forward kernel whose name holds "dropout" is one.
    """
    with open(os.path.join(bundle_path, "manifest.json")) as f:
        manifest = json.load(f)
    return [k["name"] for k in manifest.get("kernels", [])
            if k.get("phase") != "backward" and "dropout" in k.get("name", "")]


class Pool:
    def __init__(self, bundle_path, device, flags):
        self.path, self.device, self.flags = bundle_path, device, flags
        index = device.index if device.type == "cuda" else 0
        self.device_index = 0 if index is None else index
        first = _dmrt.Handle(bundle_path, flags, self.device_index)
        self.tensors, self.model = first.tensors, first.model
        self.device_name = first.device_name
        self.dropout_kernels = forward_dropout_kernels(bundle_path)
        self.dy_desc = next((d for d in self.tensors if d.role == "grad_output"), None)
        self._free = [first]
        self._groups = {}  # tuple of names -> tensors.group_by_buffer of those descs
        self._layouts = {}  # tuple of names -> tensors.GradientLayout of those descs

    @property
    def validate_only(self):
        return bool(self.flags & _dmrt.OPEN_VALIDATE_ONLY)

    def arena_bytes(self, mode):
        handle = self.acquire()
        try:
            return handle.arena_bytes(mode)
        finally:
            self.release(handle)

    def acquire(self):
        if self._free:
            return self._free.pop()
        return _dmrt.Handle(self.path, self.flags, self.device_index)

    def release(self, handle):
        self._free.append(handle)

    def groups(self, descs):
        """tensors.group_by_buffer(descs), computed once per set of tensors (every run
        binds the same parameters and gradients)."""
        key = tuple(d.name for d in descs)
        if key not in self._groups:
            self._groups[key] = T.group_by_buffer(descs)
        return self._groups[key]

    def gradient_layout(self, descs):
        """tensors.GradientLayout of the buffers of `descs`, made once."""
        key = tuple(d.name for d in descs)
        if key not in self._layouts:
            self._layouts[key] = T.GradientLayout(self.groups(descs))
        return self._layouts[key]

    def bind_parameters(self, handle, descs, params):
        """Binds the parameters whose buffer moved since this instance last bound them
        (a stacked buffer as a whole: tensors.bind_group skips one bound in place)."""
        by_name = {d.name: p for d, p in zip(descs, params)}
        for group in self.groups(descs):
            T.bind_group(handle, group, by_name)

    def close(self):
        for handle in self._free:
            handle.close()
        self._free = []
