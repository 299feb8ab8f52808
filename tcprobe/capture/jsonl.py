"""Recorded hardware vectors as JSON Lines: one case a line, written by hand.

Fields (words as hex strings or JSON integers; optional fields may be
absent or null; names of families, kinds and types in any case). The
schema is :data:`tcprobe.schema.VECTOR`, checked line by line before
anything runs; a bad field is an error naming the file, the line, the
field and what is allowed::

    name            free text, shown in reports
    gpu             the GPU that produced ``d`` (e.g. "B200")
    family          mma | wgmma | tcgen05
    kind            the PTX kind (tf32, f16, f8f6f4, i8, mxf8f6f4, mxf4,
                    mxf4nvf4); for mma and wgmma the input type
    a_type, b_type  element types of A and B
    d_type          output type; ``c_type`` (optional) defaults to it
    k               K of one instruction (the ISA table: mma.sync m16n8k16
                    bf16 has 16; mma f16 8 or 16; twice that for sparse)
    a, b            K words each (raw codes of their type; a tf32 is an f32
                    word, a bf16 16 bits, an e2m1 or s4/u4 4 bits, a b1 one
                    bit, each its own word, not packed; an f64 64 bits: hex words
                    of up to 16 digits, "0x3ff0000000000000" is 1.0, the DMMA
                    datapaths mma.f64.f64.k4/k8/k16); fewer than K words
                    are padded with +0. Sparse: ``a`` may hold the K/2 stored
                    values, placed at the positions the metadata selects.
    c               one word of c_type
    scale_type      ue8m0 | ue4m3 (block-scaled kinds)
    scale_vec       1, 2 or 4 (also "4X", "4x", "x4", "scale_vec::4X")
    scale_a, scale_b   one word or a list (one per scale block)
    sparse_metadata one 32-bit word or a list: one nibble per chunk of K,
                    chunk 0 in the low bits (tcgen05's selectors; for mma.sp
                    and wgmma.sp one row's metadata: two 2-bit indices a
                    nibble, the low field first, any two distinct ones;
                    mma.sp::ordered_metadata only increasing ones)
    ordered_metadata  mma.sp::ordered_metadata (true/false)
    saturate        integer kinds: clamp instead of wrap (.satfinite; true/false)
    bitop           b1 (mma .b1): "and" (.and.popc) or "xor" (.xor.popc)
    d               the output word the hardware wrote

``source``, ``note``, ``notes``, ``comment`` and any field whose name
starts with ``_`` are kept out of the arithmetic; any other field is an
error (a misspelt ``scale_vec`` would otherwise be silently dropped). A
UTF-8 byte-order mark is allowed. Blank lines and lines starting with ``//`` are skipped. Lines are grouped
into one capture per (gpu, datapath).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tcprobe.jsontext import loads as load_json
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, DatapathError
from tcprobe.models.formats import FormatError, get_format
from tcprobe.schema import SchemaError, check_vector

from . import Capture, CaptureError


def _datapath(rec: dict) -> Datapath:
    """The datapath of a record already read against the schema."""
    return Datapath(
        family=rec["family"], kind=rec["kind"], a_type=rec["a_type"], b_type=rec["b_type"],
        d_type=rec["d_type"], k=rec["k"], c_type=rec["c_type"],
        scale_type=rec.get("scale_type"), scale_vec=rec.get("scale_vec"),
        sparse=bool(rec.get("sparse_metadata")), saturate=bool(rec.get("saturate", False)),
        bitop=rec.get("bitop"), ordered=bool(rec.get("ordered_metadata", False)))


def _case(rec: dict, dp: Datapath, where: str):
    a, b = list(rec["a"]), list(rec["b"])
    active = None
    if dp.sparse:
        from tcprobe.models import sparsity

        meta = rec["sparse_metadata"]
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
    sa, sb = list(rec.get("scale_a", [])), list(rec.get("scale_b", []))
    if dp.block_scaled:
        sa = sa * n if len(sa) == 1 else sa
        sb = sb * n if len(sb) == 1 else sb
        if len(sa) != n or len(sb) != n:
            raise CaptureError(f"{where}: {dp.id} needs {n} scale words for A and for B "
                               f"(or one, used for every block)")
    elif sa or sb:
        raise CaptureError(f"{where}: scale_a/scale_b given but {dp.kind} is not block-scaled")
    return a, b, rec["c"], sa, sb, active, rec["d"]


def _dtype(fmt: str):
    return get_format(fmt).dtype  # uint32, or uint64 for the 64-bit f64 words


def read(path: Path) -> list[Capture]:
    """The captures in one .jsonl file, one per (gpu, datapath)."""
    groups: dict[tuple, list] = {}
    with open(path, encoding="utf-8-sig", errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            if any("\udc80" <= ch <= "\udcff" for ch in line):
                raise CaptureError(f"{path}:{n}: not UTF-8 text")
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            where = f"{path}:{n}"
            try:
                rec = load_json(line)
            except json.JSONDecodeError as e:
                raise CaptureError(f"{where}: not JSON ({e.msg})") from None
            except RecursionError:
                raise CaptureError(f"{where}: JSON nested too deeply to be a vector") from None
            try:
                rec = check_vector(rec, where)
                dp = _datapath(rec)
            except (SchemaError, DatapathError, FormatError) as e:
                raise CaptureError(str(e) if str(e).startswith(where) else f"{where}: {e}") from None
            row = _case(rec, dp, where)
            groups.setdefault((rec.get("gpu") or "unknown", dp), []).append((rec.get("name") or f"line {n}", row))
    if not groups:
        raise CaptureError(f"{path}: no vectors")
    out = []
    for (gpu, dp), rows in groups.items():
        names = [r[0] for r in rows]
        cols = list(zip(*[r[1] for r in rows], strict=True))
        active = None if not dp.sparse else np.array(cols[5], bool)
        cases = Cases(np.array(cols[0], _dtype(dp.a_type)), np.array(cols[1], _dtype(dp.b_type)),
                      np.array(cols[2], _dtype(dp.c)),
                      np.array(cols[3], np.uint32) if dp.block_scaled else None,
                      np.array(cols[4], np.uint32) if dp.block_scaled else None,
                      active, names)
        try:
            cases.check(dp)
        except ValueError as e:
            raise CaptureError(f"{path}: {e}") from None
        out.append(Capture(str(path), dp, cases, np.array(cols[6], _dtype(dp.d_type)), gpu,
                           f"{gpu}/{dp.id} ({Path(path).name})", {"names": names}))
    return out
