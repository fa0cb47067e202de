"""Philox4x32-10 and dmc's dropout masks in numpy, written from the published algorithm.

Philox4x32-10 is from Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as
1, 2, 3" (SC'11), as in Random123: each of 10 rounds maps counter (c0, c1, c2, c3) with
round key (k0, k1) to
    (hi(M1*c2) ^ c1 ^ k0,  lo(M1*c2),  hi(M0*c0) ^ c3 ^ k1,  lo(M0*c0))
with M0 = 0xD2511F53, M1 = 0xCD9E8D57, and the key is bumped by the Weyl constants
(0x9E3779B9, 0xBB67AE85) between rounds. Known answers: Random123's kat_vectors.

The dropout layout is the one documented in examples/README.md ("Dropout masks"); this
file shares no code with dmc (it never calls runtime/format/device/Philox.h). `Layout` names each word
of that layout so a test can plant a fault in exactly one of them.
"""

from dataclasses import dataclass

import numpy as np

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = 0xFFFFFFFF
DROPOUT_TAG = 0x64726F70  # "drop"

# Random123 kat_vectors, philox4x32 with 10 rounds: (counter, key, expected output).
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK32,) * 4, (MASK32,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def philox4x32_10(counter, key):
    """Philox4x32-10 on arrays: counter is 4 uint32-valued arrays, key 2; returns 4 arrays."""
    low, shift = np.uint64(MASK32), np.uint64(32)
    c = [np.asarray(word, dtype=np.uint64) & low for word in counter]
    k0 = np.asarray(key[0], dtype=np.uint64) & low
    k1 = np.asarray(key[1], dtype=np.uint64) & low
    for round_index in range(10):
        if round_index:
            k0 = (k0 + np.uint64(W0)) & low
            k1 = (k1 + np.uint64(W1)) & low
        p0 = np.uint64(M0) * c[0]  # both factors < 2^32: the product fits in 64 bits
        p1 = np.uint64(M1) * c[2]
        c = [(p1 >> shift) ^ c[1] ^ k0, p1 & low, (p0 >> shift) ^ c[3] ^ k1, p0 & low]
    return c


@dataclass(frozen=True)
class Layout:
    """The documented dropout counter layout; a field changed plants one fault."""

    swap_key_words: bool = False  # key {hi32(S), lo32(S)} instead of {lo32(S), hi32(S)}
    op_id_offset: int = 0  # counter word 2 = ID + offset
    tag: int = DROPOUT_TAG  # counter word 3
    group_shift: int = 3  # counter words 0/1 hold n >> group_shift
    half_of_element: str = "n & 7"  # which 16-bit half decides element n ("n & 7" or "0")
    high_half_first: bool = False  # element 2i+1 takes the low half of word i (swapped)


FAULTS = {
    "key words swapped": Layout(swap_key_words=True),
    "op id off by one": Layout(op_id_offset=1),
    "wrong tag word": Layout(tag=DROPOUT_TAG ^ 1),
    "one element per call": Layout(group_shift=0, half_of_element="0"),
    "halves swapped": Layout(high_half_first=True),
}



def dropout_threshold(p):
    """floor(p * 2^16) clamped to 2^16 - 1, in double; 0 for p <= 0."""
    if not p > 0.0:
        return 0
    return min(0xFFFF, int(np.floor(p * 65536.0)))


def dropout_keep(seed, op_id, p, shape, layout=Layout()):
    """Bool array of `shape`: True where dropout op `op_id` keeps the element.

    Elements are numbered row-major over `shape` (the op's `order` dims).
    """
    n = np.arange(int(np.prod(shape)), dtype=np.uint64)
    group = n >> np.uint64(layout.group_shift)
    key = [seed & MASK32, (seed >> 32) & MASK32]
    if layout.swap_key_words:
        key.reverse()
    counter = [group & np.uint64(MASK32), group >> np.uint64(32),
               np.full_like(n, (op_id + layout.op_id_offset) & MASK32),
               np.full_like(n, layout.tag)]
    words = np.stack(philox4x32_10(counter, key))
    half = (n & np.uint64(7)).astype(np.int64) if layout.half_of_element == "n & 7" \
        else np.zeros(n.shape, dtype=np.int64)
    word = words[half >> 1, np.arange(n.size)]
    high = (half & 1) == (0 if layout.high_half_first else 1)
    draw = np.where(high, word >> np.uint64(16), word & np.uint64(0xFFFF))
    return (draw >= dropout_threshold(p)).reshape(shape)


def check_known_answers():
    """Returns a list of messages, one per known-answer vector that does not match."""
    problems = []
    for counter, key, expected in KNOWN_ANSWERS:
        got = tuple(int(w) for w in philox4x32_10(counter, key))
        if got != expected:
            problems.append(f"philox4x32_10(ctr={[hex(w) for w in counter]}, "
                            f"key={[hex(w) for w in key]}) = {[hex(w) for w in got]}, "
                            f"expected {[hex(w) for w in expected]}")
    return problems
