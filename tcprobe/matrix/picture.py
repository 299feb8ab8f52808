"""A picture of where two products differ: a PNG, one colour per level of
:func:`~tcprobe.matrix.compare.difference_levels` (white the same word,
yellow to dark red for 1 ulp to more than 16, blue where one side alone is
NaN).

One pixel is one element of D while D fits ``MAX_SIDE`` on each side, else
one block of elements at its largest level (:func:`compare.block_max`);
small products are drawn with square cells of several pixels so that the
image is at least ``MIN_SIDE`` on its longer side. Written with zlib only
(PNG: 8-bit RGB, filter 0 on every row), so nothing is needed to draw it.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from .compare import block_max

# RGB of each level: same word; 1 ulp; 2; 3-4; 5-16; more; NaN on one side
COLOURS = np.array([(255, 255, 255), (255, 237, 160), (254, 178, 76), (253, 141, 60),
                    (240, 59, 32), (128, 0, 38), (49, 130, 189)], np.uint8)
LEGEND = ("white: the same word; pale yellow: 1 ulp; orange: 2; dark orange: 3-4; red: 5-16; "
          "dark red: more; blue: NaN on one side only")
MAX_SIDE = 2048  # pixels: a larger D is drawn in blocks, each its largest level
MIN_SIDE = 256  # pixels: a smaller D is drawn with cells of several pixels


def cells(levels: np.ndarray) -> tuple[np.ndarray, int]:
    """(the levels drawn, pixels per cell side) for ``levels`` (M, N)."""
    m, n = levels.shape
    if max(m, n) > MAX_SIDE:
        levels = block_max(levels, MAX_SIDE, MAX_SIDE)
    side = max(1, MIN_SIDE // max(levels.shape))
    return levels, side


def png(levels: np.ndarray) -> bytes:
    """The PNG file of ``levels`` (M, N): uint8 values 0..6, drawn as the
    module doc says."""
    drawn, side = cells(np.asarray(levels, np.uint8))
    if drawn.size and int(drawn.max()) >= len(COLOURS):
        raise ValueError(f"levels run 0..{len(COLOURS) - 1}, not {int(drawn.max())}")
    rgb = COLOURS[drawn].repeat(side, axis=0).repeat(side, axis=1)  # (H, W, 3)
    h, w = rgb.shape[:2]
    raw = np.zeros((h, 1 + 3 * w), np.uint8)  # each row: filter byte 0, then RGB
    raw[:, 1:] = rgb.reshape(h, 3 * w)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))
