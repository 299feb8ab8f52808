"""How two products differ, and how far each is from the exact product.

Differences are counted in units in the last place of the output format
(:func:`tcprobe.models.formats.ulp_distance`). The exact product is the
exact sum of every product and C, rounded once to nearest even into the
output format (the ``ieee`` baseline on the whole K): an element is
correctly rounded when its word equals that one.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import Class, decode, get_format, ulp_distance
from tcprobe.models.profiles import ieee_model

from . import pipeline
from .operands import MatmulError
from .schedule import PRESETS

# Histogram buckets of |ulps|: 1, 2, 3-4, 5-8, ... (powers of two), then the rest.
BUCKETS = 12


def exact_words(a, a_fmt: str, b, b_fmt: str, c, d_fmt: str,
                progress: pipeline.Progress | None = None) -> np.ndarray:
    """D words of A @ B + C summed exactly and rounded once (RNE) into ``d_fmt``:
    the ``ieee`` baseline as one instruction over all of K, run as the chain
    from C through the one pipeline."""
    if get_format(a_fmt).kind.name == "INT":
        raise MatmulError("A: integer products are exact on every GPU; --exact is for floats")
    dp = Datapath("mma", a_fmt, a_fmt, b_fmt, d_fmt, a.shape[1])
    p = pipeline.Problem(ieee_model(dp), a, a_fmt, b, b_fmt, d_fmt, c, d_fmt, fast=False,
                         progress=progress)
    return pipeline.run(p, PRESETS["chain"].schedule)


def words_differ(fmt: str, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elements whose words differ, two NaNs of any payload matching (the one
    NaN-aware word comparison of library products; integers compare as words)."""
    got, want = np.asarray(got), np.asarray(want)
    differ = got != want
    if get_format(fmt).kind.name == "INT" or not differ.any():
        return differ
    both_nan = (decode(fmt, got.ravel()).cls == Class.NAN) & \
        (decode(fmt, want.ravel()).cls == Class.NAN)
    return differ & ~both_nan.reshape(differ.shape)


def float_values(fmt: str, words: np.ndarray) -> np.ndarray:
    """Words as float64 values, for error figures only (NaN for NaN, +-inf
    for Inf); never on an arithmetic path."""
    d = decode(fmt, words)
    with np.errstate(over="ignore"):
        v = np.ldexp(d.sig.astype(np.float64), d.lsb.astype(np.int32))
    v = np.where(d.sign == 1, -v, v)
    v = np.where(d.cls == Class.NAN, np.nan, v)
    return np.where(d.cls == Class.INF, np.where(d.sign == 1, -np.inf, np.inf), v)


def product_scale(a, a_fmt: str, b, b_fmt: str, c, d_fmt: str) -> np.ndarray:
    """|A| |B| + |C| elementwise (float64): the size an error of A @ B + C is
    measured against (componentwise relative error |D - E| / (|A||B| + |C|))."""
    fa = np.abs(float_values(a_fmt, a))
    fb = np.abs(float_values(b_fmt, b))
    with np.errstate(invalid="ignore", over="ignore"):
        return fa @ fb + np.abs(float_values(d_fmt, c))


def relative_error(d_fmt: str, got: np.ndarray, want: np.ndarray, scale: np.ndarray) -> dict:
    """Error figures a numerical analyst reads, over the elements both sides
    hold finite: the componentwise max |got - want| / (|A||B| + |C|) and its
    element, and the normwise ||got - want||_F / || |A||B| + |C| ||_F."""
    g, w = float_values(d_fmt, got), float_values(d_fmt, want)
    finite = np.isfinite(g) & np.isfinite(w) & np.isfinite(scale)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        err = np.where(finite, np.abs(g - w), 0.0)
        comp = np.where(finite & (scale > 0), err / np.where(scale > 0, scale, 1.0), 0.0)
        comp = np.where(finite & (scale == 0) & (err > 0), np.inf, comp)
        norm_s = float(np.sqrt(np.sum(np.where(finite, scale, 0.0) ** 2)))
        normwise = float(np.sqrt(np.sum(err ** 2))) / norm_s if norm_s > 0 else 0.0
    out = {"componentwise": float(comp.max()) if comp.size else 0.0, "normwise": normwise,
           "worst": None}
    if comp.size and comp.max() > 0:
        r, c = np.unravel_index(int(np.argmax(comp)), comp.shape)
        out["worst"] = {"row": int(r), "column": int(c), "got": int(got[r, c]),
                        "want": int(want[r, c]), "relative": float(comp[r, c]),
                        "ulps": int(ulp_distance(get_format(d_fmt), got[r:r + 1, c:c + 1],
                                                 want[r:r + 1, c:c + 1])[0, 0])}
    return out


