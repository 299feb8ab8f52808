"""The compiled GEMM chain of a :class:`~.structures.SplitModel` whose C is
added last: the fp8 ``mma.sync`` of sm_90 and sm_100, which the compiler
runs as an unpack to f16 and a chain of f16 HMMAs (:mod:`.emulated`).

One instruction of the split model is: unpack A and B (exact), run the
sub-MMAs on their K positions in order, the first from +0 and each later one
from the one before, then add C in the output type, rounded
``c_add_rounding``. So the operands are unpacked once and each instruction
tile's K positions are reordered part after part; a tile is then a chain of
sub-tiles of the stage's f16 datapath from +0, which the fixed-point GEMM
kernel (:mod:`.gemm`, whose functions come in as ``kernels``, the one module
that calls these) computes for every (row, column) at once, and the add with the previous D is
one vector of IEEE adds (:func:`structures.ieee_add`). The same words as
:meth:`SplitModel.evaluate` case by case (tests/test_gemm_split.py).
"""

from __future__ import annotations

import numpy as np

from ..datapath import Datapath
from ..formats import convert, get_format
from ..model import FixedPointModel
from ..structures import SplitModel, ieee_add


def stage_model(model: SplitModel) -> FixedPointModel:
    """The sub-MMA every part runs: the stage's engine on the unpacked type."""
    dp = model.datapath
    t = model.unpack or dp.a_type
    size = len(model.parts[0])
    return FixedPointModel(f"{model.name}/stage", Datapath(dp.family, t, t, t, dp.d_type, size),
                           model.evidence, model.stage)


def supports(model, kernels) -> bool:
    """Whether :func:`words` computes this model's chain."""
    if not isinstance(model, SplitModel):
        return False
    dp = model.datapath
    if (model.c_entry != "last" or model.c_add_window is not None or model.c_convert
            or (model.acc_type and get_format(model.acc_type).name != get_format(dp.d_type).name)
            or dp.c != dp.d_type or dp.block_scaled or dp.sparse
            or len({len(p) for p in model.parts}) != 1):
        return False
    try:
        model.check_parts(dp.k)
    except ValueError:
        return False
    return kernels.supports(stage_model(model))


def _order(model: SplitModel, k: int) -> np.ndarray:
    """K positions of the whole operand with each instruction tile's parts in turn."""
    inner = np.concatenate([np.asarray(p, np.int64) for p in model.parts])
    step = model.datapath.k
    return (np.arange(0, k, step)[:, None] + inner[None, :]).ravel()


def decoders(model: SplitModel, a: np.ndarray, b: np.ndarray, kernels):
    """A and B unpacked, reordered and decoded for the stage, once (the
    structure :func:`gemm.decoders` gives, so callers slice its rows alike)."""
    dp = model.datapath
    if model.unpack:
        a = convert(a, dp.a_type, model.unpack).astype(np.uint32)
        b = convert(b, dp.b_type, model.unpack).astype(np.uint32)
    order = _order(model, a.shape[1])
    a2 = np.ascontiguousarray(a[:, order])
    b2 = np.ascontiguousarray(b[order])
    return kernels.decoders(stage_model(model), a2, b2)


def words(model: SplitModel, a: np.ndarray, b: np.ndarray, c: np.ndarray,
          tiles: tuple[int, int], decoded, jobs: int, kernels) -> np.ndarray:
    """D words (M, N) of the chain over instruction tiles ``tiles`` from C."""
    if decoded is None:
        decoded = decoders(model, a, b, kernels)
    stage = stage_model(model)
    per = len(model.parts)
    d_t = get_format(model.datapath.d_type).name
    acc = np.ascontiguousarray(c, dtype=np.uint32)
    zero = np.zeros_like(acc)
    for t in range(*tiles):
        part = kernels.gemm_words(stage, None, None, zero, (t * per, (t + 1) * per), decoded,
                                  jobs)
        acc = np.asarray(ieee_add(d_t, part.ravel(), acc.ravel(), model.c_add_rounding),
                         np.uint32).reshape(acc.shape)
    return acc
