"""One GEMM's schedule from the atlas, and where it comes from.

:func:`lookup` answers (gpu, op, formats, M, N, K, form, layout, batch) with a
:class:`Lookup`: the :class:`~tcprobe.matrix.schedule.Schedule`, its axes as
a dict, and its provenance:

* ``measured``: this GPU's library ran this op, formats, layout and shape;
  the schedule reproduced every word of the calls named in ``evidence``;
* ``predicted``: the split of a rule fitted on the measured shapes of the
  same kernel group (``rule`` names it and its leave-one-out figure), or a
  measured shape in another layout, batch or output format;
* ``default guess``: nothing measured or fitted covers it (``reason`` says
  why: no atlas for the GPU, M or N = 1 (gemv), M or N <= 16 with K <= 1200
  (gemmSN, public notes), int8): no split, and the forms measured on the H200 (tf32 operands RNE,
  addmm with beta = 1 adding C to the written product, fp8 promotion every 4
  wgmma) where the GPU has those instructions.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from numbers import Integral

from tcprobe.matrix.schedule import Schedule, from_value
from tcprobe.names import fold

from .predict import best_rule, distance, leave_one_out, points, predict_splits
from .store import BLOCK, FORMS, FP8, GROUPS, find, load

OPS = {"gemm": "gemm", "mm": "gemm", "matmul": "gemm", "addmm": "gemm", "linear": "gemm",
       "bmm": "gemm", "baddbmm": "gemm", "scaled_mm": "scaled_mm", "_scaled_mm": "scaled_mm"}
SPLIT_AXES = ("k_block", "split_k", "split_kind", "split_rule")
# Where cuBLASLt picked CUDA-core gemmSN kernels in public heuristic dumps
# (ALGO 11/16 at M 2-16, K up to about 1200: ../shared notes, Meta's cublas_match).
SMALL_MN, SMALL_K = 16, 1200


class AtlasError(ValueError):
    """Bad lookup arguments; the message names the argument."""


@dataclass(frozen=True)
class Lookup:
    schedule: Schedule
    axes: dict
    provenance: str  # measured, predicted, default guess
    evidence: tuple = ()
    rule: str = ""
    reason: str = ""
    kernel: dict = field(default_factory=dict)
    library: str = ""

    def describe(self) -> str:
        """One line: the provenance and what backs it."""
        if self.provenance == "measured":
            return f"measured ({self.library}; {len(self.evidence)} call(s), e.g. {self.evidence[0]})"
        if self.provenance == "predicted":
            return f"predicted ({self.rule})"
        return f"{self.provenance} ({self.reason})"

    def row(self) -> dict:
        return {"schedule": dict(self.axes), "provenance": self.provenance,
                "evidence": list(self.evidence), "rule": self.rule, "reason": self.reason}


def _arch(gpu: str) -> str | None:
    from tcprobe.models.profiles import profile_for_gpu

    try:
        return profile_for_gpu(gpu).arch
    except (KeyError, ValueError):
        return None


def default_axes(gpu: str, fmt: str, form: str) -> dict:
    """The default guess's schedule axes: no split, the forms as measured on the H200."""
    arch = _arch(gpu)
    if arch is None:  # AMD: hipBLASLt's schedule is unmeasured; the plain instruction chain
        return {}
    axes: dict = {}
    if fmt == "tf32":
        axes.update({"operand_round": "rne", "fma_on": "c"})
    if form == "addmm_beta1":
        axes["c"] = "output"
    if form == "scaled_mm" and arch == "sm_90":
        axes.update({"instr": "wgmma", "promote": 4})
    if form == "scaled_mm_fast" and arch == "sm_90":
        axes["instr"] = "wgmma"
    return axes


# fp8 formats of GPUs with no atlas (AMD's fnuz): looked up, answered with a default guess
OTHER_FP8 = ("e4m3fnuz", "e5m2fnuz")
LAYOUT_SIDES = ("row", "col")


def _layout(layout):
    """``layout`` as 'A/B', each row or col (names.md: any case, stripped), or None."""
    if layout is None:
        return None
    sides = layout.split("/") if isinstance(layout, str) else None
    if sides is None or len(sides) != 2 or any(fold(x) not in LAYOUT_SIDES for x in sides):
        raise AtlasError(f"layout: {layout!r} is not A's and B's storage as 'row/row', "
                         "'row/col', 'col/row' or 'col/col'")
    return "/".join(fold(x) for x in sides)


