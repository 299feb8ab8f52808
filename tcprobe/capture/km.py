"""Reader for the a/b/c/d text layout of the Khattak-Mikaitis captures.

Layout (``../shared/hwdata/README.md``): ``GPU/FORMAT/{a,b}_GPU_FORMAT.txt``
hold K f32 words a line in hex (values exact in FORMAT); ``c_GPU_fp32.txt``
one f32 word a line in 32 binary digits; ``d_GPU_fp32.txt`` and
``d_GPU_fp16.txt`` the output, 32 binary digits (an f16 output widened to
f32). For the f16 outputs the authors converted C to f16 (RNE) before the
MMA, so the cases carry that f16 C.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import FormatError, Rounding, convert, from_container, get_format

from . import Capture, CaptureError

# Harness facts of the published captures (README of ../shared/hwdata): for
# H100 and H200 fp8 the authors ran "D = AB + D where D is zero for fp8 with
# WGMMA", so for the f32 output the hardware's C was +0 and the c file is not
# what it used. For their f16 outputs the C used is the c file rounded to f16
# (`tcprobe fit`: the hopper-fp8-emulated profile then misses none of them).
C_WAS_ZERO = {("H100", "e4m3", "f32"), ("H100", "e5m2", "f32"),
              ("H200", "e4m3", "f32"), ("H200", "e5m2", "f32")}
# The same f32 outputs came from wgmma, not mma.sync: besides the authors'
# words, they match a native fp8 datapath (13 kept bits) that the emulated
# mma.sync (two f16 HMMAs, models/emulated.py) cannot give: it misses 2,989
# and 1,797 of them (`tcprobe fit`, issue 7).
WGMMA_RUN = C_WAS_ZERO

FORMAT_DIRS = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32", "e4m3": "e4m3", "e5m2": "e5m2"}


def _read_words(path: Path, base: int, width: int | None = None) -> np.ndarray:
    rows = []
    with open(path, encoding="utf-8-sig", errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            if any("\udc80" <= ch <= "\udcff" for ch in line):
                raise CaptureError(f"{path}:{n}: not UTF-8 text")
            toks = line.split()
            if not toks:
                continue
            if base == 2 and any(len(t) != 32 for t in toks):
                bad = next(t for t in toks if len(t) != 32)
                raise CaptureError(f"{path}:{n}: a binary word has {len(bad)} digits, not 32: "
                                   f"{bad[:40]!r}")
            try:
                vals = [int(t, base) for t in toks]
            except ValueError:
                raise CaptureError(f"{path}:{n}: not a word in base {base}: {line.strip()[:40]!r}") from None
            if width is not None and len(toks) != width:
                raise CaptureError(f"{path}:{n}: expected {width} words, found {len(toks)}")
            if any(v >> 32 for v in vals):
                raise CaptureError(f"{path}:{n}: a word is wider than 32 bits")
            rows.append(vals)
    if not rows:
        raise CaptureError(f"{path}: empty file")
    k = len(rows[0])
    if any(len(r) != k for r in rows):
        bad = next(i for i, r in enumerate(rows, 1) if len(r) != k)
        raise CaptureError(f"{path}: line {bad} has {len(rows[bad - 1])} words, line 1 has {k}")
    return np.array(rows, dtype=np.uint32)


def _one_file(folder: Path, operand: str) -> Path:
    """The one ``{operand}_*.txt`` file of ``folder`` (none or two are an error)."""
    found = sorted(folder.glob(f"{operand}_*.txt"))
    if not found:
        raise CaptureError(f"{folder}: needs a_*, b_* and c_* files (no {operand}_*.txt)")
    if len(found) > 1:
        raise CaptureError(f"{folder}: {len(found)} {operand}_*.txt files "
                           f"({', '.join(p.name for p in found)}); keep one")
    return found[0]


def read_dir(folder: Path, gpu: str | None = None) -> list[Capture]:
    """The captures (one per d_* file) of one GPU/FORMAT folder."""
    folder = Path(folder)
    fmt_key = folder.name.lower()
    if fmt_key not in FORMAT_DIRS:
        raise CaptureError(f"{folder}: unknown input format folder {folder.name!r}")
    fmt = get_format(FORMAT_DIRS[fmt_key])
    gpu = gpu or folder.parent.name
    a_file, b_file, c_file = (_one_file(folder, x) for x in "abc")
    a32 = _read_words(a_file, 16)
    b32 = _read_words(b_file, 16, a32.shape[1])
    c32 = _read_words(c_file, 2, 1)[:, 0]
    if not len(a32) == len(b32) == len(c32):
        raise CaptureError(f"{folder}: a, b and c have {len(a32)}, {len(b32)}, {len(c32)} lines")
    try:
        a = from_container(a32, fmt)
        b = from_container(b32, fmt)
    except FormatError as e:
        raise CaptureError(f"{folder}: {e}") from None
    out = []
    for d_file in sorted(folder.glob("d_*.txt")):
        out_type = "f16" if d_file.stem.endswith("fp16") else "f32"
        d32 = _read_words(d_file, 2, 1)[:, 0]
        if len(d32) != len(a):
            raise CaptureError(f"{d_file}: {len(d32)} lines but a has {len(a)}")
        if out_type == "f16":
            try:
                d = from_container(d32, "f16")
            except FormatError as e:
                raise CaptureError(f"{d_file}: {e}") from None
            c = convert(c32, "f32", "f16", Rounding.RNE)
        else:
            d, c = d32, c32
        family = "wgmma" if (gpu, fmt.name, out_type) in WGMMA_RUN else "mma"
        dp = Datapath(family, fmt.name, fmt.name, fmt.name, out_type, a.shape[1])
        meta = {"harness": "wmma/mma.sync (Khattak-Mikaitis)", "files": [str(a_file), str(b_file),
                str(c_file), str(d_file)]}
        if out_type == "f16":
            meta["c_note"] = "C converted to f16 (RNE) before the MMA, as the authors did"
        if (gpu, fmt.name, out_type) in C_WAS_ZERO:
            meta["c_note"] = "the authors ran this fp8 file on WGMMA with C = +0 (hwdata README); c file ignored"
            meta["c_file_words"] = "ignored"
            c = np.zeros_like(c)
        out.append(Capture(str(d_file), dp, Cases(a, b, c), d, gpu,
                           f"{gpu}/{folder.name} -> {out_type}", meta))
    return out


def read_tree(root: Path) -> list[Capture]:
    """Every GPU/FORMAT folder below ``root`` (or ``root`` itself)."""
    root = Path(root)
    dirs = sorted({p.parent for p in root.rglob("d_*.txt")})
    out = []
    for d in dirs:
        out.extend(read_dir(d))
    return out
