"""Sparse metadata of tcgen05.mma.sp: selector words <-> active K positions.

Facts (tcgen05 write-up; ../shared/notes/tcgen05-published-parameters.md;
PTX ISA "Sparse matrices" for tcgen05, logical K 16/32/64/64/128 for
tf32/f16/f8f6f4 and i8/mxf8f6f4/mxf4*):

- A metadata word holds eight 4-bit selectors, least significant nibble
  first; selector i describes logical chunk i of K.
- A selector's low and high 2-bit fields name two indices. The legal
  selectors are 0x4, 0x8, 0xc, 0x9, 0xd, 0x6, 0xe (0x6 names the same two
  positions as 0x9, in the other order).
- tf32 (1 of 2): a chunk is one pair of K positions; 0x4 keeps the lower,
  0xe the upper.
- f16/bf16, f8/f6/f4 and i8 (2 of 4): a chunk is four positions; the two
  fields are the kept positions.
- kind::mxf4 and mxf4nvf4 (packed e2m1): a chunk is eight positions; the
  two fields name two adjacent pairs, four kept values.

The stored (compressed) A values of a chunk go, in order, to the position
named by the low field first, then the high field (the hardware harness of
the write-up's release packs them that way).

mma.sp and wgmma.sp (PTX ISA "Sparse matrix storage"; the nibble lists
are the ISA table's ``SP_*_NIBBLES``) use the same nibbles and chunks (the
4-bit integers of mma.sp keep two pairs of eight, like mxf4), but any two
distinct indices in either order are legal (twelve nibbles, 0x4 and 0xe for
tf32), and ``ordered`` (mma.sp::ordered_metadata) takes the six increasing
ones. The row's metadata words of the sim harness are per row, like
tcgen05's per lane; a real mma.sp spreads them over the threads the
sparsity selector names.

The codec (:func:`encode`, :func:`decode`) turns (N, K) masks into (N, words)
metadata and back, vectorized; every other function here is a view of it.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from tcprobe.models import isa

LEGAL = (0x4, 0x8, 0xC, 0x9, 0xD, 0x6, 0xE)
TF32_LEGAL = (0x4, 0xE)
NIBBLES_PER_WORD = 8

# pattern -> (chunk width, indices per field: 1 = a position, 2 = a pair)
PATTERNS = {"1of2": (2, 1), "2of4": (4, 1), "pairs8": (8, 2)}


class SparsityError(ValueError):
    """Metadata that selects no legal pattern, or a datapath without sparsity."""


def pattern(dp) -> str:
    """The selection pattern of sparse datapath ``dp``: 1of2, 2of4 or pairs8."""
    if not dp.sparse:
        raise SparsityError(f"{dp.id} is dense: it has no sparse metadata")
    if dp.kind == "tf32" or dp.a_type == "tf32":
        return "1of2"
    if dp.kind in isa.PACKED_E2M1_KINDS or dp.a_type in isa.SUBBYTE_INTEGER_TYPES:
        return "pairs8"
    return "2of4"


def chunk_width(dp) -> int:
    return PATTERNS[pattern(dp)][0]


def n_words(dp) -> int:
    """Metadata words one case needs (one selector per chunk of K)."""
    chunks = dp.k // chunk_width(dp)
    return (chunks + NIBBLES_PER_WORD - 1) // NIBBLES_PER_WORD


def _selector_positions(pat: str, sel: int, legal: tuple[int, ...]) -> tuple[int, ...]:
    """Positions (within the chunk, stored order) one selector keeps."""
    if sel not in legal:
        names = ", ".join(f"{x:#x}" for x in legal)
        raise SparsityError(f"illegal sparse selector {sel:#x} ({pat}: legal are {names})")
    lo, hi = sel & 3, (sel >> 2) & 3
    if pat == "1of2":
        return (0,) if sel == 0x4 else (1,)
    if pat == "2of4":
        return (lo, hi)
    return (2 * lo, 2 * lo + 1, 2 * hi, 2 * hi + 1)


def legal_selectors(dp) -> tuple[int, ...]:
    """The selector nibbles PTX defines for sparse datapath ``dp``."""
    tf32 = pattern(dp) == "1of2"
    if dp.family == "tcgen05":
        return TF32_LEGAL if tf32 else LEGAL
    if tf32:
        return isa.SP_TF32_NIBBLES
    return isa.SP_ORDERED_NIBBLES if dp.ordered else isa.SP_NIBBLES


def kept_positions(dp, sel: int) -> tuple[int, ...]:
    """Positions within one chunk that selector ``sel`` keeps, in storage order."""
    return _selector_positions(pattern(dp), sel, legal_selectors(dp))


@cache
def _tables(dp) -> tuple[np.ndarray, np.ndarray]:
    """(chunk mask bits -> canonical selector or -1, selector -> stored
    positions in the chunk, row -1 where illegal) of ``dp``'s pattern."""
    width = chunk_width(dp)
    by_mask = np.full(1 << width, -1, np.int64)
    legal = legal_selectors(dp)
    per = len(kept_positions(dp, legal[0]))
    pos_of = np.full((16, per), -1, np.int64)
    for sel in legal:
        pos = kept_positions(dp, sel)
        pos_of[sel] = pos
        bits = sum(1 << p for p in pos)
        if by_mask[bits] < 0:  # the first legal selector (0x9 before 0x6)
            by_mask[bits] = sel
    return by_mask, pos_of