def _format_text(d):
    """A format's name as the user wrote it, or the format a dtype names
    (np.float16, ml_dtypes.bfloat16, torch.bfloat16: the names tcprobe.matmul
    reads A and B by; float32 is tf32, as there); anything else as it is."""
    if isinstance(d, str):
        return d
    from tcprobe.matrix.operands import INPUT_FORMATS

    name = str(d).removeprefix("torch.") if type(d).__module__.startswith("torch") else None
    if name is None:
        try:
            import numpy as np

            name = np.dtype(d).name
        except (TypeError, ValueError):
            return d
    if name not in INPUT_FORMATS:
        raise AtlasError(f"dtypes: {d!r} is no operand format (the dtypes tcprobe.matmul "
                         f"reads: {', '.join(INPUT_FORMATS)})")
    return INPUT_FORMATS[name]


def _size(what: str, v) -> int:
    """An integer of at least 0: int, numpy's and torch's integers, a 0-d
    integer array or tensor (what __index__ takes); never a bool or a float."""
    if isinstance(v, bool) or "bool" in str(getattr(v, "dtype", "")):
        raise AtlasError(f"{what} must be an integer of at least 0, not {v!r}")
    try:
        i = operator.index(v) if not isinstance(v, Integral) else int(v)
    except TypeError:
        raise AtlasError(f"{what} must be an integer of at least 0, not {v!r}") from None
    if i < 0:
        raise AtlasError(f"{what} must be an integer of at least 0, not {v!r}")
    return i


def _norm(op, dtypes, m, n, k, form, layout, batch, atlas: bool = True):
    op, form = fold(op), fold(form)
    if op not in OPS:
        raise AtlasError(f"op: {op!r} is not one of {', '.join(sorted(OPS))}")
    op = OPS[op]
    if isinstance(dtypes, str) or not isinstance(dtypes, list | tuple):
        dtypes = (dtypes,)  # one format: its name, or a dtype (numpy, ml_dtypes, torch)
    dtypes = tuple(_format_text(d) for d in dtypes)
    if not 1 <= len(dtypes) <= 3 or any(not isinstance(d, str) for d in dtypes):
        raise AtlasError(f"dtypes: a format or (a, b[, d]) formats, not {dtypes!r}")
    dtypes = tuple(fold(d) for d in dtypes)
    a = dtypes[0]
    b = dtypes[1] if len(dtypes) > 1 else a
    d = dtypes[2] if len(dtypes) > 2 else None
    if not atlas and a in OTHER_FP8 and b == a:  # no atlas to hold it: a default guess
        pass
    elif a not in GROUPS or b != a:
        raise AtlasError(f"dtypes: the atlas knows A = B in {', '.join(GROUPS)}, not {a} x {b}")
    m, n, k, batch = (_size(what, v) for what, v in (("m", m), ("n", n), ("k", k),
                                                     ("batch", batch)))
    if form is None:
        form = "scaled_mm" if op == "scaled_mm" else "plain"
    if form not in FORMS:
        raise AtlasError(f"form: {form!r} is not one of {', '.join(FORMS)}")
    if (op == "scaled_mm") != form.startswith("scaled_mm"):
        raise AtlasError(f"form: {form} is not a form of {op}")
    if (a in FP8 + OTHER_FP8) != (op == "scaled_mm"):
        raise AtlasError(f"dtypes: {a} is not an operand format of {op}")
    return op, a, d, form, _layout(layout), batch, (m, n, k)


