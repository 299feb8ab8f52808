"""Tensor memory of the tcgen05 harness: which columns of a lane hold what.

One allocation of ``ALLOC_COLS`` columns a CTA, a column of lane l being one
32-bit word. Each operand has a region of its own that starts on a 32-column
boundary, as if it had its own ``tcgen05.alloc`` (MMA-Sim's B200-tested
kernels allocate D, scale A and scale B apart; the PTX ISA gives tensor
memory out in units of 32 columns):

- C in and D out: columns 0-7 of lanes 0-127 (dump word ``lane * 8 + column``);
- sparse metadata: ``META_COLS`` words a lane from column ``META_COL``, the
  words of row r in r's lane (its D lane);
- scale A (M=128): ``SCALE_COLS`` columns from ``SFA_COL``; column i of lane
  l holds the scales of row 32 i + l, replicated in each of the four warps'
  sub-partitions (lanes 32 w + l); one byte a scale (MMA-Sim's
  ``LOAD_SFA_M128SFK*``, tested on B200);
- scale B (N=8): column ``SFB_COL`` of lane l holds the scales of column
  l % 8, in every lane (MMA-Sim's ``LOAD_SFB_N8SFK*``).

The scale buffers of a tile are ``LANES * SCALE_COLS`` words (word
``lane * SCALE_COLS + column``) for A and B alike (B uses column 0). The
harness kernel (``kernels/tcgen05.cu``, its ``TCP_TC05_*`` defines) and
these tables must agree; ``tests/test_tcgen05_tmem.py`` reads both.
"""

from __future__ import annotations

import numpy as np

LANES = 128
WARP_LANES = 32  # lanes of one warp's sub-partition
ALLOC_COLS = 128  # columns tcgen05.alloc takes (a power of two >= 32)
D_COLS = 8  # C/D words a lane in the dump
META_COL = 32
META_COLS = 2  # metadata words a lane
SFA_COL = 64
SFB_COL = 96
SCALE_COLS = 4  # scale words a lane and operand: one a 32-row group of M=128
SCALE_BYTES = 4  # scales a word holds (one byte each)
B_COLUMNS = 8  # N of the block-scaled harness: lane l holds column l % 8


def tmem_16x256b(thread: int, reg: int) -> int:
    """Dump word (lane * 8 + column) that ``tcgen05.ld.16x256b.x1`` by 128
    threads puts in register ``reg`` of ``thread``: lane 32w + t/4 (+8 for
    registers 2-3), column 2 (t%4) + reg%2 (PTX ISA; CUTLASS's 16dp256b)."""
    warp, t = divmod(thread, 32)
    return (32 * warp + t // 4 + 8 * (reg // 2)) * D_COLS + 2 * (t % 4) + reg % 2


def scale_a_slot(row, j):
    """Byte slot (word * 4 + byte) of scale ``j`` of A's ``row`` in warp 0's copy:
    lane row % 32, column row // 32."""
    row, j = np.asarray(row), np.asarray(j)
    word = (row % WARP_LANES) * SCALE_COLS + row // WARP_LANES
    return word * SCALE_BYTES + j


def scale_b_slot(col, j):
    """Byte slot of scale ``j`` of B's column ``col`` in its first lane (lane col, column 0)."""
    col, j = np.asarray(col), np.asarray(j)
    return (col * SCALE_COLS) * SCALE_BYTES + j


# Word offsets of every copy of a scale slot: A in the four warps' lanes
# 32 w + l, B in every lane l + 8 i.
SCALE_A_COPIES = tuple(w * WARP_LANES * SCALE_COLS for w in range(LANES // WARP_LANES))
SCALE_B_COPIES = tuple(i * B_COLUMNS * SCALE_COLS for i in range(LANES // B_COLUMNS))