def _stored(dp, sel: np.ndarray, pos_of: np.ndarray) -> np.ndarray:
    n, chunks = sel.shape
    pos = pos_of[sel] + (np.arange(chunks) * chunk_width(dp))[None, :, None]
    return pos.reshape(n, -1)


def encode(dp, active) -> tuple[np.ndarray, np.ndarray]:
    """(metadata words (N, words) uint32, stored positions (N, K/2)) of (N, K)
    masks: the canonical legal selector of every chunk (0x9 rather than 0x6
    for positions 1 and 2). SparsityError if a chunk is no legal selection."""
    active = np.atleast_2d(np.asarray(active, bool))
    n, k = active.shape
    if k != dp.k:
        raise SparsityError(f"a mask of {k} positions for {dp.id} (K={dp.k})")
    width = chunk_width(dp)
    by_mask, pos_of = _tables(dp)
    chunks = k // width
    bits = (active.reshape(n, chunks, width) * (1 << np.arange(width))).sum(axis=2)
    sel = by_mask[bits]
    if (sel < 0).any():
        i, c = map(int, np.argwhere(sel < 0)[0])
        kept = np.flatnonzero(active[i, c * width:(c + 1) * width]).tolist()
        raise SparsityError(f"case {i}: positions {kept} of chunk {c} are no legal "
                            f"{pattern(dp)} selection of {dp.id}")
    words = np.zeros((n, n_words(dp)), np.uint32)
    for c in range(chunks):
        words[:, c // NIBBLES_PER_WORD] |= (sel[:, c].astype(np.uint32)
                                            << np.uint32(4 * (c % NIBBLES_PER_WORD)))
    return words, _stored(dp, sel, pos_of)


def decode(dp, meta) -> tuple[np.ndarray, np.ndarray]:
    """(active masks (N, K), stored positions in storage order (N, K/2)) that
    metadata words (N, words) select; SparsityError on an illegal selector."""
    meta = np.atleast_2d(np.asarray(meta, np.int64))
    need = n_words(dp)
    if meta.shape[1] != need:
        raise SparsityError(f"{dp.id} needs {need} sparse metadata word(s) per case, "
                            f"not {meta.shape[1]}")
    _, pos_of = _tables(dp)
    idx = np.arange(dp.k // chunk_width(dp))
    sel = (meta[:, idx // NIBBLES_PER_WORD] >> (4 * (idx % NIBBLES_PER_WORD))) & 0xF
    if (pos_of[sel, 0] < 0).any():
        i, c = map(int, np.argwhere(pos_of[sel, 0] < 0)[0])
        names = ", ".join(f"{x:#x}" for x in legal_selectors(dp))
        raise SparsityError(f"illegal sparse selector {int(sel[i, c]):#x} in chunk {c} of "
                            f"{dp.id} ({pattern(dp)}: legal are {names})")
    pos = _stored(dp, sel, pos_of)
    active = np.zeros((len(meta), dp.k), bool)
    np.put_along_axis(active, pos, True, axis=1)
    return active, pos


def stored_positions(dp, meta_words) -> np.ndarray:
    """Logical K positions of the stored A values of one case, in storage order (K/2)."""
    return decode(dp, np.atleast_1d(np.asarray(meta_words, np.int64)).reshape(1, -1))[1][0]


def active_positions(dp, meta_words) -> np.ndarray:
    """Boolean (K,) mask of the logical K positions one case's metadata keeps."""
    return decode(dp, np.atleast_1d(np.asarray(meta_words, np.int64)).reshape(1, -1))[0][0]


def metadata_words(dp, mask) -> np.ndarray:
    """The metadata words (uint32) that keep exactly ``mask`` (K,) (inverse of
    :func:`active_positions`)."""
    return encode(dp, np.asarray(mask, bool).reshape(1, -1))[0][0]


def active_batch(dp, meta) -> np.ndarray:
    """(N, K) masks from (N, words) metadata, one row per case."""
    return decode(dp, np.asarray(meta, np.int64).reshape(-1, n_words(dp)))[0]


def metadata_batch(dp, masks) -> np.ndarray:
    """(N, words) metadata from (N, K) masks."""
    return encode(dp, np.asarray(masks, bool).reshape(-1, dp.k))[0]


def random_metadata(dp, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, words) metadata of uniformly drawn legal selectors."""
    legal = np.array(legal_selectors(dp), dtype=np.uint32)
    chunks = dp.k // chunk_width(dp)
    sels = legal[rng.integers(0, len(legal), size=(n, chunks))]
    words = np.zeros((n, n_words(dp)), dtype=np.uint32)
    for i in range(chunks):
        words[:, i // NIBBLES_PER_WORD] |= sels[:, i] << np.uint32(4 * (i % NIBBLES_PER_WORD))
    return words
