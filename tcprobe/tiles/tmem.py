"""Tensor memory of the tcgen05 harness: which columns of a lane hold what.

One allocation of ``ALLOC_COLS`` columns a CTA; a column of lane l is one
32-bit word. The harness kernel (``kernels/tcgen05.cu``, its ``TCP_TC05_*``
defines) and the tables here must agree; a test reads both.

- C in and D out: columns 0-7 of lanes 0-127 (dump word ``lane * 8 + column``);
- sparse metadata: ``META_COLS`` words a lane from column ``META_COL``;
- block scales: ``SCALE_COLS`` words a lane from column ``SFA_COL`` (A) and
  ``SFB_COL`` (B), one byte a scale.
"""

from __future__ import annotations

LANES = 128
ALLOC_COLS = 32  # columns tcgen05.alloc takes (a power of two >= 32)
D_COLS = 8  # C/D words a lane in the dump
META_COL = 8
META_COLS = 2  # metadata words a lane
SFA_COL = 16
SFB_COL = 24
SCALE_COLS = 2  # scale words a lane, each operand


def tmem_16x256b(thread: int, reg: int) -> int:
    """Dump word (lane * 8 + column) that ``tcgen05.ld.16x256b.x1`` by 128
    threads puts in register ``reg`` of ``thread``: lane 32w + t/4 (+8 for
    registers 2-3), column 2 (t%4) + reg%2 (PTX ISA; CUTLASS's 16dp256b)."""
    warp, t = divmod(thread, 32)
    return (32 * warp + t // 4 + 8 * (reg // 2)) * D_COLS + 2 * (t % 4) + reg % 2
