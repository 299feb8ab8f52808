"""tcprobe.atlas: the H200 atlas is what scripts/build_atlas.py builds from the
committed run, every committed call finds its measured schedule, and the
provenance of everything else is said (predicted by which rule, or a guess)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tcprobe import atlas
from tcprobe.atlas import predict, replay
from tcprobe.matrix.schedule import from_value

ROOT = Path(__file__).resolve().parent.parent


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_atlas_is_what_the_script_builds(capsys):
    assert _script("build_atlas").main(["--check"]) == 0


def test_split_starts_are_the_probes():
    """The starts the splits probe read on the H200 (reports/.../README.md, FITS.md)."""
    got = {(e["a"], e["m"], e["n"], e["k"]): e["kernel"]["split_starts"]
           for e in atlas.entries("H200")}
    assert got[("bf16", 256, 256, 4096)] == [1408, 2816]
    assert got[("f16", 256, 256, 4096)] == [1408, 2816]
    assert got[("bf16", 128, 128, 16384)] == list(range(1536, 16384, 1536))
    assert got[("tf32", 64, 64, 512)] == list(range(64, 512, 64))
    assert got[("tf32", 128, 128, 1024)] == list(range(64, 1024, 64))
    assert got[("tf32", 256, 256, 4096)] == list(range(352, 4096, 352))
    assert got[("bf16", 512, 512, 2048)] == [] and got[("bf16", 64, 64, 512)] == []
    assert got[("e4m3", 128, 128, 16384)] == [2816, 5632, 8448, 11264, 14080]


def _form(call):
    op, beta = call.op, call.result["beta"]
    if op in ("matmul", "linear") or (op == "addmm" and beta != 1.0):
        return "plain"
    return {"addmm": "addmm_beta1", "addmm_bias": "bias", "linear_bias": "bias"}.get(op, op)


def _starts(s, k, instr_k):
    return predict.starts(k, s.k_block or instr_k, s.split_k) if s.split_k > 1 else []


CALLS = replay.calls()


def test_195_calls():
    assert len(CALLS) == 195


@pytest.mark.parametrize("call", CALLS, ids=[c.id.split("library/")[1] for c in CALLS])
def test_every_committed_call_is_measured_with_the_tests_schedule(call):
    """The atlas's schedule of each call is the one tests/test_silicon_h200_library.py
    (written from the fits, by hand) runs, up to equivalent spellings of the split."""
    from test_silicon_h200_library import schedule_of

    op = "scaled_mm" if call.fmt == "e4m3" else "gemm"
    layout = "row/col" if op == "scaled_mm" else "row/row"
    found = atlas.lookup("H200", op, call.fmt, *call.shape, form=_form(call), layout=layout)
    assert found.provenance == "measured"
    assert any(e.endswith(f"{call.folder.split('library/')[1]}/{call.result['d']}")
               for e in found.evidence)
    theirs = from_value(schedule_of(call.fmt, call.shape, call.op, call.result["beta"]))
    ours = found.schedule
    k, ik = call.shape[2], {"tf32": 8, "e4m3": 32}.get(call.fmt, 16)
    assert _starts(ours, k, ik) == _starts(theirs, k, ik)
    keep = ("instr", "promote", "operand_round", "c")
    assert {a: getattr(ours, a) for a in keep} == {a: getattr(theirs, a) for a in keep}


def test_leave_one_out_figures():
    """Worked by hand from the 10 measured (group, shape) points: e.g. 'length'
    holding out tf32 256x256x4096 takes 128x128x1024's 64 per split, 64 splits, not 12."""
    loo = predict.leave_one_out("H200")
    figures = {r: {g: v[:2] for g, v in loo[r].items()} for r in predict.RULES}
    assert figures == {
        "none": {"16-bit": (2, 4), "tf32": (0, 3), "fp8": (2, 3)},
        "nearest": {"16-bit": (0, 4), "tf32": (0, 3), "fp8": (1, 3)},
        "length": {"16-bit": (1, 4), "tf32": (2, 3), "fp8": (1, 3)},
        "threshold": {"16-bit": (2, 4), "tf32": (0, 3), "fp8": (2, 3)}}
    assert [predict.best_rule("H200", g) for g in ("16-bit", "tf32", "fp8")] == \
        ["none", "length", "none"]


