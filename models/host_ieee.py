"""The host's IEEE float arithmetic where it gives the engine's words.

The engine computes an f32 add as a K=1 fused dot (an exact sum, one RNE
rounding, the engine's NaN word 0x7FFFFFFF for any NaN result); numpy's
float32 add gives the same words while the FPU rounds to nearest even and
keeps subnormals (no flush-to-zero, no denormals-are-zero). :func:`exact`
probes that mode (a library loaded later may set FTZ), :func:`add_f32`
adds on the host. ``tests/test_epilogue_host.py`` holds the host add equal
to the engine's, every special pair and 10^6 random words; the matrix
epilogue (``tcprobe.matrix.epilogue``) and the split-K fp8 ``mma.sync``
chain's per-tile adds (:func:`..structures.ieee_add`) use it.
TCPROBE_EPILOGUE=engine turns it off: the engine computes.
"""

from __future__ import annotations

import os

import numpy as np

NAN_WORD = 0x7FFFFFFF  # the engine's NaN word (EngineParams' default)

# exact()'s probes, x*y + z in two roundings, in float32 and float64: a
# subnormal input (DAZ) and a subnormal product (FTZ), then three ties that
# only round-to-nearest-even resolves as listed.
_PROBE32 = (np.array([1, 0x00800000, 0x3F800000, 0x3F800001, 0xBF800000], np.uint32)
            .view(np.float32),  # 2**-149, 2**-126, 1, 1 + 2**-23, -1
            np.array([1.0, 0.5, 1.0, 1.0, 1.0], np.float32),
            np.array([0.0, 0.0, 2.0 ** -24, 2.0 ** -24, -(2.0 ** -24)], np.float32),
            np.array([1, 0x00400000, 0x3F800000, 0x3F800002, 0xBF800000], np.uint32).tobytes())
_PROBE64 = (np.array([1, 0x0010000000000000, 0x3FF0000000000000, 0x3FF0000000000001],
                     np.uint64).view(np.float64),  # 2**-1074, 2**-1022, 1, 1 + 2**-52
            np.array([1.0, 0.5, 1.0, 1.0]), np.array([0.0, 0.0, 2.0 ** -53, 2.0 ** -53]),
            np.array([1, 0x0008000000000000, 0x3FF0000000000000, 0x3FF0000000000002],
                     np.uint64).tobytes())


class EpilogueSwitchError(ValueError):
    """TCPROBE_EPILOGUE set to neither host nor engine."""


def engine_forced() -> bool:
    """Whether TCPROBE_EPILOGUE=engine (any case) forbids the host's floats;
    host or unset: no. Anything else ('nope', a blank) is an
    EpilogueSwitchError naming it (it was read as host, silently); the
    command line asks before a command runs."""
    chosen = os.environ.get("TCPROBE_EPILOGUE")
    if chosen is None:
        return False
    mode = chosen.strip().lower()
    if mode not in ("host", "engine"):
        raise EpilogueSwitchError(f"TCPROBE_EPILOGUE={chosen!r} is neither host (the default) "
                                  "nor engine: set one of those, or unset it")
    return mode == "engine"


def exact() -> bool:
    """Whether the host's float32/float64 arithmetic rounds to nearest even
    and keeps subnormals now (TCPROBE_EPILOGUE=engine: never)."""
    if engine_forced():
        return False
    with np.errstate(all="ignore"):
        return ((_PROBE32[0] * _PROBE32[1] + _PROBE32[2]).tobytes() == _PROBE32[3]
                and (_PROBE64[0] * _PROBE64[1] + _PROBE64[2]).tobytes() == _PROBE64[3])


def add_f32(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """f32 words of x + y (RNE) on the host, a NaN result the engine's NaN
    word; the caller has checked :func:`exact`. Arrays of one shape."""
    with np.errstate(all="ignore"):
        r = (np.asarray(x, np.uint32).view(np.float32)
             + np.asarray(y, np.uint32).view(np.float32)).view(np.uint32)
    return np.where((r & 0x7FFFFFFF) > 0x7F800000, np.uint32(NAN_WORD), r)
