"""gemm --compare's picture: the levels of a difference, the PNG drawn from
them (decoded here with zlib and struct alone), and the CLI around it."""

import struct
import zlib

import numpy as np
from cli_helpers import invoke, one_error

from tcprobe.matrix import compare, picture

ONE = 0x3F800000  # 1.0f


def decode_png(data: bytes) -> np.ndarray:
    """(H, W, 3) RGB of an 8-bit RGB PNG with filter 0 rows (what picture writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            size = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    w, h, depth, colour = size[:4]
    assert (depth, colour) == (8, 2)
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, 3)


def test_levels_are_the_ulps_apart():
    want = np.full((1, 8), ONE, np.uint32)
    got = want + np.array([[0, 1, 2, 3, 4, 16, 17, 0]], np.uint32)
    got[0, 7] = 0x7FC00000  # NaN against 1.0
    levels = compare.difference_levels("f32", got, want)
    assert levels.tolist() == [[0, 1, 2, 3, 3, 4, 5, 6]]
    # one side below 1.0 by one ulp (0x3F7FFFFF) is 1 ulp as well; NaN vs NaN is the same
    pair = compare.difference_levels("f32", np.array([[0x3F7FFFFF, 0x7FC00001]], np.uint32),
                                     np.array([[ONE, 0x7FFFFFFF]], np.uint32))
    assert pair.tolist() == [[1, 0]]


def test_png_draws_each_level_in_its_colour():
    levels = np.array([[0, 1, 2, 3], [4, 5, 6, 0]], np.uint8)
    img = decode_png(picture.png(levels))
    side = picture.MIN_SIDE // 4  # cells of 64 pixels
    assert img.shape == (2 * side, 4 * side, 3)
    for (i, j), v in np.ndenumerate(levels):
        cell = img[i * side:(i + 1) * side, j * side:(j + 1) * side]
        assert (cell == picture.COLOURS[v]).all()
    assert tuple(picture.COLOURS[0]) == (255, 255, 255)  # the same word: white


def test_a_large_d_is_drawn_in_blocks_at_their_largest_level():
    levels = np.zeros((4100, 10), np.uint8)
    levels[4099, 9] = 5  # one element far apart, in the last block
    drawn, side = picture.cells(levels)
    assert drawn.shape == (picture.MAX_SIDE, 10) and side == 1
    assert drawn[-1, -1] == 5 and drawn.sum() == 5
    img = decode_png(picture.png(levels))
    assert img.shape == (picture.MAX_SIDE, 10, 3)
    assert (img[-1, -1] == picture.COLOURS[5]).all() and (img[0, 0] == 255).all()


def test_gemm_compare_writes_the_picture(tmp_path):
    out = tmp_path / "diff.png"
    r = invoke("gemm", "--random", "16x24x64", "--format", "bf16", "--gpu", "A100",
               "--compare", "H100", "--picture", out, "--verdict-seconds", "0.5",
               "--json", tmp_path / "r.json")
    assert r.exit_code in (0, 1), r.output
    img = decode_png(out.read_bytes())
    side = picture.MIN_SIDE // 24
    assert img.shape == (16 * side, 24 * side, 3)
    import json

    differ = json.loads((tmp_path / "r.json").read_text())["compare"]["differ"]
    white = (img[::side, ::side] == 255).all(axis=2)  # one pixel a cell
    assert int((~white).sum()) == differ  # a coloured cell for each element that differs


def test_picture_needs_compare(tmp_path):
    one_error(invoke("gemm", "--random", "8x8x16", "--format", "bf16", "--gpu", "H100",
                     "--picture", tmp_path / "p.png"), "--picture", "--compare")
    assert not (tmp_path / "p.png").exists()
