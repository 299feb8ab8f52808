"""``dot``: one instruction per case on raw words, every word checked first.

The words are the arrays' own bits: unsigned integer arrays as they are
(uint32, and uint64 for the 64-bit words of f64, are used without a copy),
a signed array of the format's own width as its bits (``x.view(np.int64)``
of f64 words of any sign), Python ints of any size. Float arrays are
values, not words, and are refused with the hint to pass ``.view()`` words.
A word wider than its format, a negative word of a narrower array, scales
and masks a datapath does not take, a mask past its sparsity pattern and a
datapath the ISA table or the GPU's architecture lacks are refused naming
the argument; the checks are vectorized, one pass over each array.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tcprobe.models import fastpath, numba_internals
from tcprobe.models.cases import Cases, CasesError
from tcprobe.models.datapath import Datapath, DatapathError
from tcprobe.models.formats import FormatError, get_format
from tcprobe.models.model import FixedPointModel

from .choice import check_datapath, gpu_name, model_for
from .mainloop import kept_units
from .operands import MatmulError, has_masked_entries, is_torch, torch_dense

_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def words_of(x, what: str, fmt: str, ndim: int, scan: bool = True) -> np.ndarray:
    """The unsigned words of ``x`` (argument ``what``) for format ``fmt``,
    at least ``ndim``-D; MatmulError naming ``what`` otherwise. ``scan=False``
    leaves the scan for bits above the format to a kernel that makes it as it
    reads the words (the engine's)."""
    if has_masked_entries(x):
        raise MatmulError(f"{what}: a masked array with masked entries (whose words would be "
                          f"used as they are): pass {what}.filled(value)")
    if is_torch(x):  # a torch tensor's words: its integer storage, read exactly
        if x.is_floating_point() or x.is_complex():
            bits = x.element_size() * 8
            raise MatmulError(f"{what}: a torch {str(x.dtype).removeprefix('torch.')} tensor "
                              f"holds values, not words; pass its raw words "
                              f"(x.view(torch.int{bits}))")
        x = torch_dense(x, what).numpy()
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if not arr.dtype.isnative:  # the other byte order: the same words, made native
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if arr.dtype.kind in "fO" and not isinstance(x, np.ndarray):
        flat = np.asarray(x, dtype=object).ravel()
        if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in flat):
            try:
                arr = np.array(x, dtype=np.uint64)  # Python ints past 2**63
            except (OverflowError, TypeError, ValueError):
                raise MatmulError(f"{what}: words must be integers from 0 to "
                                  f"{get_format(fmt).word_mask:#x}") from None
    kind = arr.dtype.kind
    if kind not in "iu" and (kind in "fc" or str(arr.dtype) in ("bfloat16",)
                             or arr.dtype.name.startswith("float")):
        raise MatmulError(f"{what}: a {arr.dtype} array holds values, not words; pass its raw "
                          f"words (x.view(np.uint{arr.dtype.itemsize * 8}))")
    if kind not in "iu":
        raise MatmulError(f"{what}: words must be an integer array, not {arr.dtype}")
    if kind == "i":
        width = get_format(fmt).word_mask.bit_length()
        if arr.dtype.itemsize * 8 == width:  # the format's own width: the bits
            arr = arr.view(_VIEW[arr.dtype.itemsize])
        elif arr.size and int(arr.min()) < 0:
            raise MatmulError(f"{what}: a word is negative ({int(arr.min())}); words are "
                              f"unsigned {fmt} bit patterns")
    if arr.ndim < ndim:
        arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    if arr.ndim != ndim:
        raise MatmulError(f"{what} must be {ndim}-D (or {ndim - 1}-D for one case), "
                          f"not of shape {arr.shape}")
    limit = get_format(fmt).word_mask
    if scan and arr.size and int(arr.max()) > limit:
        raise MatmulError(f"{what}: a word does not fit {fmt} ({int(arr.max()):#x} > {limit:#x})")
    if arr.dtype.itemsize < 4 or (arr.dtype.itemsize == 4 and arr.dtype.kind == "i"):
        arr = arr.astype(np.uint32)  # the engine's word: one widening copy, never a wrap
    return arr


def refuse_unused(dp: Datapath, *, scales: bool = False, mask: bool = False,
                  scale_name: str = "scale_a", mask_name: str = "active") -> None:
    """Scales given to a datapath without block scales, or a sparse mask to a
    dense one: an error naming the argument (``tcprobe.dot`` and ``run-case``)."""
    if scales and not dp.block_scaled:
        raise MatmulError(f"{scale_name}: {dp.id} takes no block scales")
    if mask and not dp.sparse:
        raise MatmulError(f"{mask_name}: {dp.id} is dense; a mask is for sparse datapaths")


def _mask(active, dp: Datapath, shape) -> np.ndarray | None:
    refuse_unused(dp, mask=active is not None)
    if not dp.sparse:
        return None
    if active is None:
        raise MatmulError(f"active: {dp.id} is sparse; give the active K positions "
                          f"(cases, {dp.k}) of booleans")
    m = np.asarray(active)
    if m.dtype.kind not in "biu" or (m.dtype.kind != "b" and m.size and (
            int(m.min()) < 0 or int(m.max()) > 1)):
        raise MatmulError("active: the mask holds booleans (or 0 and 1)")
    m = np.atleast_2d(m.astype(bool, copy=False))
    if m.shape != shape:
        raise MatmulError(f"active is {m.shape} but a is {shape}")
    kept_units(dp, m, "active")
    return m


