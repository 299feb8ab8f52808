"""A byte-level restatement of the shared-memory packings, for tests only."""

from __future__ import annotations

import numpy as np


def pack_elements(slots: np.ndarray, packing: str) -> np.ndarray:
    """Element codes (T, slots) as the shared-memory bytes the instruction
    reads: little-endian elements; b6x16_p32 packs 16 six-bit codes into
    12 bytes plus 4 zero bytes, b4x16_p64 16 four-bit codes (low nibble
    first) into 8 bytes plus 8 zero bytes (PTX ISA; MMA-Sim PR: B300)."""
    x = np.atleast_2d(np.asarray(slots, np.uint64))
    t, n = x.shape
    if packing in ("b32", "b16", "b8"):
        width = {"b32": 4, "b16": 2, "b8": 1}[packing]
        return np.ascontiguousarray(x.astype({4: "<u4", 2: "<u2", 1: "u1"}[width])).view(
            np.uint8).reshape(t, n * width)
    bits = {"b6x16_p32": 6, "b4x16_p64": 4}.get(packing)
    if bits is None:
        raise ValueError(f"unknown packing {packing!r}")
    if n % 16:
        raise ValueError(f"{packing} needs a multiple of 16 elements, not {n}")
    groups = x.reshape(t, n // 16, 16) & np.uint64((1 << bits) - 1)
    shifts = np.arange(16, dtype=np.uint64) * np.uint64(bits)
    lo = (groups[..., :8] << shifts[:8]).sum(axis=-1, dtype=np.uint64)  # bits 0..8*bits-1
    hi = (groups[..., 8:] << (shifts[8:] - shifts[8])).sum(axis=-1, dtype=np.uint64)
    out = np.zeros((t, n // 16, 16), np.uint8)
    nbytes = 2 * bits  # 12 or 8 data bytes per 16 elements
    half = 8 * bits  # bits in the low group
    for byte in range(nbytes):
        bit = 8 * byte
        if bit + 8 <= half:
            v = lo >> np.uint64(bit)
        elif bit >= half:
            v = hi >> np.uint64(bit - half)
        else:
            v = (lo >> np.uint64(bit)) | (hi << np.uint64(half - bit))
        out[..., byte] = (v & np.uint64(0xFF)).astype(np.uint8)
    return out.reshape(t, n)