def bucket_names() -> list[str]:
    names = ["1", "2"]
    lo = 3
    for i in range(2, BUCKETS - 1):
        hi = 1 << i
        names.append(f"{lo}-{hi}")
        lo = hi + 1
    names.append(f">={lo}")
    return names


def difference(d_fmt: str, got: np.ndarray, want: np.ndarray) -> dict:
    """Elements that differ, a histogram of |got - want| in ulps, NaN
    mismatches, and the worst element (row, column, both words, ulps)."""
    fmt = get_format(d_fmt)
    got, want = np.asarray(got, np.uint32), np.asarray(want, np.uint32)
    differ = words_differ(fmt.name, got, want)
    out = {"elements": int(got.size), "differ": int(differ.sum())}
    if fmt.kind.name == "INT":
        dist = (got.astype(np.int64) - want.astype(np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)
        nan_mismatch = np.zeros(got.shape, bool)
    else:
        nan_mismatch = (decode(fmt, got).cls == Class.NAN) != (decode(fmt, want).cls == Class.NAN)
        dist = ulp_distance(fmt, got, want)
    mag = np.abs(dist)
    counts = [0] * BUCKETS
    finite = differ & ~nan_mismatch
    if finite.any():
        edges = np.array([1 << i for i in range(BUCKETS - 1)], np.int64)
        idx = np.searchsorted(edges, mag[finite], side="left")
        counts = np.bincount(idx, minlength=BUCKETS).tolist()
    out["histogram"] = dict(zip(bucket_names(), counts, strict=True))
    out["nan_mismatch"] = int(nan_mismatch.sum())
    out["max_ulps"] = int(mag[finite].max()) if finite.any() else 0
    out["worst"] = None
    if finite.any():
        flat = np.where(finite, mag, -1)
        r, c = np.unravel_index(int(np.argmax(flat)), got.shape)
        out["worst"] = {"row": int(r), "column": int(c), "got": int(got[r, c]),
                        "want": int(want[r, c]), "ulps": int(dist[r, c])}
    elif nan_mismatch.any():
        r, c = np.argwhere(nan_mismatch)[0]
        out["worst"] = {"row": int(r), "column": int(c), "got": int(got[r, c]),
                        "want": int(want[r, c]), "ulps": None}
    return out


MAP_SHADES = " .:-=#"  # no difference; 1 ulp; 2; 3-4; 5-16; more
MAP_NAN = "N"


def difference_levels(d_fmt: str, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per element of D, how far ``got`` is from ``want``: 0 the same word,
    1 to 5 for |difference| of 1, 2, 3-4, 5-16, more ulps (integers: units),
    6 where one side alone is NaN (MAP_SHADES, MAP_NAN)."""
    got, want = np.asarray(got, np.uint32), np.asarray(want, np.uint32)
    fmt = get_format(d_fmt)
    differ = words_differ(fmt.name, got, want)
    if fmt.kind.name == "INT":
        mag = np.abs((got.astype(np.int64) - want.astype(np.int64) + (1 << 31)) % (1 << 32)
                     - (1 << 31))
        nan_one = np.zeros(got.shape, bool)
    else:
        mag = np.abs(ulp_distance(fmt, got, want))
        nan_one = (decode(fmt, got).cls == Class.NAN) != (decode(fmt, want).cls == Class.NAN)
    level = np.select([~differ, mag <= 1, mag <= 2, mag <= 4, mag <= 16], [0, 1, 2, 3, 4], 5)
    return np.where(nan_one, 6, level).astype(np.uint8)


def block_max(level: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``level`` (M, N) cut into at most ``rows`` x ``cols`` blocks (as even as
    the sizes allow), each the largest level inside it."""
    m, n = level.shape
    r_edges = np.linspace(0, m, min(rows, m) + 1).astype(int)
    c_edges = np.linspace(0, n, min(cols, n) + 1).astype(int)
    by_rows = np.maximum.reduceat(level, r_edges[:-1], axis=0)
    return np.maximum.reduceat(by_rows, c_edges[:-1], axis=1)


def difference_map(d_fmt: str, got: np.ndarray, want: np.ndarray, rows: int = 16,
                   cols: int = 48) -> list[str]:
    """A picture of where two products differ and by how much: D cut into at
    most ``rows`` x ``cols`` blocks, each one character for the largest
    |difference| in ulps inside it (MAP_SHADES: none, 1, 2, 3-4, 5-16, more;
    MAP_NAN where one side alone is NaN)."""
    shades = MAP_SHADES + MAP_NAN
    blocks = block_max(difference_levels(d_fmt, got, want), rows, cols)
    return ["".join(shades[v] for v in row) for row in blocks]
