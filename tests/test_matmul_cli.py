"""tcprobe gemm: .npy in and out, --compare between GPUs, --exact, bad input."""

import json

import ml_dtypes
import numpy as np
from cli_helpers import one_error
from click.testing import CliRunner
from matmul_data import as_array, words

from tcprobe.cli import main


def run(args):
    return CliRunner().invoke(main, ["gemm", *args], catch_exceptions=False)


def test_gemm_writes_the_words_of_matmul(tmp_path):
    import tcprobe

    rng = np.random.default_rng(0)
    a = as_array(words(rng, "f16", (6, 40)), np.float16)
    b = as_array(words(rng, "f16", (40, 5)), np.float16)
    c = as_array(words(rng, "f32", (6, 5)), np.float32)
    for name, x in (("a", a), ("b", b), ("c", c)):
        np.save(tmp_path / f"{name}.npy", x)
    r = run(["--a", str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy"), "--c",
             str(tmp_path / "c.npy"), "--gpu", "H100", "--instr", "mma", "--out",
             str(tmp_path / "d.npy")])
    assert r.exit_code == 0, r.output
    assert "mma.f16.f32.k16" in r.output
    d = np.load(tmp_path / "d.npy")
    want = tcprobe.matmul(a, b, c, gpu="H100", instr="mma")  # the API's default: cublas
    assert d.dtype == np.float32
    assert np.array_equal(d.view(np.uint32), want.view(np.uint32))
    chain = tcprobe.matmul(a, b, c, gpu="H100", instr="mma", schedule="chain")
    assert not np.array_equal(d.view(np.uint32), chain.view(np.uint32))
    r = run(["--a", str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy"), "--c",
             str(tmp_path / "c.npy"), "--gpu", "H100", "--instr", "mma", "--schedule", "chain",
             "--out", str(tmp_path / "d2.npy")])
    assert r.exit_code == 0, r.output
    assert np.array_equal(np.load(tmp_path / "d2.npy").view(np.uint32), chain.view(np.uint32))


def test_gemm_compare_and_exact(tmp_path):
    """A100 and H100 differ on bf16 (block 8 and F=24 against 16 and 25):
    the compare table counts the elements that differ, and its JSON matches
    the two products."""
    import tcprobe

    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 256)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((256, 8)).astype(ml_dtypes.bfloat16)
    np.save(tmp_path / "a.npy", a)  # saved as 2-byte voids: --format names them
    np.save(tmp_path / "b.npy", b)
    out = tmp_path / "r.json"
    r = run(["--a", str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy"), "--format", "bf16",
             "--gpu", "A100", "--compare", "H100", "--compare-instr", "mma", "--exact",
             "--json", str(out)])
    assert r.exit_code == 0, r.output
    rep = json.loads(out.read_text())
    d_a100 = tcprobe.matmul(a, b, gpu="A100").view(np.uint32)
    d_h100 = tcprobe.matmul(a, b, gpu="H100", instr="mma").view(np.uint32)
    differ = int((d_a100 != d_h100).sum())
    assert differ > 0
    assert rep["compare"]["differ"] == differ
    assert sum(rep["compare"]["histogram"].values()) == differ
    assert f"{differ:,} of 64 elements differ" in r.output
    assert set(rep["exact"]) == {"A100", "H100"}
    w = rep["compare"]["worst"]
    assert d_h100[w["row"], w["column"]] == w["got"] and d_a100[w["row"], w["column"]] == w["want"]


def test_gemm_bad_input_is_one_error_line(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((4, 16), np.float16))
    np.save(tmp_path / "b.npy", np.ones((8, 4), np.float16))
    np.save(tmp_path / "v.npy", np.ones((4, 16), ml_dtypes.bfloat16))
    for args, text in (
        (["--b", str(tmp_path / "b.npy"), "--gpu", "H100"], "B has 8 rows"),
        (["--b", str(tmp_path / "a.npy").replace("a.npy", "b.npy"), "--gpu", "Z9"], "B has 8"),
        (["--b", str(tmp_path / "missing.npy"), "--gpu", "H100"], "cannot read"),
    ):
        r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "a.npy"), *args])
        one_error(r, text)
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "v.npy"), "--b",
                                  str(tmp_path / "a.npy").replace("a.npy", "v.npy"),
                                  "--gpu", "H100"])
    one_error(r, "--a-format")
    np.save(tmp_path / "sq.npy", np.ones((16, 16), np.float16))
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "sq.npy"), "--b",
                                  str(tmp_path / "sq.npy"), "--gpu", "Z9"])
    one_error(r, "unknown GPU")
