"""Minimal safetensors reader and writer on numpy, independent of the safetensors package.

Format: an 8-byte little-endian header length, a JSON header mapping each tensor name to
{"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data section) plus
an optional "__metadata__" of string -> string, then the raw little-endian tensor data.
"""

import json
import struct
from dataclasses import dataclass, field

import numpy as np
import torch

# Safetensors dtype name -> numpy dtype (BF16 is handled separately: numpy has none).
_NUMPY_DTYPES = {
    "F64": np.dtype(np.float64),
    "F32": np.dtype(np.float32),
    "F16": np.dtype(np.float16),
    "I64": np.dtype(np.int64),
    "I32": np.dtype(np.int32),
    "U8": np.dtype(np.uint8),
    "BOOL": np.dtype(np.bool_),
}
_DTYPE_NAMES = {dtype: name for name, dtype in _NUMPY_DTYPES.items()}


@dataclass
class SafetensorsFile:
    """Tensors as numpy arrays (BF16 widened to float32), their stored dtypes, and metadata."""

    tensors: dict = field(default_factory=dict)
    dtypes: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)


def _decode_tensor(name, info, body):
    """Returns the numpy array for one header entry, checking its offsets and size."""
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"tensor {name!r}: bad shape {shape!r}")
    if not isinstance(offsets, list) or len(offsets) != 2:
        raise ValueError(f"tensor {name!r}: bad data_offsets {offsets!r}")
    begin, end = offsets
    if not 0 <= begin <= end <= len(body):
        raise ValueError(f"tensor {name!r}: data_offsets {offsets} outside data of {len(body)} bytes")
    if dtype == "BF16":
        item = np.dtype("<u2")
    elif dtype in _NUMPY_DTYPES:
        item = _NUMPY_DTYPES[dtype].newbyteorder("<")
    else:
        raise ValueError(f"tensor {name!r}: unsupported dtype {dtype!r}")
    count = int(np.prod(shape, dtype=np.int64))
    if count * item.itemsize != end - begin:
        raise ValueError(f"tensor {name!r}: {end - begin} bytes for shape {shape} of {dtype}")
    raw = np.frombuffer(body[begin:end], dtype=item)
    if dtype == "BF16":
        array = (raw.astype(np.uint32) << 16).view(np.float32)
    else:
        array = raw.astype(_NUMPY_DTYPES[dtype])
    return array.reshape(shape)


def read_safetensors(path):
    """Reads a safetensors file into a SafetensorsFile; raises ValueError if it is malformed."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for a safetensors header")
    (header_len,) = struct.unpack("<Q", data[:8])
    if 8 + header_len > len(data):
        raise ValueError(f"{path}: header length {header_len} exceeds file size {len(data)}")
    header = json.loads(data[8:8 + header_len].decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError(f"{path}: __metadata__ must map strings to strings")
    body = memoryview(data)[8 + header_len:]
    result = SafetensorsFile(metadata=dict(metadata))
    for name, info in header.items():
        result.tensors[name] = _decode_tensor(name, info, body)
        result.dtypes[name] = info["dtype"]
    return result


def to_torch(array):
    """Converts a numpy array from read_safetensors to a torch tensor (sharing no memory)."""
    return torch.from_numpy(np.array(array, copy=True))


def _encode_tensor(value):
    """Returns (dtype name, shape, little-endian bytes) for a numpy array or torch tensor."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().contiguous()
        if value.dtype == torch.bfloat16:
            bits = value.view(torch.int16).numpy().astype("<i2")
            return "BF16", list(value.shape), bits.tobytes()
        value = value.numpy()
    array = np.asarray(value)
    name = _DTYPE_NAMES.get(array.dtype)
    if name is None:
        raise ValueError(f"unsupported dtype {array.dtype}")
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return name, list(array.shape), little.tobytes()


def write_safetensors(path, tensors, metadata=None):
    """Writes a dict of name -> numpy array / torch tensor, with optional str -> str metadata."""
    header = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("metadata must map strings to strings")
        header["__metadata__"] = dict(metadata)
    chunks, offset = [], 0
    for name, value in tensors.items():
        if name == "__metadata__":
            raise ValueError("'__metadata__' is not a valid tensor name")
        dtype, shape, raw = _encode_tensor(value)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for raw in chunks:
            f.write(raw)