def _scales(sa, sb, dp: Datapath, cases: int):
    refuse_unused(dp, scales=sa is not None or sb is not None)
    if not dp.block_scaled:
        return None, None
    out = []
    for what, s in (("scale_a", sa), ("scale_b", sb)):
        if s is None:
            raise MatmulError(f"{what}: {dp.id} needs {dp.n_scales} {dp.scale_type} scale "
                              "codes per case")
        w = words_of(s, what, dp.scale_type, 2)
        if w.shape != (cases, dp.n_scales):
            raise MatmulError(f"{what} is {w.shape} but {dp.id} takes ({cases}, {dp.n_scales})")
        out.append(w)
    return tuple(out)


def _resolve(datapath, gpu, model):
    """(Datapath, Model) of dot's arguments, every one checked."""
    try:
        dp = datapath if isinstance(datapath, Datapath) else Datapath.parse(str(datapath))
    except (DatapathError, FormatError) as e:
        raise MatmulError(f"datapath: {e}") from None
    name = gpu_name(gpu) if gpu is not None else None
    check_datapath(dp, name, "datapath")
    if name is None and model is None and dp.family != "tcgen05":
        raise MatmulError(f"gpu: {dp.id} needs gpu= (or model=) to pick its model")
    return dp, model_for(dp, name, model)


@lru_cache(maxsize=128)
def _resolved(datapath, gpu):
    """_resolve of a datapath and GPU with the profile's model, kept (an
    error is raised again on every call: lru_cache keeps no exception)."""
    return _resolve(datapath, gpu, None)


_U32 = np.dtype(np.uint32)
_READY: dict = {}  # (datapath, gpu) -> its lane kernel, once it has run here (only grows)


def _ready_words(key, dp, mdl, a, b, c, scale_a, scale_b, active):
    """The words straight from the lane kernel where nothing needs checking
    or preparing: C-contiguous uint32 arrays of the right shapes, a
    fixed-point model whose kernel already ran here and reads the words as
    given, one thread's batch. None otherwise, and where a word has bits
    above its format (the full path then names it): a loop of small batches
    pays the kernel's call, not the checks' (issue 37: no cliff)."""
    if (scale_a is not None or scale_b is not None or active is not None
            or type(a) is not np.ndarray or type(b) is not np.ndarray
            or type(c) is not np.ndarray or not isinstance(mdl, FixedPointModel)):
        return None
    if (a.dtype != _U32 or b.dtype != _U32 or c.dtype != _U32 or a.ndim != 2
            or a.shape != b.shape or a.shape[1] != dp.k or c.shape != (a.shape[0],)
            or a.shape[0] >= fastpath.MIN_CASES_PER_JOB or not a.flags.c_contiguous
            or not b.flags.c_contiguous or not c.flags.c_contiguous):
        return None
    if not numba_internals.ir_kernels():
        return None  # TCPROBE_KERNEL=plain: the numba kernels only
    kernel = _READY.get(key)
    if kernel is None:
        kernel = fastpath.ready_lane_kernel(dp, mdl.params)
        if kernel is None:
            return None
        _READY[key] = kernel
    out = np.empty(a.shape[0], np.uint32)
    return None if kernel(a, b, c, out) else out


def dot(a, b, c, *, datapath, gpu=None, model=None, scale_a=None, scale_b=None, active=None):
    """Output words of one instruction per case on raw words: ``a``, ``b``
    (cases, K) or (K,), ``c`` (cases,) or a scalar, ``datapath`` an id or a
    Datapath; the model is ``gpu``'s profile or ``model`` (a name, JSON or
    Model of this datapath). Scales (cases, n_scales) where block-scaled and
    the sparse ``active`` mask (cases, K) where sparse. Returns uint32 words
    (uint64 for f64; a scalar for one 1-D case)."""
    numba_internals.kernel_form()  # a misspelt TCPROBE_KERNEL, on every path (not only the lanes')
    if model is None and isinstance(datapath, str | Datapath) and (gpu is None
                                                                    or isinstance(gpu, str)):
        dp, mdl = _resolved(datapath, gpu)  # a loop of small calls resolves it once
        out = _ready_words((datapath, gpu), dp, mdl, a, b, c, scale_a, scale_b, active)
        if out is not None:
            return out
    else:
        dp, mdl = _resolve(datapath, gpu, model)
    single = np.ndim(a) == 1
    scan = not isinstance(mdl, FixedPointModel)  # the engine scans every word it reads
    aw = words_of(a, "a", dp.a_type, 2, scan)
    bw = words_of(b, "b", dp.b_type, 2, scan)
    cw = words_of(c, "c", dp.c, 1, scan)
    if np.ndim(c) == 0 and cw.shape[0] == 1 and aw.shape[0] != 1:
        cw = np.repeat(cw, aw.shape[0])  # a scalar C is every case's C, as the doc says
    if aw.shape != bw.shape:
        raise MatmulError(f"b is {bw.shape} but a is {aw.shape}")
    if aw.shape[1] != dp.k:
        raise MatmulError(f"a has K={aw.shape[1]} but {dp.id} has K={dp.k}")
    if cw.shape[0] != aw.shape[0]:
        raise MatmulError(f"c has {cw.shape[0]} words but there are {aw.shape[0]} cases")
    sa, sb = _scales(scale_a, scale_b, dp, aw.shape[0])
    mask = _mask(active, dp, aw.shape)
    try:
        cases = Cases(aw, bw, cw, sa, sb, mask)
        cases.check(dp, words=False)
        out = mdl.evaluate(cases)
    except CasesError as e:
        raise MatmulError(f"a: {e}") from None
    return out[0] if single else out
