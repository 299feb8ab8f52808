"""The published captures' text reader: the whole-array reading gives the
same words as the line-by-line reader on every layout, and every bad file
still gets the line-by-line reader's one-line error naming its line."""

import numpy as np
import pytest

from tcprobe.capture import CaptureError
from tcprobe.capture.km import _read_words, _read_words_checked

LAYOUTS = {
    "plain": b"3f800000 40000000\nbf800000 00000001\n",
    "trailing space": b"3f800000 40000000 \nbf800000 00000001 \n",
    "upper case": b"3F800000 4000ABCD\nBF800000 00000001\n",
    "bom": b"\xef\xbb\xbf3f800000 40000000\nbf800000 00000001\n",
    "no final newline": b"3f800000 40000000\nbf800000 00000001",
    "blank lines": b"3f800000 40000000\n\n  \nbf800000 00000001\n",
    "ragged spacing": b"3f800000   40000000\n\tbf800000 00000001\n",
    "short words": b"1 2\nff 0\n",
    "crlf": b"3f800000 40000000\r\nbf800000 00000001\r\n",
    "0x prefix": b"0x3f800000 0x40000000\n0xbf800000 0x1\n",
}
WANT = {
    "short words": [[1, 2], [255, 0]],
    "upper case": [[0x3F800000, 0x4000ABCD], [0xBF800000, 1]],
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_hex_layouts_read_as_the_line_reader_reads_them(tmp_path, name):
    path = tmp_path / "a.txt"
    path.write_bytes(LAYOUTS[name])
    got = _read_words(path, 16)
    assert got.dtype == np.uint32
    assert np.array_equal(got, _read_words_checked(path, 16))
    want = WANT.get(name, [[0x3F800000, 0x40000000], [0xBF800000, 1]])
    assert got.tolist() == want


def test_binary_words(tmp_path):
    path = tmp_path / "c.txt"
    words = [0x3F800000, 0x80000001, 0xFFFFFFFF, 0]
    path.write_text("".join(f"{w:032b}\n" for w in words))
    assert _read_words(path, 2, 1)[:, 0].tolist() == words


@pytest.mark.parametrize("content,message", [
    (b"", "empty file"),
    (b"  \n\n", "empty file"),
    (b"3f800000 40000000\nbf800000\n", "line 2 has 1 words, line 1 has 2"),
    (b"3f800000 4000000g\n", ":1: not a word in base 16"),
    (b"3f800000 1ff8000000\n", ":1: a word is wider than 32 bits"),
    (b"3f800000\n\xff\xfe\n", ":2: not UTF-8 text"),
])
def test_bad_hex_files_name_their_line(tmp_path, content, message):
    path = tmp_path / "a.txt"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match=message):
        _read_words(path, 16)


@pytest.mark.parametrize("content,message", [
    (b"0101\n", "a binary word has 4 digits, not 32"),
    (b"0" * 31 + b"2\n", "not a word in base 2"),
])
def test_bad_binary_files_name_their_line(tmp_path, content, message):
    path = tmp_path / "c.txt"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match=message):
        _read_words(path, 2, 1)


def test_a_row_of_the_wrong_width_is_refused(tmp_path):
    path = tmp_path / "b.txt"
    path.write_bytes(b"3f800000 40000000\n3f800000 40000000\n")
    with pytest.raises(CaptureError, match="expected 3 words, found 2"):
        _read_words(path, 16, 3)
