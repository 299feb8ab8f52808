"""Reader for the a/b/c/d text layout of the Khattak-Mikaitis captures.

Layout (``../shared/hwdata/README.md``): ``GPU/FORMAT/{a,b}_GPU_FORMAT.txt``
hold K f32 words a line in hex (values exact in FORMAT); ``c_GPU_fp32.txt``
one f32 word a line in 32 binary digits; ``d_GPU_fp32.txt`` and
``d_GPU_fp16.txt`` the output, 32 binary digits (an f16 output widened to
f32). For the f16 outputs the authors converted C to f16 (RNE) before the
MMA, so the cases carry that f16 C.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from tcprobe.jsontext import not_regular
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


_DIGIT = np.full(256, 255, np.uint8)  # ASCII -> digit value (255: not a digit)
_DIGIT[ord("0"):ord("9") + 1] = np.arange(10)
_DIGIT[ord("a"):ord("f") + 1] = np.arange(10, 16)
_DIGIT[ord("A"):ord("F") + 1] = np.arange(10, 16)
_SPACE = np.zeros(256, bool)  # the ASCII whitespace str.split() splits on
_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


def _read_words(path: Path, base: int, width: int | None = None) -> np.ndarray:
    """The words of a capture file (one row a line, ``width`` words a row
    when given; base 2: 32 binary digits a word; base 16: hex digits), read
    as whole arrays: every word of one length, every line of one count. A
    file the fast reading cannot vouch for (other characters, words of
    several lengths, ragged lines) is read again line by line by
    :func:`_read_words_checked`, which names its first bad line."""
    special = not_regular(path)
    if special:  # a FIFO among the a/b/c/d files would wait for a writer
        raise CaptureError(f"{path}: {special}, not a capture file")
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    buf = np.frombuffer(data, np.uint8)
    grid = _fixed_layout_digits(buf)
    if grid is not None:  # the published captures: one layout every line
        digits, k = grid
        if (width is None or k == width) and (base != 2 or digits.shape[1] == 32):
            return _digits_to_words(path, base, width, digits, k)
    space = _SPACE[buf]
    if not buf.size or (buf >= 128).any() or space.all():
        return _read_words_checked(path, base, width)
    word = ~space
    edges = np.flatnonzero(np.diff(word.view(np.int8), prepend=0, append=0))  # word starts, ends
    starts, ends = edges[0::2], edges[1::2] - 1
    lengths = ends - starts + 1
    length = int(lengths[0])
    per_line = np.bincount(np.searchsorted(np.flatnonzero(buf == 10), starts))
    per_line = per_line[per_line > 0]
    k = int(per_line[0])
    if ((lengths != length).any() or (per_line != k).any() or (width is not None and k != width)
            or (base == 2 and length != 32) or length * (base.bit_length() - 1) > 60):
        return _read_words_checked(path, base, width)
    return _digits_to_words(path, base, width, buf[word].reshape(-1, length), k)


def _fixed_layout_digits(buf: np.ndarray):
    """Where every line has one layout (the same length, words of one length
    apart by one space, a space before the newline or not): the digit
    characters as a (words, length) array and the words a line, read as
    one reshape; else None."""
    newline = np.flatnonzero(buf[:4096] == 10)
    if not newline.size or buf[-1] != 10:
        return None
    line = int(newline[0]) + 1  # bytes a line, its newline included
    if buf.size % line or line < 2:
        return None
    body = buf.reshape(-1, line)
    if (body[:, -1] != 10).any():
        return None
    body = body[:, :-1]
    gaps = np.flatnonzero(body[0] == 32)
    length = int(gaps[0]) if gaps.size else body.shape[1]
    cell, extra = length + 1, body.shape[1] % (length + 1)
    if length == 0 or extra not in (0, length):
        return None
    k = body.shape[1] // cell + (extra == length)
    position = np.arange(body.shape[1]) % cell
    if (body[:, position == length] != 32).any():
        return None
    return body[:, position != length].reshape(-1, length), k


def _digits_to_words(path: Path, base: int, width: int | None, chars: np.ndarray, k: int):
    """(words, length) digit characters as uint32 words, k a row; a digit
    not of ``base`` or a word past 32 bits sends the file to the line-by-line
    reader, which names the line."""
    digits = _DIGIT[chars]
    bits = base.bit_length() - 1  # bits a digit: 1 (binary) or 4 (hex)
    if base not in (2, 16) or (digits >= base).any() or chars.shape[1] * bits > 32:
        return _read_words_checked(path, base, width)
    # left-pad to 32 bits of digits, then pack: bits to bytes, or nibble pairs to bytes
    digits = np.pad(digits, ((0, 0), (32 // bits - chars.shape[1], 0)))
    if base == 2:
        octets = np.packbits(digits, axis=1)
    else:
        octets = (digits[:, 0::2] << 4) | digits[:, 1::2]
    return np.ascontiguousarray(octets).view(">u4").astype(np.uint32).reshape(-1, k)


def _read_words_checked(path: Path, base: int, width: int | None = None) -> np.ndarray:
    """The words of a capture file, line by line: slow, and exact in what it
    says of the first bad line (what :func:`_read_words` falls back to)."""
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
    os.listdir(folder)  # a folder this user may not list: its own error, not "no a_* file"
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


def _refuse(e: OSError) -> None:
    """A folder below the capture root that cannot be listed is an error
    (CaptureError, for the API as for the CLI), never silently left out of
    the score; one that vanished is passed over."""
    if isinstance(e, FileNotFoundError):
        return
    from tcprobe.capture import CaptureError
    from tcprobe.outfiles import READ_REFUSED, os_error

    if isinstance(e, PermissionError):
        raise CaptureError(f"{e.filename}: {READ_REFUSED}") from e
    e = os_error(e)
    raise CaptureError(f"{e.filename}: {e.strerror}") from e


def read_tree(root: Path) -> list[Capture]:
    """Every GPU/FORMAT folder below ``root`` (or ``root`` itself)."""
    import fnmatch

    root = Path(root)
    # os.walk follows no link below root; a folder that vanishes while it walks
    # is skipped (rglob raised FileNotFoundError under /proc), one that cannot
    # be listed is an error (rglob left it out of the score without a word)
    dirs = sorted(Path(top) for top, _, names in os.walk(root, onerror=_refuse)
                  if any(fnmatch.fnmatch(n, "d_*.txt") for n in names))
    out = []
    for d in dirs:
        out.extend(read_dir(d))
    return out