def test_predicted_shapes_say_their_rule():
    got = atlas.lookup("H200", "gemm", "tf32", 64, 64, 2048)
    assert got.provenance == "predicted" and "'length'" in got.rule
    assert "2 of 3 held-out" in got.rule
    # 64x64x512 is the nearest measured shape: 64 per split, so 2048 / 64 = 32 splits
    assert (got.schedule.split_k, got.schedule.k_block, got.schedule.split_rule) == (32, 32, "ceil")
    assert got.schedule.operand_round == "rne"
    other = atlas.lookup("H200", "gemm", "bf16", 64, 64, 512, layout="col/row")
    assert other.provenance == "predicted" and "layout row/row" in other.rule
    batched = atlas.lookup("H200", "gemm", "bf16", 64, 64, 512, batch=4)
    assert batched.provenance == "predicted" and "unbatched" in batched.rule


def test_default_guesses_say_why():
    h100 = atlas.lookup("H100", "gemm", "bf16", 256, 256, 4096)
    assert h100.provenance == "default guess" and "no atlas for H100" in h100.reason
    gemv = atlas.lookup("H200", "gemm", "bf16", 1, 4096, 4096)
    assert gemv.provenance == "default guess" and "gemv" in gemv.reason
    fp8 = atlas.lookup("H100", "scaled_mm", "e4m3", 64, 64, 512)
    assert fp8.axes == {"instr": "wgmma", "promote": 4}
    assert atlas.lookup("B200", "scaled_mm", "e4m3", 64, 64, 512).axes == {}
    assert atlas.lookup("MI300X", "gemm", "tf32", 64, 64, 64).axes == {}


@pytest.mark.parametrize("kw,match", [
    ({"op": "gemv"}, "^op"), ({"dtypes": "int8"}, "^dtypes"), ({"dtypes": ("bf16", "f16")}, "^dtypes"),
    ({"m": -1}, "^m must"), ({"k": 2.5}, "^k must"), ({"form": "chain"}, "^form"),
    ({"op": "scaled_mm"}, "^form|^dtypes"), ({"gpu": "Z80"}, "^gpu")])
def test_bad_lookups_name_the_argument(kw, match):
    args = {"gpu": "H200", "op": "gemm", "dtypes": "bf16", "m": 64, "n": 64, "k": 512, **kw}
    with pytest.raises(ValueError, match=match):
        atlas.lookup(args.pop("gpu"), args.pop("op"), args.pop("dtypes"), args.pop("m"),
                     args.pop("n"), args.pop("k"), **args)


@pytest.mark.parametrize("shape", [(0, 64, 512), (64, 0, 512), (64, 64, 0), (np.int64(0), 8, 8)])
def test_an_empty_product_is_exact_as_matmul_says(shape):
    # matmul(schedule="auto") and emulate answer a 0 dimension as exact (+0 or C):
    # the atlas's own lookup says the same, where it had refused "m must be positive"
    got = atlas.lookup("H200", "gemm", "bf16", *shape)
    assert got.provenance == "exact" and got.axes == {} and "empty product" in got.reason
    assert atlas.lookup("H200", "gemm", "bf16", 8, 8, 8, batch=0).provenance == "exact"


def test_batch_invariance_from_the_atlas():
    ranges = atlas.batch_invariance("H200", "bf16", 256, 4096, 1, 600, ref=2)
    got = [(r.lo, r.hi, r.provenance, r.same) for r in ranges]
    assert got == [(1, 1, "default guess", "unknown"), (2, 2, "predicted", "yes"),
                   (3, 255, "predicted", "yes"), (256, 256, "measured", "no"),
                   (257, 600, "predicted", "yes")]
    at = ranges[3]
    assert at.mechanism == "split count 1 -> 3 (starts [1408, 2816])"
    assert at.basis.endswith("bf16-256x256x4096/random.matmul.d.npy")
    one = atlas.batch_invariance("H200", "bf16", 256, 4096, 1, 300)
    assert {r.same for r in one[1:]} == {"unknown"} and "gemv" in one[1].mechanism


def test_batch_invariance_command(tmp_path):
    from click.testing import CliRunner

    from tcprobe.cli import main

    out = tmp_path / "bi.json"
    r = CliRunner().invoke(main, ["batch-invariance", "--gpu", "H200", "--dtype", "bf16", "-n",
                                  "256", "-k", "4096", "--m", "1:300", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "  256          3 parallel splits at 1408, 2816  measured" in r.output
    import json

    assert json.loads(out.read_text())["ranges"][2]["m"] == [256, 256]
    for bad, msg in ((["--m", "9:x"], "--m"), (["--m", "5:2"], "empty"),
                     (["--gpu", "Z80"], "gpu"), (["-n", "0"], "n must")):
        base = {"--gpu": "H200", "--dtype": "bf16", "-n": "256", "-k": "4096"}
        base.update(zip(bad[::2], bad[1::2], strict=True))  # each option once
        args = ["batch-invariance", *(x for kv in base.items() for x in kv)]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and "error:" in r.output and msg in r.output, r.output
