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
"""

from __future__ import annotations

import numpy as np

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
    if dp.kind in ("mxf4", "mxf4nvf4"):
        return "pairs8"
    return "2of4"


def chunk_width(dp) -> int:
    return PATTERNS[pattern(dp)][0]


def n_words(dp) -> int:
    """Metadata words one case needs (one selector per chunk of K)."""
    chunks = dp.k // chunk_width(dp)
    return (chunks + NIBBLES_PER_WORD - 1) // NIBBLES_PER_WORD


def _selector_positions(pat: str, sel: int) -> tuple[int, ...]:
    """Positions (within the chunk, stored order) one selector keeps."""
    legal = TF32_LEGAL if pat == "1of2" else LEGAL
    if sel not in legal:
        names = ", ".join(f"{x:#x}" for x in legal)
        raise SparsityError(f"illegal sparse selector {sel:#x} ({pat}: legal are {names})")
    lo, hi = sel & 3, (sel >> 2) & 3
    if pat == "1of2":
        return (0,) if sel == 0x4 else (1,)
    if pat == "2of4":
        return (lo, hi)
    return (2 * lo, 2 * lo + 1, 2 * hi, 2 * hi + 1)


def _selectors(dp, meta_words) -> list[int]:
    words = np.atleast_1d(np.asarray(meta_words, dtype=np.int64)).ravel()
    need = n_words(dp)
    if len(words) != need:
        raise SparsityError(f"{dp.id} needs {need} sparse metadata word(s) per case, "
                            f"not {len(words)}")
    chunks = dp.k // chunk_width(dp)
    return [(int(words[i // NIBBLES_PER_WORD]) >> (4 * (i % NIBBLES_PER_WORD))) & 0xF
            for i in range(chunks)]


def stored_positions(dp, meta_words) -> np.ndarray:
    """Logical K positions of the stored A values, in storage order (K/2)."""
    pat = pattern(dp)
    width = chunk_width(dp)
    out = []
    for i, sel in enumerate(_selectors(dp, meta_words)):
        out.extend(i * width + p for p in _selector_positions(pat, sel))
    return np.array(out, dtype=np.int64)


def active_positions(dp, meta_words) -> np.ndarray:
    """Boolean (K,) mask of the logical K positions one case's metadata keeps."""
    mask = np.zeros(dp.k, dtype=bool)
    mask[stored_positions(dp, meta_words)] = True
    return mask


def _canonical_selector(pat: str, chunk: np.ndarray) -> int:
    """The legal selector keeping exactly the True positions of one chunk."""
    kept = tuple(int(x) for x in np.flatnonzero(chunk))
    for sel in (TF32_LEGAL if pat == "1of2" else LEGAL):
        if tuple(sorted(_selector_positions(pat, sel))) == kept:
            return sel
    raise SparsityError(f"positions {list(kept)} of a chunk are not a legal {pat} selection")


def metadata_words(dp, mask) -> np.ndarray:
    """The metadata words (uint32) that keep exactly ``mask`` (K,) (inverse of
    :func:`active_positions`; 0x9 rather than 0x6 for positions 1 and 2)."""
    mask = np.asarray(mask, dtype=bool).ravel()
    if mask.size != dp.k:
        raise SparsityError(f"a mask of {mask.size} positions for {dp.id} (K={dp.k})")
    pat = pattern(dp)
    width = chunk_width(dp)
    words = [0] * n_words(dp)
    for i in range(dp.k // width):
        sel = _canonical_selector(pat, mask[i * width:(i + 1) * width])
        words[i // NIBBLES_PER_WORD] |= sel << (4 * (i % NIBBLES_PER_WORD))
    return np.array(words, dtype=np.uint32)


def active_batch(dp, meta) -> np.ndarray:
    """(N, K) masks from (N, words) metadata, one row per case."""
    meta = np.asarray(meta, dtype=np.int64).reshape(-1, n_words(dp))
    return np.array([active_positions(dp, row) for row in meta], dtype=bool).reshape(-1, dp.k)


def metadata_batch(dp, masks) -> np.ndarray:
    """(N, words) metadata from (N, K) masks."""
    masks = np.asarray(masks, dtype=bool).reshape(-1, dp.k)
    return np.array([metadata_words(dp, row) for row in masks],
                    dtype=np.uint32).reshape(-1, n_words(dp))


def random_metadata(dp, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, words) metadata of uniformly drawn legal selectors."""
    legal = np.array(TF32_LEGAL if pattern(dp) == "1of2" else LEGAL, dtype=np.uint32)
    chunks = dp.k // chunk_width(dp)
    sels = legal[rng.integers(0, len(legal), size=(n, chunks))]
    words = np.zeros((n, n_words(dp)), dtype=np.uint32)
    for i in range(chunks):
        words[:, i // NIBBLES_PER_WORD] |= sels[:, i] << np.uint32(4 * (i % NIBBLES_PER_WORD))
    return words


def legal_selectors(dp) -> tuple[int, ...]:
    """The selector nibbles PTX defines for sparse datapath ``dp``."""
    return TF32_LEGAL if pattern(dp) == "1of2" else LEGAL


def kept_positions(dp, sel: int) -> tuple[int, ...]:
    """Positions within one chunk that selector ``sel`` keeps, in storage order."""
    return _selector_positions(pattern(dp), sel)
