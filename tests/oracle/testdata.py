"""Inputs the oracle chooses itself: key-padding lengths, and random tensors for self tests.

Lengths are not left to `dmc eval --seed` (its draw `1 + word % keys` can give rows with no
masked key, or every row of a small batch unmasked): the oracle passes them to dmc with
`--inputs`, so every key-padding model has a row that is partly masked. By default batch
element 0 sees every key and the others fewer (at least one, strictly fewer than all);
EXPLICIT_LENGTHS overrides that per model file, e.g. with a length 0 (a fully masked row).
"""

import os

import numpy as np
import torch

# Model file name (without .json) -> {length input: per-batch lengths}.
EXPLICIT_LENGTHS = {
    # Batch element 1 attends to no memory position: its cross-attention rows are fully
    # masked (defined result: zero attention weights, so that block yields only `bo`).
    "decoder-keypad-empty": {"memory_lengths": [3, 0]},
}

# Weight name suffix -> number of leading (output) letters in its dims.
_OUTPUT_LETTERS = {"wq": 2, "wk": 2, "wv": 2, "wo": 1, "w1": 1, "w2": 1}


def model_name(model_path):
    return os.path.splitext(os.path.basename(model_path))[0]


def key_count(config, name):
    """How many keys the length input `name` masks."""
    return config.memory_seq if name == "memory_lengths" else config.seq


def default_lengths(batch, keys):
    """Element 0: all keys; element b > 0: between 1 and keys - 1 (partly masked)."""
    lengths = [keys] + [1 + (b * (keys - 1)) // batch for b in range(1, batch)]
    return [min(length, keys) for length in lengths]


def oracle_lengths(config, model_path=None):
    """{length input: int32 array} for a key-padding model; empty without key padding.

    Raises ValueError if the lengths leave no row partly masked (nothing would be tested).
    """
    from layers import length_input_dims  # noqa: PLC0415 (layers imports nothing from here)

    explicit = EXPLICIT_LENGTHS.get(model_name(model_path), {}) if model_path else {}
    result = {}
    for name in length_input_dims(config):
        keys = key_count(config, name)
        lengths = explicit.get(name, default_lengths(config.batch, keys))
        if len(lengths) != config.batch or not all(0 <= n <= keys for n in lengths):
            raise ValueError(f"{name} {lengths}: need {config.batch} lengths in [0, {keys}]")
        if not any(0 < n < keys for n in lengths):
            raise ValueError(f"{name} {lengths} leave no row partly masked over {keys} keys")
        result[name] = np.array(lengths, dtype=np.int32)
    return result


def random_value(config, name, dims, generator):
    """A plausible random value for one float input or parameter, as float32 numpy."""
    shape = config.shape(dims)
    value = torch.randn(shape, generator=generator, dtype=torch.float64)
    suffix = name.rsplit(".", 1)[-1]
    if suffix in _OUTPUT_LETTERS:
        fan_in = np.prod(shape[_OUTPUT_LETTERS[suffix]:])
        value = value / np.sqrt(fan_in)
    elif suffix == "gamma":
        value = 1.0 + 0.1 * value
    elif name not in ("x", "memory", "dy"):
        value = 0.1 * value
    return value.numpy().astype(np.float32)


def random_inputs(config, input_dims, seed, model_path=None):
    """Every input in `input_dims` (name -> dims): oracle lengths, random floats."""
    generator = torch.Generator().manual_seed(seed)
    lengths = oracle_lengths(config, model_path)
    return {name: lengths[name] if name in lengths else
            random_value(config, name, dims, generator)
            for name, dims in input_dims.items()}