def lookup(gpu: str, op: str, dtypes, m: int, n: int, k: int, *, form: str | None = None,
           layout: str | None = None, batch: int = 1) -> Lookup:
    """The schedule of one GEMM (module doc). ``op``: gemm (mm, matmul,
    addmm, linear, bmm) or scaled_mm; ``dtypes``: the A format (bf16, f16,
    tf32, e4m3, e5m2) or (A, B[, D]); ``form``: plain, addmm_beta1, bias,
    scaled_mm, scaled_mm_fast; ``layout``: "row/row", "row/col", ... (A's and
    B's storage; None: any); ``batch``: the number of matrices (bmm)."""
    import tcprobe.matrix.choice as choice
    from tcprobe.matrix.operands import MatmulError

    gpu = choice.gpu_name(gpu)
    data = load(gpu)
    op, fmt, d, form, layout, batch, (m, n, k) = _norm(op, dtypes, m, n, k, form, layout,
                                                       batch, atlas=data is not None)
    try:  # a format the GPU has no instruction for has no schedule to guess (one gate)
        choice.library_datapath(gpu, fmt, "dtypes:")
    except MatmulError as e:
        raise AtlasError(str(e)) from None
    if 0 in (m, n, k, batch):
        return empty_product(m, n, k, batch)
    guess_reason = None
    if data is None:
        guess_reason = f"no atlas for {gpu} (atlases: {', '.join(_gpus()) or 'none'})"
    elif m == 1 or n == 1:
        guess_reason = (f"M or N = 1 ({m}x{n}x{k}): cuBLAS runs CUDA-core gemv kernels there "
                        "(public notes), whose lane order is unmeasured (schedule "
                        "kernel='fma' models the family; fit-gemm reads it from a capture)")
    elif min(m, n) <= SMALL_MN and k <= SMALL_K and not find(gpu, op, fmt, m, n, k):
        guess_reason = (f"M or N <= {SMALL_MN} with K <= {SMALL_K} ({m}x{n}x{k}): cuBLASLt may "
                        "pick a CUDA-core gemmSN kernel there (public notes from H100 and GB300, "
                        "unverified here), whose lane order is unmeasured (kernel='fma' models "
                        "the family)")
    if guess_reason is not None:
        return _guess(gpu, fmt, form, guess_reason)
    library = data["library"]
    near = None
    for e in find(gpu, op, fmt, m, n, k):
        f = e["forms"].get(form)
        if f is None:
            continue
        notes = []
        if layout is not None and layout != e["layout"]:
            notes.append(f"this shape measured with layout {e['layout']}, not {layout}")
        if batch != 1:
            notes.append(f"this shape measured unbatched, not as a batch of {batch}")
        if d is not None and d != f["d"]:
            notes.append(f"this shape measured with D in {f['d']}, not {d}")
        if not notes:
            return Lookup(from_value(f["schedule"]), dict(f["schedule"]), "measured",
                          tuple(f["evidence"]), kernel=e["kernel"], library=library)
        near = near or Lookup(from_value(f["schedule"]), dict(f["schedule"]), "predicted",
                              rule="; ".join(notes) + f" ({library})", kernel=e["kernel"],
                              library=library)
    if near is not None:
        return near
    return _predicted(gpu, fmt, form, m, n, k, batch, library)


def empty_product(m: int, n: int, k: int, batch: int = 1) -> Lookup:
    """The schedule of a GEMM with a dimension of 0: none to choose (no split,
    no order), and every word known exactly (+0, or the epilogue on C)."""
    shape = f"{m}x{n}x{k}" + (f", a batch of {batch}" if batch != 1 else "")
    return Lookup(from_value({}), {}, "exact", reason=f"an empty product ({shape}: +0 or C)")


def _gpus():
    from .store import gpus

    return gpus()


def _guess(gpu, fmt, form, reason) -> Lookup:
    axes = default_axes(gpu, fmt, form)
    return Lookup(from_value(axes), axes, "default guess", reason=reason)


def _predicted(gpu, fmt, form, m, n, k, batch, library) -> Lookup:
    group = GROUPS[fmt]
    block = BLOCK[group]
    rule = best_rule(gpu, group)
    pts = points(gpu, group, "bias" if form == "bias" else "plain")
    right, total, _ = leave_one_out(gpu)[rule][group]
    if not pts:
        return _guess(gpu, fmt, form, f"no {group} shape measured on {gpu}")
    if form == "bias" and group == "tf32":  # its own kernel (the bias epilogue's serial splits)
        near = min(pts, key=lambda p: (distance(p, m, n, k), p[:3]))
        split = {a: near[5][a] for a in SPLIT_AXES if a in near[5]}
        if split.get("split_k", 1) > 1:
            kb = split.get("k_block") or 8
            split["split_k"] = min(split["split_k"], -(-k // kb))
            if split["split_k"] == 1:
                split = {}
        how = (f"the split of the nearest measured tf32 bias shape {near[0]}x{near[1]}x{near[2]} "
               f"(nearest rule; {len(pts)} tf32 bias shapes measured)")
    else:
        splits = predict_splits(rule, pts, m, n, k, block)
        split = ({} if splits == 1 else {"k_block": block, "split_k": splits,
                                         "split_kind": "parallel", "split_rule": "ceil"})
        how = (f"split count by rule '{rule}' fitted on {len(pts)} measured {group} shapes of "
               f"{gpu}: {right} of {total} held-out shapes right (leave-one-out)")
    axes = {a: v for a, v in _template(gpu, fmt, form, bool(split)).items()
            if a not in SPLIT_AXES}
    axes.update(split)
    if batch != 1:
        how += f"; batched kernels (a batch of {batch}) unmeasured"
    return Lookup(from_value(axes), axes, "predicted", rule=f"{how} ({library})",
                  library=library)


def _template(gpu, fmt, form, split: bool) -> dict:
    """A measured schedule of this group and form, split or not like the prediction."""
    from .store import entries

    group = GROUPS[fmt]
    best = None
    for e in entries(gpu):
        f = e["forms"].get(form)
        if GROUPS.get(e["a"]) != group or f is None:
            continue
        is_split = f["schedule"].get("split_k", 1) > 1
        if best is None or is_split == split:
            best = f["schedule"]
            if is_split == split:
                break
    if best is None:
        return default_axes(gpu, fmt, form)
    return dict(best)
