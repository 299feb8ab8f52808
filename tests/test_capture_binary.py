"""The .tcap capture format: round trip, and clear errors naming the offset
of a truncated or corrupted file."""

import re
import struct

import numpy as np
import pytest
from cli_helpers import one_error
from click.testing import CliRunner

from tcprobe import suites
from tcprobe.capture import CaptureError, binary, load
from tcprobe.cli import main
from tcprobe.devices.registry import open_device
from tcprobe.models.datapath import Datapath

DEV = {"device": "sim:b200", "gpu": "B200", "simulated": True}


def write(path, dp_id, n=(500, 300), seed=1):
    dp = Datapath.parse(dp_id)
    cases, which = suites.generate(dp, "raw", seed, 0, sum(n))
    words = (np.arange(sum(n), dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    words &= np.uint32((1 << min(32, 8 * binary.record_dtype(dp)["d"].itemsize)) - 1)
    head = binary.make_header(dp, device=DEV, seed=seed, suites=["raw"], generators=["raw/raw"],
                              plan={"cases": sum(n)})
    with binary.Writer(path, head) as w:
        lo = 0
        for m in n:
            w.append(cases.take(slice(lo, lo + m)), words[lo:lo + m], which[lo:lo + m])
            lo += m
    return dp, cases, words


@pytest.mark.parametrize("dp_id", ["mma.bf16.f32.k16", "mma.f16.f16.k16", "mma.tf32.f32.k8",
                                   "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4.sparse",
                                   "tcgen05.i8.s8xu8.s32.k32.sat", "tcgen05.f8f6f4.e4m3xe2m1.f16.k32"])
def test_round_trip(tmp_path, dp_id):
    path = tmp_path / "run.tcap"
    dp, cases, words = write(path, dp_id)
    assert binary.sniff(path)
    (cap,) = load(path)
    assert cap.datapath == dp and cap.gpu == "B200" and cap.meta["complete"]
    for f in ("a", "b", "c", "scale_a", "scale_b", "active"):
        x, y = getattr(cap.cases, f), getattr(cases, f)
        assert (x is None and y is None) or np.array_equal(x, y), f
    assert np.array_equal(cap.words, words)
    assert cap.meta["header"]["seed"] == 1
    size = binary.record_dtype(dp).itemsize
    head_len = struct.unpack_from("<I", path.read_bytes(), 12)[0]
    assert path.stat().st_size == 20 + head_len + 2 * 16 + 800 * size


def chunk_offsets(path):
    data = path.read_bytes()
    pos = 20 + struct.unpack_from("<I", data, 12)[0]
    out = []
    while pos < len(data):
        out.append(pos)
        n = struct.unpack_from("<I", data, pos + 8)[0]
        pos += 16 + n * 73
    return out


def test_truncated_file_names_the_offset(tmp_path):
    path = tmp_path / "run.tcap"
    write(path, "mma.bf16.f32.k16")
    data = path.read_bytes()
    first, second = chunk_offsets(path)
    for cut, where in ((len(data) - 7, second), (second + 5, second), (first + 100, first)):
        bad = tmp_path / f"cut{cut}.tcap"
        bad.write_bytes(data[:cut])
        with pytest.raises(CaptureError, match=rf"truncated chunk \d at offset {where}\b"):
            load(bad)
    bad = tmp_path / "head.tcap"
    bad.write_bytes(data[:40])
    with pytest.raises(CaptureError, match="truncated header at offset 40"):
        load(bad)


def test_corrupted_byte_names_the_chunk_offset(tmp_path):
    path = tmp_path / "run.tcap"
    write(path, "mma.bf16.f32.k16")
    data = bytearray(path.read_bytes())
    first, second = chunk_offsets(path)
    data[second + 16 + 200] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(CaptureError, match=rf"corrupted chunk 1 at offset {second}: checksum"):
        load(path)
    data[second + 16 + 200] ^= 0x10
    data[first] = ord("X")
    path.write_bytes(bytes(data))
    with pytest.raises(CaptureError, match=rf"corrupted chunk 0 at offset {first}: bad chunk marker"):
        load(path)
    data[first] = ord("C")
    data[30] ^= 1  # inside the header text
    path.write_bytes(bytes(data))
    with pytest.raises(CaptureError, match="corrupted header at offset 20"):
        load(path)


def test_recover_cuts_a_torn_end(tmp_path):
    path = tmp_path / "run.tcap"
    write(path, "mma.bf16.f32.k16")
    first, second = chunk_offsets(path)
    with open(path, "ab") as fh:
        fh.write(b"CHNK\x02\x00\x00\x00garbage")
    scan = binary.recover(path)
    assert scan.n_records == 800 and scan.problem and "offset" in scan.problem
    assert len(load(path)[0]) == 800
    with open(path, "r+b") as fh:
        fh.truncate(second + 40)
    w, scan = binary.Writer.reopen(path)
    w.close()
    assert scan.n_records == 500 and path.stat().st_size == second


def test_score_reads_a_tcap(tmp_path):
    path = tmp_path / "run.tcap"
    dp = Datapath.parse("mma.bf16.f32.k16")
    cases, which = suites.generate(dp, "finite", 0, 0, 2000)
    words = open_device("sim:b200", "mma").run(dp, cases)
    head = binary.make_header(dp, device=DEV, seed=0)
    with binary.Writer(path, head) as w:
        w.append(cases, words, which)
    r = CliRunner().invoke(main, ["score", "--capture", str(path), "--model", "auto"])
    assert r.exit_code == 0, r.output
    assert re.search(r"2,000\s.*\b0\b", r.output)
    r = CliRunner().invoke(main, ["score", "--capture", str(path), "--model", "ieee"])
    assert r.exit_code == 1
    path.write_bytes(path.read_bytes()[:-3])
    r = CliRunner().invoke(main, ["score", "--capture", str(path)])
    one_error(r, "truncated chunk 0 at offset")
