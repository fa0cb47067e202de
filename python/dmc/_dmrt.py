"""ctypes binding of the dmc runtime's C API (runtime/dmrt.h, libdmrt.so).

No build step and no PyTorch headers: the library is found at run time, in this order:
  1. the environment variable DMC_LIBDMRT (a path to libdmrt.so),
  2. next to this package (python/dmc/libdmrt.so, e.g. copied in by an installer),
  3. the repository's build folders (build/runtime/, build-gpu/runtime/), found from
     this file's location.
docs/runtime-api.md documents every function; this module mirrors dmrt.h's structs
and raises DmrtError (the status name and dmrt_last_error()) when a call fails.
"""

import ctypes
import os

MAX_RANK = 8
API_VERSION = 2

# dmrt_dtype, dmrt_role, dmrt_mode, DMRT_OPEN_* (values as in dmrt.h)
DTYPES = {0: "f32", 1: "f16", 2: "bf16", 3: "i32"}
DTYPE_CODES = {name: code for code, name in DTYPES.items()}
ROLES = {0: "input", 1: "param", 2: "grad_output", 3: "output", 4: "grad"}
MODE_TRAIN, MODE_INFERENCE = 0, 1
OPEN_VALIDATE_ONLY, OPEN_NO_GRAPHS, OPEN_EXTERNAL_ARENA = 1, 2, 4
OPEN_POISON_ARENA, OPEN_INFERENCE_ONLY = 8, 16

STATUS_NAMES = {
    0: "DMRT_OK", 1: "DMRT_ERROR_INVALID_ARGUMENT", 2: "DMRT_ERROR_BUNDLE",
    3: "DMRT_ERROR_UNSUPPORTED", 4: "DMRT_ERROR_NO_DEVICE", 5: "DMRT_ERROR_ARCH",
    6: "DMRT_ERROR_CUDA", 7: "DMRT_ERROR_BINDING", 8: "DMRT_ERROR_UNBOUND",
    9: "DMRT_ERROR_STATE", 10: "DMRT_ERROR_INTERNAL",
}


class DmrtError(RuntimeError):
    """A failed runtime call: `status` is the dmrt_status name (e.g. "DMRT_ERROR_ARCH"),
    `message` dmrt_last_error()'s text, `call` the C function."""

    def __init__(self, call, status, message):
        self.call, self.status, self.message = call, status, message
        super().__init__(f"{call}: {status}: {message}")


class LibraryNotFound(ImportError):
    """libdmrt.so was not found or could not be loaded."""


class _OpenOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("device", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


class _TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("role", ctypes.c_int), ("dims", ctypes.c_char_p),
                ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * MAX_RANK),
                ("dtype", ctypes.c_int), ("bytes", ctypes.c_int64), ("buffer", ctypes.c_int32),
                ("buffer_offset", ctypes.c_int64), ("buffer_bytes", ctypes.c_int64)]


class _MemoryInfo(ctypes.Structure):
    _fields_ = [("arena_bytes", ctypes.c_int64), ("kernel_workspace_bytes", ctypes.c_int64),
                ("gemm_workspace_bytes", ctypes.c_int64), ("caller_bytes", ctypes.c_int64),
                ("external_arena", ctypes.c_int32)]


_P = ctypes.c_void_p
_SIGNATURES = {  # name: (restype, argtypes)
    "dmrt_last_error": (ctypes.c_char_p, []),
    "dmrt_api_version": (ctypes.c_int, []),
    "dmrt_open_options_init": (None, [ctypes.POINTER(_OpenOptions)]),
    "dmrt_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_OpenOptions),
                                 ctypes.POINTER(_P)]),
    "dmrt_close": (None, [_P]),
    "dmrt_model": (ctypes.c_char_p, [_P]),
    "dmrt_device_name": (ctypes.c_char_p, [_P]),
    "dmrt_tensor_count": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int32)]),
    "dmrt_tensor_info": (ctypes.c_int, [_P, ctypes.c_int32, ctypes.POINTER(_TensorDesc)]),
    "dmrt_memory": (ctypes.c_int, [_P, ctypes.POINTER(_MemoryInfo)]),
    "dmrt_arena_bytes": (ctypes.c_int, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]),
    "dmrt_bind": (ctypes.c_int, [_P, ctypes.c_char_p, _P, ctypes.c_int64, ctypes.c_int,
                                 ctypes.c_int32, ctypes.POINTER(ctypes.c_int64)]),
    "dmrt_unbind": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "dmrt_set_arena": (ctypes.c_int, [_P, _P, ctypes.c_int64]),
    "dmrt_set_seed": (ctypes.c_int, [_P, ctypes.c_uint64, ctypes.c_uint64]),
    "dmrt_dropout_key": (ctypes.c_uint64, [ctypes.c_uint64, ctypes.c_uint64]),
    "dmrt_set_graphs": (ctypes.c_int, [_P, ctypes.c_int]),
    "dmrt_forward": (ctypes.c_int, [_P, _P, ctypes.c_int]),
    "dmrt_backward": (ctypes.c_int, [_P, _P]),
}


def _candidates():
    env = os.environ.get("DMC_LIBDMRT")
    if env:
        return [("DMC_LIBDMRT", env)]
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    paths = [os.path.join(here, "libdmrt.so")]
    paths += [os.path.join(repo, b, "runtime", "libdmrt.so") for b in ("build", "build-gpu")]
    return [("search", p) for p in paths]


