"""The project's own capture file (``.tcap``): versioned, checksummed, streamed.

Layout (all integers little-endian; docs/capture-format.md has the full
description)::

    file header   magic b"\\x89TCPCAP\\n" (8 bytes), version u16, flags u16,
                  header length H u32, CRC-32 of the header text u32,
                  H bytes of UTF-8 JSON (datapath, device, seed, suites,
                  generators, plan, record layout)
    chunk ...     b"CHNK", chunk index u32 (0, 1, 2, ...), record count
                  n u32, CRC-32 of the payload u32, then n records

A record is fixed-size: the generator code (u8), A and B words (K each),
C, the scale words, the sparse selection bits, and D, the raw output word
the device returned; each word as 1, 2 or 4 bytes by its format's width.

A writer appends one chunk at a time and flushes it, so a run that stops
(Ctrl-C, a crash) keeps every chunk written before; :func:`recover` cuts a
torn last chunk so that ``--resume`` continues from there. Reading checks
every checksum; a truncated or corrupted file raises CaptureError naming
the byte offset where it went wrong.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, DatapathError
from tcprobe.models.formats import get_format
from tcprobe.outfiles import open_nofollow, os_error

from . import Capture, CaptureError

MAGIC = b"\x89TCPCAP\n"
VERSION = 1
CHUNK_MAGIC = b"CHNK"
_FILE_HEAD = struct.Struct("<8sHHII")  # magic, version, flags, header length, header crc
_CHUNK_HEAD = struct.Struct("<4sIII")  # magic, index, records, payload crc
MAX_HEADER = 16 << 20


def _word_dtype(fmt_name: str) -> str:
    width = get_format(fmt_name).width
    return "u1" if width <= 8 else "<u2" if width <= 16 else "<u4" if width <= 32 else "<u8"


def record_dtype(dp: Datapath) -> np.dtype:
    """The fixed-size record of a datapath's cases (packed, little-endian)."""
    f = [("gen", "u1"), ("a", _word_dtype(dp.a_type), (dp.k,)),
         ("b", _word_dtype(dp.b_type), (dp.k,)), ("c", _word_dtype(dp.c))]
    if dp.block_scaled:
        f += [("scale_a", _word_dtype(dp.scale_type), (dp.n_scales,)),
              ("scale_b", _word_dtype(dp.scale_type), (dp.n_scales,))]
    if dp.sparse:
        f += [("active", "u1", ((dp.k + 7) // 8,))]
    f += [("d", _word_dtype(dp.d_type))]
    return np.dtype(f)


def _layout(dt: np.dtype) -> list:
    return [[name, dt.fields[name][0].base.str, int(np.prod(dt.fields[name][0].shape) or 1)]
            for name in dt.names]


def sniff(path) -> bool:
    """Whether ``path`` starts like a tcprobe capture file."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


# ---------------------------------------------------------------------------
# Writing.


def make_header(dp: Datapath, *, device: dict, seed: int | None = None,
                suites: list | None = None, generators: list | None = None,
                plan: dict | None = None, extra: dict | None = None) -> dict:
    """The header of a new capture (what a reader needs, and the run's facts)."""
    from tcprobe import __version__

    dt = record_dtype(dp)
    head = {"format": "tcprobe-capture", "version": VERSION, "tcprobe": __version__,
            "datapath": dp.id, "device": device, "seed": seed, "suites": list(suites or []),
            "generators": list(generators or []), "plan": plan or {},
            "record": {"size": dt.itemsize, "fields": _layout(dt)}}
    if extra:
        head.update(extra)
    return head


# A test hook: "N:SIGNAME" makes the writing process send itself SIGNAME
# once the file holds N chunks, so a test interrupts a run at a known point.
STOP_HOOK_ENV = "TCPROBE_TEST_STOP_AFTER_CHUNK"


def _stop_hook(chunks: int) -> None:
    spec = os.environ.get(STOP_HOOK_ENV)
    if not spec:
        return
    n, _, name = spec.partition(":")
    if n.strip().isdigit() and int(n) == chunks:
        import signal

        os.kill(os.getpid(), getattr(signal, "SIG" + name.strip().upper().removeprefix("SIG")))


RESUME_HINT = "rerun the same command with --resume to continue (every finished chunk is kept)"


class Writer:
    """Appends chunks to a capture file; every chunk is flushed when written.

    ``Writer(path, header)`` starts a new file; :meth:`reopen` continues one
    (after cutting off a torn end)."""

    def __init__(self, path, header: dict, *, fsync: bool = False):
        self.path = Path(path)
        self.fsync = fsync
        self.header = header
        self.dp = Datapath.parse(header["datapath"])
        self.dtype = record_dtype(self.dp)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open_nofollow(self.path, "wb")  # a link planted there is refused
        text = json.dumps(header, sort_keys=True).encode()
        self.next_index = 0
        self._write(_FILE_HEAD.pack(MAGIC, VERSION, 0, len(text), zlib.crc32(text)) + text)

    @classmethod
    def reopen(cls, path, *, fsync: bool = False, check=None) -> tuple[Writer, Scan]:
        """Continue ``path``: its intact chunks stay, a torn end is cut off
        (see :func:`recover`; ``check(scan)`` may refuse first, the file untouched)."""
        scan = recover(path, check)
        self = cls.__new__(cls)
        self.path, self.fsync, self.header, self.dp = Path(path), fsync, scan.header, scan.datapath
        self.dtype = record_dtype(self.dp)
        self.fh = open_nofollow(self.path, "r+b")
        self.fh.seek(0, os.SEEK_END)
        self.next_index = scan.n_chunks
        return self, scan

    def _flush(self) -> None:
        self.fh.flush()
        if self.fsync:
            os.fsync(self.fh.fileno())

    def _write(self, data: bytes) -> None:
        """Write and flush; a file-system error names the capture and how to go on."""
        try:
            self.fh.write(data)
            self._flush()
        except OSError as e:
            raise os_error(e, self.path, RESUME_HINT) from None

    def append(self, cases: Cases, words: np.ndarray, gen_codes: np.ndarray | None = None) -> None:
        """Write one chunk: the cases, the device's output words, the codes."""
        payload = to_records(self.dp, cases, words, gen_codes).tobytes()
        head = _CHUNK_HEAD.pack(CHUNK_MAGIC, self.next_index, len(words), zlib.crc32(payload))
        self._write(head + payload)
        self.next_index += 1
        _stop_hook(self.next_index)

    def close(self) -> None:
        if not self.fh.closed:
            try:
                self._flush()
            except OSError as e:
                raise os_error(e, self.path, RESUME_HINT) from None
            finally:
                try:
                    self.fh.close()
                except OSError:
                    pass  # what did not reach the disk was reported just above

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def to_records(dp: Datapath, cases: Cases, words, gen_codes=None) -> np.ndarray:
    dt = record_dtype(dp)
    n = len(cases)
    rec = np.zeros(n, dt)
    rec["gen"] = 0 if gen_codes is None else gen_codes
    rec["a"] = cases.a
    rec["b"] = cases.b
    rec["c"] = cases.c
    if dp.block_scaled:
        rec["scale_a"] = cases.scale_a
        rec["scale_b"] = cases.scale_b
    if dp.sparse:
        rec["active"] = np.packbits(cases.active, axis=1, bitorder="little")
    rec["d"] = np.asarray(words).astype(get_format(dp.d_type).dtype, copy=False)
    return rec


def from_records(dp: Datapath, rec: np.ndarray) -> tuple[Cases, np.ndarray, np.ndarray]:
    """(cases, device words, generator codes) of records."""
    u = lambda x: np.asarray(x).astype(np.uint64 if x.dtype.itemsize == 8 else np.uint32)  # noqa: E731
    sa = sb = active = None
    if dp.block_scaled:
        sa, sb = u(rec["scale_a"]), u(rec["scale_b"])
    if dp.sparse:
        active = np.unpackbits(rec["active"], axis=1, count=dp.k, bitorder="little").astype(bool)
    cases = Cases(u(rec["a"]).reshape(len(rec), dp.k), u(rec["b"]).reshape(len(rec), dp.k),
                  u(rec["c"]), sa, sb, active)
    return cases, u(rec["d"]), np.asarray(rec["gen"], np.uint8)


# ---------------------------------------------------------------------------
# Reading.


@dataclass
class Scan:
    """What a capture file holds: the header, where every intact chunk lies
    (read back one at a time by :meth:`iter_chunks`, so memory does not grow
    with the file), and where (and why) reading stopped if the file is torn
    or corrupted."""

    path: Path
    header: dict
    datapath: Datapath
    index: list = field(default_factory=list)  # (payload offset, records) of each intact chunk
    good_end: int = 0  # byte offset after the last intact chunk
    problem: str | None = None  # why reading stopped early (with the offset)
    size: int = 0  # bytes in the file when it was scanned
    set_aside: str | None = None  # where recover() kept the bytes after a damaged chunk

    @property
    def n_chunks(self) -> int:
        return len(self.index)

    @property
    def n_records(self) -> int:
        return sum(n for _, n in self.index)

    @property
    def chunk_sizes(self) -> list[int]:
        return [n for _, n in self.index]

    def iter_chunks(self):
        """The record array of every intact chunk, in order, one at a time."""
        dt = record_dtype(self.datapath)
        with open(self.path, "rb") as fh:
            for offset, n in self.index:
                fh.seek(offset)
                yield np.frombuffer(fh.read(n * dt.itemsize), dt)

    @classmethod
    def of(cls, path, strict: bool = True) -> Scan:
        """Read ``path`` chunk by chunk, checking every checksum. ``strict``:
        any damage raises CaptureError; else reading stops at the first
        damaged chunk and ``problem`` says why."""
        path = Path(path)
        try:
            fh = open(path, "rb")
        except OSError as e:
            raise CaptureError(f"{path}: {e.strerror or e}") from None
        with fh:
            size = os.fstat(fh.fileno()).st_size
            header, dp, pos = _read_header(path, fh, size)
            dt = record_dtype(dp)
            if header.get("record", {}).get("size") != dt.itemsize:
                raise CaptureError(f"{path}: header record size "
                                   f"{header.get('record', {}).get('size')} does not match "
                                   f"{dp.id} ({dt.itemsize} bytes)")
            scan = cls(path, header, dp, good_end=pos, size=size)
            index = 0
            while pos < size:
                problem, n, nxt = _read_chunk(fh, size, pos, index, dt)
                if problem:
                    msg = f"{path}: {problem}"
                    if strict:
                        raise CaptureError(msg + " (tcprobe validate --resume keeps every intact "
                                           "chunk and continues the run)")
                    scan.problem = msg
                    break
                scan.index.append((pos + _CHUNK_HEAD.size, n))
                pos = nxt
                scan.good_end = pos
                index += 1
        return scan


def _read_header(path: Path, fh, size: int) -> tuple[dict, Datapath, int]:
    head = fh.read(_FILE_HEAD.size)
    if size == 0:
        raise CaptureError(f"{path}: empty file (0 bytes): nothing was captured; delete it, or "
                           "run tcprobe validate with --resume, which starts it over")
    if len(head) < _FILE_HEAD.size:
        if not head.startswith(MAGIC[: len(head)]):
            raise CaptureError(f"{path}: not a tcprobe capture (bad magic at offset 0)")
        raise CaptureError(f"{path}: truncated file header at offset {len(head)} "
                           f"(need {_FILE_HEAD.size} bytes)")
    magic, version, _flags, hlen, hcrc = _FILE_HEAD.unpack(head)
    if magic != MAGIC:
        raise CaptureError(f"{path}: not a tcprobe capture (bad magic at offset 0)")
    if version != VERSION:
        raise CaptureError(f"{path}: capture format version {version} at offset 8 "
                           f"(this tcprobe reads version {VERSION})")
    if hlen > MAX_HEADER:
        raise CaptureError(f"{path}: corrupted header length {hlen} at offset 12")
    end = _FILE_HEAD.size + hlen
    if size < end:
        raise CaptureError(f"{path}: truncated header at offset {size} "
                           f"(the header ends at offset {end})")
    text = fh.read(hlen)
    if zlib.crc32(text) != hcrc:
        raise CaptureError(f"{path}: corrupted header at offset {_FILE_HEAD.size} "
                           "(checksum mismatch)")
    try:
        header = json.loads(text)
        if not isinstance(header, dict):
            raise TypeError("the header is not a JSON object")
        from tcprobe.schema import MAX_K, check_header

        check_header(header, "header")
        dp = Datapath.parse(header["datapath"])
        if dp.k > MAX_K:
            raise ValueError(f"datapath {dp.id}: K={dp.k} is more than any instruction has "
                             f"({MAX_K} at most)")
    except (ValueError, KeyError, TypeError, DatapathError) as e:
        raise CaptureError(f"{path}: unreadable header at offset {_FILE_HEAD.size}: {e}") from None
    except RecursionError:
        raise CaptureError(f"{path}: unreadable header at offset {_FILE_HEAD.size}: JSON nested "
                           "too deeply") from None
    return header, dp, end


def _read_chunk(fh, size: int, pos: int, index: int, dt: np.dtype):
    """(problem, records, next offset) of the chunk at ``pos`` (its checksum checked)."""
    fh.seek(pos)
    head = fh.read(_CHUNK_HEAD.size)
    if len(head) < _CHUNK_HEAD.size:
        return (f"truncated chunk {index} at offset {pos}: {len(head)} of "
                f"{_CHUNK_HEAD.size} header bytes", 0, pos)
    magic, idx, n, crc = _CHUNK_HEAD.unpack(head)
    if magic != CHUNK_MAGIC:
        return f"corrupted chunk {index} at offset {pos}: bad chunk marker {magic!r}", 0, pos
    if idx != index:
        return f"corrupted chunk {index} at offset {pos}: it says it is chunk {idx}", 0, pos
    start = pos + _CHUNK_HEAD.size
    end = start + n * dt.itemsize
    if end > size:
        return (f"truncated chunk {index} at offset {pos}: {size - start} of "
                f"{n * dt.itemsize} payload bytes (file ends at offset {size})", 0, pos)
    got, left = 0, end - start
    while left:
        block = fh.read(min(1 << 22, left))
        got, left = zlib.crc32(block, got), left - len(block)
    if got != crc:
        return (f"corrupted chunk {index} at offset {pos}: checksum mismatch in its "
                f"{n} records (bytes {start}..{end - 1})", 0, pos)
    return None, n, end


def _capture_of(scan: Scan, rec: np.ndarray, offset: int = 0) -> Capture:
    dp, head = scan.datapath, scan.header
    cases, words, codes = from_records(dp, rec)
    dev = head.get("device") or {}
    planned = (head.get("plan") or {}).get("cases")
    meta = {"header": head, "generator_codes": codes, "simulated": bool(dev.get("simulated")),
            "complete": planned is None or planned == scan.n_records, "chunks": scan.n_chunks,
            "planned": planned, "recorded": scan.n_records, "offset": offset}
    if scan.problem:
        meta["problem"] = scan.problem
    label = f"{dev.get('device', '?')}/{dp.id} ({scan.path.name})"
    return Capture(str(scan.path), dp, cases, words, dev.get("gpu"), label, meta)


def read(path, strict: bool = True) -> Capture:
    """The capture in a .tcap file (every intact chunk, in memory)."""
    scan = Scan.of(path, strict=strict)
    chunks = list(scan.iter_chunks())
    rec = np.concatenate(chunks) if chunks else np.zeros(0, record_dtype(scan.datapath))
    return _capture_of(scan, rec)


def read_pieces(scan: Scan, cases_per_piece: int = 1 << 18):
    """The capture of ``scan`` as a sequence of Captures of about
    ``cases_per_piece`` cases each (``meta["offset"]``: the first case's
    position), read one at a time: memory does not grow with the file."""
    pending, held, offset = [], 0, 0
    for rec in scan.iter_chunks():
        pending.append(rec)
        held += len(rec)
        if held >= cases_per_piece:
            yield _capture_of(scan, np.concatenate(pending), offset)
            offset += held
            pending, held = [], 0
    if pending or offset == 0:
        rec = np.concatenate(pending) if pending else np.zeros(0, record_dtype(scan.datapath))
        yield _capture_of(scan, rec, offset)


def recover(path, check=None) -> Scan:
    """Read what survives of ``path`` and cut off a torn or corrupted end,
    so that appending continues a valid file. Returns the scan.

    ``check(scan)`` runs before anything is changed (it raises to refuse).
    Nothing is lost: when more follows the damaged chunk than one torn
    chunk could hold (intact chunks after a damaged one), those bytes are
    first copied to ``NAME.after-OFFSET`` beside the file."""
    scan = Scan.of(path, strict=False)
    if check is not None:
        check(scan)
    size = Path(path).stat().st_size
    if scan.good_end < size:
        tail = size - scan.good_end
        largest = max(scan.chunk_sizes, default=0) * record_dtype(scan.datapath).itemsize
        with open_nofollow(path, "r+b") as fh:
            if tail > _CHUNK_HEAD.size + largest:
                aside = Path(f"{path}.after-{scan.good_end}")
                n = 1
                while os.path.lexists(aside):  # an earlier set-aside is never overwritten
                    n += 1
                    aside = Path(f"{path}.after-{scan.good_end}.{n}")
                fh.seek(scan.good_end)
                with open_nofollow(aside, "wb", new=True) as out:
                    while block := fh.read(1 << 22):
                        out.write(block)
                scan.problem = (f"{scan.problem}; the {tail:,} bytes from there on are kept "
                                f"in {aside}")
                scan.set_aside = str(aside)
            fh.truncate(scan.good_end)
    return scan
