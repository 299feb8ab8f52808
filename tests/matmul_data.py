"""Random matrices of raw words for the matmul tests: mostly moderate values,
with zeros, subnormals, extreme exponents and a few NaN/Inf words mixed in."""

from __future__ import annotations

import numpy as np

from tcprobe.models.formats import Class, decode, get_format


def words(rng, fmt: str, shape, *, special: float = 0.003, extreme: float = 0.1,
          zero: float = 0.05, spread: int = 6) -> np.ndarray:
    """Words of ``fmt`` (uint32) of ``shape``: exponents within ``spread`` of 1.0
    except an ``extreme`` share drawn from the whole range (subnormals and the
    largest values included), ``zero`` signed zeros, ``special`` NaN/Inf words."""
    f = get_format(fmt)
    n = int(np.prod(shape))
    width = f.width
    if f.kind.name == "INT":
        return rng.integers(0, 1 << width, n, dtype=np.uint64).astype(np.uint32).reshape(shape)
    raw = rng.integers(0, 1 << width, n, dtype=np.uint64).astype(np.uint32)
    cls = decode(f, raw).cls
    finite_raw = np.where(cls >= Class.INF, raw & ~np.uint32(1 << (width - 2)), raw)
    emax = (1 << f.exp_bits) - 2
    e = np.clip(f.bias + rng.integers(-spread, spread + 1, n), 1, emax)
    frac = rng.integers(0, 1 << (f.frac_bits + f.drop_bits), n, dtype=np.uint64)
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(width - 1)
    moderate = (sign | (e.astype(np.uint64) << np.uint64(f.frac_bits + f.drop_bits)) | frac)
    out = moderate.astype(np.uint32)
    u = rng.random(n)
    out = np.where(u < extreme, finite_raw, out)
    out = np.where((u >= extreme) & (u < extreme + zero), sign.astype(np.uint32), out)
    if f.specials.name in ("IEEE", "FN") and special:
        nan_inf = raw[decode(f, raw).cls >= Class.INF]
        pick = rng.random(n) < special
        if len(nan_inf):
            out[pick] = rng.choice(nan_inf, int(pick.sum()))
    return out.reshape(shape).astype(np.uint32)


def as_array(w: np.ndarray, dtype) -> np.ndarray:
    """Words as an array of ``dtype`` (its own bits)."""
    size = np.dtype(dtype).itemsize
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]
    return np.ascontiguousarray(w.astype(unsigned)).view(dtype)
