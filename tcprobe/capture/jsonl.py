"""Recorded hardware vectors as JSON Lines: one case a line, written by hand.

Fields (words as hex strings; optional fields may be absent or null)::

    name            free text, shown in reports
    gpu             the GPU that produced ``d`` (e.g. "B200")
    family          mma | wgmma | tcgen05
    kind            the PTX kind (tf32, f16, f8f6f4, i8, mxf8f6f4, mxf4,
                    mxf4nvf4); for mma and wgmma the input type
    a_type, b_type  element types of A and B
    d_type          output type; ``c_type`` (optional) defaults to it
    k               K of the dot product
    a, b            K words each (raw codes of their type; a tf32 is an f32
                    word, a bf16 16 bits, an e2m1 4 bits); fewer than K words
                    are padded with +0. Sparse: ``a`` may hold the K/2 stored
                    values, placed at the positions the metadata selects.
    c               one word of c_type
    scale_type      ue8m0 | ue4m3 (block-scaled kinds)
    scale_vec       1, 2 or 4
    scale_a, scale_b   one word or a list (one per scale block)
    sparse_metadata one 32-bit word or a list (tcgen05 selector nibbles)
    saturate        integer kinds: clamp instead of wrap
    d               the output word the hardware wrote

Other fields (``source``, notes) are kept out of the arithmetic and ignored.
Blank lines and lines starting with ``//`` are skipped. Lines are grouped
into one capture per (gpu, datapath).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, DatapathError
from tcprobe.models.formats import FormatError, get_format

from . import Capture, CaptureError

REQUIRED = ("family", "kind", "a_type", "b_type", "d_type", "k", "a", "b", "c", "d")


def _word(v, where: str) -> int:
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v, 16) if v.lower().startswith("0x") else int(v, 16)
        except ValueError:
            pass
    raise CaptureError(f"{where}: {v!r} is not a hex word")


def _words(v, where: str) -> list[int]:
    if v is None:
        return []
    if isinstance(v, list):
        return [_word(x, where) for x in v]
    return [_word(v, where)]


def _datapath(rec: dict, where: str) -> Datapath:
    try:
        return Datapath(
            family=rec["family"], kind=rec["kind"], a_type=get_format(rec["a_type"]).name,
            b_type=get_format(rec["b_type"]).name, d_type=get_format(rec["d_type"]).name,
            k=int(rec["k"]), c_type=get_format(rec["c_type"]).name if rec.get("c_type") else None,
            scale_type=rec.get("scale_type") or None,
            scale_vec=int(rec["scale_vec"]) if rec.get("scale_vec") else (1 if rec.get("scale_type") else None),
            sparse=rec.get("sparse_metadata") not in (None, [], ""),
            saturate=bool(rec.get("saturate") or False),
        )
    except (DatapathError, FormatError, ValueError, TypeError) as e:
        raise CaptureError(f"{where}: {e}") from None


def _case(rec: dict, dp: Datapath, where: str):
    a, b = _words(rec["a"], where + " a"), _words(rec["b"], where + " b")
    active = None
    if dp.sparse:
        from tcprobe.models import sparsity

        meta = _words(rec["sparse_metadata"], where + " sparse_metadata")
        try:
            active = sparsity.active_positions(dp, np.array(meta, np.uint32))
        except ValueError as e:
            raise CaptureError(f"{where}: {e}") from None
        if len(a) == dp.k // 2:
            full = [0] * dp.k
            for w, pos in zip(a, sparsity.stored_positions(dp, np.array(meta, np.uint32)),
                              strict=False):
                full[pos] = w
            a = full
    for name, v in (("a", a), ("b", b)):
        if len(v) > dp.k:
            raise CaptureError(f"{where}: {name} has {len(v)} words but k is {dp.k}")
    a = a + [0] * (dp.k - len(a))
    b = b + [0] * (dp.k - len(b))
    n = dp.n_scales
    sa = _words(rec.get("scale_a"), where + " scale_a")
    sb = _words(rec.get("scale_b"), where + " scale_b")
    if dp.block_scaled:
        sa = sa * n if len(sa) == 1 else sa
        sb = sb * n if len(sb) == 1 else sb
        if len(sa) != n or len(sb) != n:
            raise CaptureError(f"{where}: {dp.id} needs {n} scale words for A and for B")
    return a, b, _word(rec["c"], where + " c"), sa, sb, active, _word(rec["d"], where + " d")


def read(path: Path) -> list[Capture]:
    """The captures in one .jsonl file, one per (gpu, datapath)."""
    groups: dict[tuple, list] = {}
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            where = f"{path}:{n}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise CaptureError(f"{where}: not JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise CaptureError(f"{where}: a line must be a JSON object")
            missing = [f for f in REQUIRED if f not in rec]
            if missing:
                raise CaptureError(f"{where}: missing field(s) {', '.join(missing)}")
            dp = _datapath(rec, where)
            row = _case(rec, dp, where)
            groups.setdefault((rec.get("gpu") or "unknown", dp), []).append((rec.get("name") or f"line {n}", row))
    if not groups:
        raise CaptureError(f"{path}: no vectors")
    out = []
    for (gpu, dp), rows in groups.items():
        names = [r[0] for r in rows]
        cols = list(zip(*[r[1] for r in rows], strict=True))
        active = None if not dp.sparse else np.array(cols[5], bool)
        cases = Cases(np.array(cols[0], np.uint32), np.array(cols[1], np.uint32),
                      np.array(cols[2], np.uint32),
                      np.array(cols[3], np.uint32) if dp.block_scaled else None,
                      np.array(cols[4], np.uint32) if dp.block_scaled else None,
                      active, names)
        try:
            cases.check(dp)
        except ValueError as e:
            raise CaptureError(f"{path}: {e}") from None
        out.append(Capture(str(path), dp, cases, np.array(cols[6], np.uint32), gpu,
                           f"{gpu}/{dp.id} ({Path(path).name})", {"names": names}))
    return out
