"""Reading a user's ``.npy`` file: the header is checked before any memory is taken.

``np.load`` allocates the array its header describes before it reads the
data, so a header claiming 10^10 words (a few bytes of file) ends in a
MemoryError, or in a 20 GB allocation the machine may grant lazily. Here
the header is read first: the bytes it claims must be in the file and fit
the memory this machine has; object arrays (pickles) are refused.
"""

from __future__ import annotations

import math
import os

import numpy as np
from numpy.lib import format as npy_format


class NpyError(ValueError):
    """A .npy file that cannot be read as the matrix its header describes."""


def header(fh) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran_order, dtype) of the open .npy file ``fh``, positioned
    at its data."""
    version = npy_format.read_magic(fh)
    if version == (1, 0):
        return npy_format.read_array_header_1_0(fh)
    if version == (2, 0):
        return npy_format.read_array_header_2_0(fh)
    if version != (3, 0):  # np.load names the versions it reads
        raise ValueError(f".npy format version {version[0]}.{version[1]}")
    # 3.0 is 2.0's layout with a UTF-8 header (numpy has no public reader of it)
    import ast

    size = int.from_bytes(fh.read(4), "little")
    d = ast.literal_eval(fh.read(size).decode("utf-8"))
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise ValueError("not a .npy header")
    return d["shape"], d["fortran_order"], npy_format.descr_to_dtype(d["descr"])


def check(path, what: str) -> None:
    """NpyError when ``path``'s .npy header claims more bytes than the file holds
    or than this machine has free, or an object array."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise NpyError(f"{what}: {path} is not a regular file (a pipe, a device, a folder?): "
                       "save the array to a file")
    try:
        with open(path, "rb") as fh:
            shape, _, dtype = header(fh)
            start = fh.tell()
            size = os.fstat(fh.fileno()).st_size
    except (OSError, ValueError, EOFError, SyntaxError, TypeError, UnicodeDecodeError,
            MemoryError, RecursionError):
        return  # missing, unreadable, no .npy header (an .npz): np.load says what it is
    if dtype.hasobject:
        raise NpyError(f"{what}: {path} holds Python objects (a pickle), not numbers")
    count = math.prod(shape)
    need = count * dtype.itemsize
    if need > size - start:
        raise NpyError(f"{what}: {path}'s header claims {count:,} elements of {dtype} "
                       f"({need:,} bytes) but the file holds {size - start:,} bytes of data")
    if need < size - start:  # np.load reads the header's array and ignores the rest
        raise NpyError(f"{what}: {path} holds {size - start - need:,} bytes after the "
                       f"{count:,} elements of {dtype} its header claims: not one .npy array "
                       "(two saved into one file? a header rewritten by hand?); save the matrix "
                       "alone (np.save)")
    free = available_memory()
    if free is not None and 2 * need > free:  # the array, and the copy the readers make
        raise NpyError(f"{what}: {path} holds {need / 1e9:,.1f} GB, and this machine has "
                       f"{free / 1e9:,.1f} GB available")


def load(path, what: str) -> np.ndarray:
    """The array in ``path`` (no pickles), its header checked first (:func:`check`)."""
    check(path, what)
    return np.load(path, allow_pickle=False)


def available_memory() -> int | None:
    """Bytes of memory this machine can give now (MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