_lib = None


def library():
    """The loaded libdmrt.so (loaded once); raises LibraryNotFound naming where it looked."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for how, path in _candidates():
        if how == "search" and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise LibraryNotFound(f"cannot load libdmrt.so from {path} ({how}): {e}") from None
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        if lib.dmrt_api_version() < API_VERSION:
            raise LibraryNotFound(f"{path}: dmrt API version {lib.dmrt_api_version()}, "
                                  f"this package needs >= {API_VERSION}")
        _lib = lib
        return lib
    raise LibraryNotFound("libdmrt.so not found: set DMC_LIBDMRT to its path, or build the "
                          "runtime (cmake target dmrt-c); looked in " + ", ".join(tried))


def check(call, status):
    """Raises DmrtError unless `status` is DMRT_OK."""
    if status != 0:
        message = library().dmrt_last_error().decode(errors="replace")
        raise DmrtError(call, STATUS_NAMES.get(status, f"status {status}"), message)


class TensorDesc:
    """A caller tensor of a bundle (dmrt_tensor_desc, as plain Python values)."""

    __slots__ = ("name", "role", "dims", "shape", "dtype", "bytes", "buffer",
                 "buffer_offset", "buffer_bytes", "_c_name", "_c_shape")

    def __init__(self, d):
        self.name, self.role = d.name.decode(), ROLES[d.role]
        self.dims, self.shape = d.dims.decode(), tuple(d.shape[:d.rank])
        self.dtype, self.bytes, self.buffer = DTYPES[d.dtype], d.bytes, d.buffer
        self.buffer_offset, self.buffer_bytes = d.buffer_offset, d.buffer_bytes
        # dmrt_bind's arguments, built once: a step binds a dozen tensors
        self._c_name = self.name.encode()
        self._c_shape = (ctypes.c_int64 * MAX_RANK)(*self.shape)

    def __repr__(self):
        return f"TensorDesc({self.name!r}, {self.role}, {self.dims}, {self.shape}, {self.dtype})"


class Handle:
    """One dmrt_open'ed layer instance (closed by close() or when collected)."""

    def __init__(self, bundle_dir, flags=0, device=0):
        lib = library()
        if not os.path.isdir(bundle_dir):
            raise FileNotFoundError(f"bundle {bundle_dir!r}: no such directory "
                                    "(make one with `dmc compile MODEL.json -o OUT.dmlib`)")
        options = _OpenOptions()
        lib.dmrt_open_options_init(ctypes.byref(options))
        options.flags, options.device = flags, device
        ptr = _P()
        check("dmrt_open", lib.dmrt_open(os.fsencode(bundle_dir), ctypes.byref(options),
                                         ctypes.byref(ptr)))
        self.ptr, self.lib, self.path = ptr, lib, bundle_dir
        self.bound = {}  # tensor name -> (pointer, bytes) bound now (bind skips a repeat)
        count = ctypes.c_int32()
        check("dmrt_tensor_count", lib.dmrt_tensor_count(ptr, ctypes.byref(count)))
        self.tensors = []
        for i in range(count.value):
            d = _TensorDesc()
            check("dmrt_tensor_info", lib.dmrt_tensor_info(ptr, i, ctypes.byref(d)))
            self.tensors.append(TensorDesc(d))
        self.model = lib.dmrt_model(ptr).decode()
        self.device_name = lib.dmrt_device_name(ptr).decode()

    def arena_bytes(self, mode):
        n = ctypes.c_int64()
        check("dmrt_arena_bytes", self.lib.dmrt_arena_bytes(self.ptr, mode, ctypes.byref(n)))
        return n.value

    def bound_at(self, name, ptr, nbytes):
        """True if tensor `name` is bound at `ptr` with `nbytes` now."""
        return self.bound.get(name) == (ptr, nbytes)

    def bind(self, desc, ptr, nbytes):
        """dmrt_bind, skipped when `desc` is bound at `ptr` with `nbytes` already: the
        runtime keeps only the pointer, and an unchanged binding keeps its CUDA graphs
        replaying without a capture or an update."""
        if self.bound_at(desc.name, ptr, nbytes):
            return
        check(f"dmrt_bind({desc.name})",
              self.lib.dmrt_bind(self.ptr, desc._c_name, ptr, nbytes,
                                 DTYPE_CODES[desc.dtype], len(desc.shape), desc._c_shape))
        self.bound[desc.name] = (ptr, nbytes)

    def unbind(self, name):
        check(f"dmrt_unbind({name})", self.lib.dmrt_unbind(self.ptr, name.encode()))
        self.bound.pop(name, None)

    def set_arena(self, ptr, nbytes):
        check("dmrt_set_arena", self.lib.dmrt_set_arena(self.ptr, ptr, nbytes))

    def set_seed(self, seed, offset):
        check("dmrt_set_seed", self.lib.dmrt_set_seed(self.ptr, seed, offset))

    def forward(self, stream, mode):
        check("dmrt_forward", self.lib.dmrt_forward(self.ptr, stream, mode))

    def backward(self, stream):
        check("dmrt_backward", self.lib.dmrt_backward(self.ptr, stream))

    def close(self):
        if getattr(self, "ptr", None):
            self.lib.dmrt_close(self.ptr)
            self.ptr = None

    def __del__(self):
        self.close()
