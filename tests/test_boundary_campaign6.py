"""Issue 36, a sixth campaign (docs/campaign-6.md): each case a bad input that
now gives one ``error:`` line and exit 2 (an option given twice or blank, a
planted same-file output, a profile word that is no NaN, ...), an option
that was silently ignored and is now refused, or an input that was wrongly
refused, crashed or silently wrong and now gives the right words."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.matrix.operands import MatmulError

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(6)
NVIDIA_TOML = """name = "t"
families = ["mma"]
window_bits = 24
block_size = 4
zero_floor = -133
input_conversion = "truncate"
output_rounding = "rz"
zero_sign = "positive"
nan = 0x7fffffff
"""
AMD_TOML = """name = "a"
gpu = "MI300X"
families = ["mfma"]
[mfma]
design = "truncated"
block = 4
window = 24
window2 = 31
"""


@pytest.fixture(scope="module")
def ab(tmp_path_factory):
    """A (8, 32), B (32, 8) f16 .npy files of small integers (every sum exact) and D."""
    d = tmp_path_factory.mktemp("ab")
    a = RNG.integers(-3, 4, (8, 32)).astype(np.float16)
    b = RNG.integers(-3, 4, (32, 8)).astype(np.float16)
    np.save(d / "a.npy", a)
    np.save(d / "b.npy", b)
    np.save(d / "d.npy", (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))
    np.save(d / "u8.npy", RNG.integers(0, 256, (4, 64)).astype(np.uint8))
    np.save(d / "s8.npy", RNG.integers(-128, 128, (64, 4)).astype(np.int8))
    return d


def bf16_ones(m, n):
    return torch.ones(m, n, dtype=torch.bfloat16)


# ---------------------------------------------------------------------------
# The option gate (options.check_given): given twice or blank is one error.


@pytest.mark.parametrize("extra,needle", [
    (["--gpu", "A100"], "--gpu is given 2 times ('H100', 'A100'): give it once"),
    (["--gpu=A100"], "--gpu is given 2 times ('H100', 'A100')"),
    (["--seed", "1", "--seed", "2"], "--seed is given 2 times ('1', '2')"),
    (["--format", "f16"], "--format is given 2 times ('bf16', 'f16')"),
    (["--dtype", ""], "--dtype: an empty value names nothing"),
    (["--compare", " "], "--compare: an empty value names nothing"),
    (["--compare-model", ""], "--compare-model: an empty value names nothing"),
    (["--a", ""], "--a: an empty value names nothing"),
    (["--instr="], "--instr: an empty value names nothing"),
])
def test_gemm_options_given_twice_or_blank_are_refused(extra, needle):
    one_error(invoke("gemm", "--random", "8x8x32", "--format", "bf16", "--gpu", "H100", *extra),
              needle)


@pytest.mark.parametrize("args,needle", [
    (["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:h100", "--cases", "50",
      "--datapath", ""], "--datapath: an empty value names nothing"),
    (["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:h100", "--cases", "50",
      "--shard", ""], "--shard: an empty value names nothing"),
    (["ladder", "--format", "bf16", "--instr", "mma", "--device", ""],
     "--device: an empty value names nothing"),
    (["ladder", "--format", "bf16", "--instr", "mma", "--instr", "wgmma", "--device", "sim:h100"],
     "--instr is given 2 times ('mma', 'wgmma')"),
    (["smoke", "--device", "", "--format", "bf16", "--no-sass"],
     "--device: an empty value names nothing"),
    (["batch-invariance", "--gpu", "H100", "--dtype", "bf16", "-n", "64", "-n", "32", "-k", "64",
      "--m", "1:4"], "-n is given 2 times ('64', '32')"),
    (["report", "merge", ".", "--out", "x", "--out", "y"], "--out is given 2 times ('x', 'y')"),
])
def test_other_commands_refuse_an_option_given_twice_or_blank(tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    one_error(invoke(*args), needle)
    assert not list(tmp_path.iterdir())  # nothing written


def test_fit_gemm_blank_formats_are_refused(ab):
    for option in ("--bias-format", "--a-format", "--dtype", "--splits"):
        one_error(invoke("fit-gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--d",
                         ab / "d.npy", "--gpu", "H100", option, ""),
                  f"{option}: an empty value names nothing")


def test_repeatable_options_and_flags_stay_repeatable(tmp_path):
    r = invoke("validate", "--format", "bf16", "--instr", "mma", "--device", "sim:h100",
               "--cases", "50", "--out", tmp_path / "v", "--model", "h100", "--model", "ieee")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("value,on", [("0", False), ("no", False), ("OFF", False),
                                      ("false", False), ("1", True), ("yes", True)])
def test_heartbeat_words(monkeypatch, value, on):
    from tcprobe.console import Heartbeat

    monkeypatch.setenv("TCPROBE_HEARTBEAT", value)
    assert Heartbeat("").on is on
    assert invoke("gemm", "--random", "8x8x32", "--format", "bf16", "--gpu", "H100").exit_code == 0


@pytest.mark.parametrize("value", ["", " ", "2", "x", "é"])
def test_a_heartbeat_setting_that_is_no_word_is_refused(monkeypatch, value):
    monkeypatch.setenv("TCPROBE_HEARTBEAT", value)
    one_error(invoke("gemm", "--random", "8x8x32", "--format", "bf16", "--gpu", "H100"),
              f"TCPROBE_HEARTBEAT={value!r} is neither off", "or unset it")


def test_a_comma_list_names_each_entry_once():
    from tcprobe.commands.options import comma_list

    assert comma_list(("sm_90,SM_90", "sm_90a"), "--arch") == ["sm_90", "sm_90a"]


# ---------------------------------------------------------------------------
# torch tensors at tcprobe.matmul and under emulate: one gate (operands.torch_dense).


class Sub(torch.Tensor):
    pass


def test_a_tensor_subclass_is_read_by_its_words():
    a = torch.from_numpy(RNG.integers(-3, 4, (8, 32)).astype(np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(RNG.integers(-3, 4, (32, 8)).astype(np.float32)).to(torch.bfloat16)
    exact = a.double() @ b.double()
    d = tcprobe.matmul(a.as_subclass(Sub), b, gpu="H100", progress=False)
    assert torch.equal(d.double(), exact)
    import tcprobe.torch as tt

    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        out = a.as_subclass(Sub) @ b
    assert rep.routed == 1 and torch.equal(out.as_subclass(torch.Tensor).double(), exact)


@pytest.mark.parametrize("make,needle", [
    (lambda a: a.to_sparse(), "A: a sparse_coo tensor: pass its dense words (A.to_dense())"),
    (lambda a: a.to_sparse_csr(), "A: a sparse_csr tensor"),
    (lambda a: torch.nested.nested_tensor([a, a]), "A: a nested tensor has no one shape"),
    (lambda a: a.to("meta"), "A: a meta tensor holds no values"),
])
def test_tensors_without_strided_words_are_named(make, needle):
    with _quiet():
        a = make(bf16_ones(8, 32))
    with pytest.raises(MatmulError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        tcprobe.matmul(a, bf16_ones(32, 8), gpu="H100", progress=False)


def _quiet():
    import warnings

    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")

    class _Done:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            ctx.__exit__(*exc)
            return False
    return _Done()


def test_a_tensor_under_torch_func_is_named():
    b = bf16_ones(32, 8)
    with pytest.raises(MatmulError, match="A: a tensor wrapped by torch.func"):
        torch.func.vmap(lambda x: tcprobe.matmul(x, b, gpu="H100", progress=False))(
            bf16_ones(8, 32)[None].expand(2, 8, 32))


@pytest.mark.parametrize("key", ["dtype", "out"])
def test_dtype_given_an_array_is_named(key):
    with _quiet(), pytest.raises(MatmulError, match=f"{key}: names D's type .* not an array "
                                                    r"\(Tensor of shape \(8, 8\)\)"):
        tcprobe.matmul(bf16_ones(8, 32), bf16_ones(32, 8), gpu="H100", progress=False,
                       **{key: torch.empty(8, 8)})


@pytest.mark.parametrize("call", [
    lambda a, b: torch.mm(a, b, out_dtype=torch.float32, out=torch.empty(8, 8)),
    lambda a, b: torch.addmm(torch.full((8, 8), 1.0), a, b, out_dtype=torch.float32,
                             out=torch.empty(8, 8)),
    lambda a, b: torch.bmm(a[None], b[None], out_dtype=torch.float32,
                           out=torch.empty(1, 8, 8))[0],
    lambda a, b: torch.baddbmm(torch.full((1, 8, 8), 1.0), a[None], b[None],
                               out_dtype=torch.float32, out=torch.empty(1, 8, 8))[0],
])
def test_emulate_routes_the_dtype_out_overloads(call):
    import tcprobe.torch as tt

    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        d = call(bf16_ones(8, 32), bf16_ones(32, 8))
    assert rep.routed == 1 and rep.fallback == 0
    assert d.dtype == torch.float32 and float(d[0, 0]) in (32.0, 33.0)  # 32 ones (+ C of 1)


def test_bilinear_is_a_counted_fallback_and_strict_refuses_it():
    import tcprobe.torch as tt

    a, w = bf16_ones(8, 32), torch.ones(2, 32, 32, dtype=torch.bfloat16)
    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        torch.nn.functional.bilinear(a, a, w)
    assert rep.fallbacks == [("_trilinear", "aten._trilinear has no tensor-core route here")]
    with pytest.raises(ValueError, match="strict: aten._trilinear cannot run"), \
            tt.emulate(gpu="H100", strict=True):
        torch.nn.functional.bilinear(a, a, w)


# ---------------------------------------------------------------------------
# Integers: T4 said unmodelled, not absent; the same-bits verdict of exact sums.


def test_t4_integer_mma_is_said_unmodelled_not_absent():
    with pytest.raises(MatmulError, match="tcprobe does not model T4's u8 x s8 -> s32 product "
                                          r".*sm_75's integer mma.sync \(u8: m8n8k16 in the PTX"):
        tcprobe.matmul(np.ones((4, 64), np.uint8), np.ones((64, 4), np.int8), gpu="T4",
                       progress=False)
    with pytest.raises(MatmulError, match="sm_70's mma.sync takes f16 inputs, not u8"):
        tcprobe.matmul(np.ones((4, 64), np.uint8), np.ones((64, 4), np.int8), gpu="V100",
                       progress=False)


def test_integer_compare_answers_same_bits(ab):
    r = invoke("gemm", "--a", ab / "u8.npy", "--b", ab / "s8.npy", "--gpu", "H100", "--compare",
               "A100")
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "same bits? yes, on every input: both sum the integer products exactly" in text
    assert "not proven" not in text


def test_smoke_passes_an_integer_datapath():
    r = invoke("smoke", "--device", "sim:a100", "--format", "s8", "--no-sass", "--cases", "20")
    assert r.exit_code == 0, r.output
    assert "an integer product (the exact sum: no fingerprint keys)" in " ".join(r.output.split())


# ---------------------------------------------------------------------------
# Outputs: two options on one file, an output over an input, '-' as a folder.


@pytest.mark.parametrize("extra,needle", [
    (["--out", "{t}/same.npy", "--json", "{t}/same.npy"],
     "--out and --json name the same file"),
    (["--out", "{a}"], "is also --a: writing it would overwrite that input"),
    (["--json", "{b}"], "is also --b"),
])
def test_gemm_outputs_that_collide_are_refused(tmp_path, ab, extra, needle):
    before = (ab / "a.npy").read_bytes(), (ab / "b.npy").read_bytes()
    args = [x.format(t=tmp_path, a=ab / "a.npy", b=ab / "b.npy") for x in extra]
    one_error(invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100", *args),
              needle)
    assert ((ab / "a.npy").read_bytes(), (ab / "b.npy").read_bytes()) == before
    assert not (tmp_path / "same.npy").exists()


def test_fit_gemm_json_over_its_d_is_refused(ab):
    before = (ab / "d.npy").read_bytes()
    one_error(invoke("fit-gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--d", ab / "d.npy",
                     "--gpu", "H100", "--json", ab / "d.npy"), "is also --d")
    assert (ab / "d.npy").read_bytes() == before


@pytest.mark.parametrize("args", [
    ["gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "-", "--k", "64"],
    ["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:h100", "--cases", "50",
     "--out", "-"],
])
def test_a_folder_option_refuses_dash(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    one_error(invoke(*args), "- would be a folder named '-'")
    assert not list(tmp_path.iterdir())


def test_a_schedule_file_giving_a_key_twice_is_refused(tmp_path, ab):
    f = tmp_path / "s.json"
    f.write_text('{"split_k": 2, "split_k": 3}')
    one_error(invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100",
                     "--schedule", f), "the key 'split_k' is given twice")
    f.write_text(json.dumps({"split_k": 2}))  # given once it is read
    assert invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100",
                  "--schedule", f).exit_code == 0


# ---------------------------------------------------------------------------
# Sim profiles: words that are no NaN, blank names, tables that would be ignored.


def run_case(path, datapath="mma.bf16.f32.k16", a="1", b="1"):
    return invoke("run-case", "--datapath", datapath, "--device", f"sim:{path}", "--a", a,
                  "--b", b, "--model", "ieee")


@pytest.mark.parametrize("change,datapath,needle", [
    (("nan = 0x7fffffff", "nan = 0x3f800000"), "mma.f16.f32.k16",
     "nan: 0x3f800000 is no NaN of f32 (it is 1)"),
    (None, "mma.f16.f16.k16", "nan: 0x7fffffff does not fit mma.f16.f16.k16's f16 D (16 bits)"),
    (("name = \"t\"", "name = \"\""), "mma.bf16.f32.k16", "name: '' names nothing"),
    (("name = \"t\"", "name = \"t\"\ngpu = \" \""), "mma.bf16.f32.k16", "gpu: ' ' names nothing"),
])
def test_profile_words_and_names_that_mean_nothing_are_refused(tmp_path, change, datapath, needle):
    text = NVIDIA_TOML if change is None else NVIDIA_TOML.replace(*change)
    (tmp_path / "p.toml").write_text(text)
    one_error(run_case(tmp_path / "p.toml", datapath, a="0x7e00", b="0x3c00"), needle)


def test_an_f16_output_reads_its_own_nan_word(tmp_path):
    (tmp_path / "p.toml").write_text(NVIDIA_TOML + "[output.f16]\nnan = 0x7e01\n")
    r = run_case(tmp_path / "p.toml", "mma.f16.f16.k16", a="0x7e00", b="0x3c00")
    assert r.exit_code == 1 and "0x7e01 (nan)" in r.output, r.output  # ieee writes 0x7fff


def test_a_scaled_table_no_kind_reads_is_refused(tmp_path):
    (tmp_path / "p.toml").write_text(NVIDIA_TOML + "[scaled.mx]\nproduct_window = 20\n")
    one_error(run_case(tmp_path / "p.toml"), "[scaled.mx]: the device runs no block-scaled kind")
    (tmp_path / "q.toml").write_text(NVIDIA_TOML.replace('["mma"]', '["mma", "tcgen05"]')
                                     + "[scaled.mx]\nproduct_window = 20\n")
    assert run_case(tmp_path / "q.toml").exit_code == 0


@pytest.mark.parametrize("device,datapath,needle", [
    ("sim:mi300x", "mma.bf16.f32.k16", "sim:mi300x does not run mma (it runs mfma)"),
    ("sim:h100", "mfma.f16.f32.k16", "sim:h100 does not run mfma (it runs mma, wgmma)"),
    ("sim:a100", "wgmma.bf16.f32.k16", "sim:a100 does not run wgmma (it runs mma)"),
    ("AMD", "mma.bf16.f32.k16", "amd.toml does not run mma (it runs mfma)"),
])
def test_a_datapath_the_device_lacks_is_refused(tmp_path, device, datapath, needle):
    if device == "AMD":
        (tmp_path / "amd.toml").write_text(AMD_TOML)
        device = f"sim:{tmp_path / 'amd.toml'}"
    one_error(invoke("run-case", "--datapath", datapath, "--device", device, "--a", "1", "--b",
                     "1"), f"--datapath {datapath}", needle)


def test_smoke_shows_an_amd_ladder_step_by_its_design():
    r = invoke("smoke", "--device", "sim:mi300x", "--format", "bf16", "--no-sass", "--cases",
               "20")
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "mfma.bf16.f32.k16: design=" in text and "window_bits=None" not in text


# ---------------------------------------------------------------------------
# Formats: a misspelt one names its option; gemm --dtype takes matmul's types.


@pytest.mark.parametrize("args,needle", [
    (["ladder", "--format", "bf16", "--instr", "mma", "--device", "sim:h100", "--dtype", "bf8"],
     "--dtype: unknown format 'bf8'"),
    (["smoke", "--device", "sim:h100", "--format", "bf17", "--no-sass"],
     "--format: unknown format 'bf17'"),
    (["validate", "--format", "bf17", "--device", "sim:h100", "--cases", "10"],
     "--format: unknown format 'bf17'"),
    (["sass-check", "--arch", "sm_90", "--format", "bf17"], "--format: unknown format 'bf17'"),
])
def test_a_misspelt_format_names_its_option(tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    one_error(invoke(*args), needle)


def test_fit_gemm_formats_name_their_option(ab):
    base = ["fit-gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--d", ab / "d.npy", "--gpu",
            "H100"]
    one_error(invoke(*base, "--d-format", "x"), "--d-format: unknown format 'x'")
    line = one_error(invoke(*base, "--splits", ab / "a.npy"), "--splits (the splits case")
    assert "--splits-format" not in line


def test_gemm_dtype_takes_bf16_and_fp8(tmp_path, ab):
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100", "--dtype",
               "bf16", "--out", out)
    assert r.exit_code == 0, r.output
    a = np.load(ab / "a.npy").astype(np.float64)
    b = np.load(ab / "b.npy").astype(np.float64)
    want = (a @ b).astype(ml_dtypes.bfloat16).view(np.uint16)  # small integers: exact in bf16
    assert np.array_equal(np.load(out).view(np.uint16), want)
    one_error(invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100",
                     "--dtype", "f64"), "--dtype: 'f64' names no output type")


def test_resume_with_nothing_to_resume_says_so(tmp_path):
    r = invoke("validate", "--format", "bf16", "--instr", "mma", "--device", "sim:h100",
               "--cases", "50", "--out", tmp_path / "v", "--resume")
    assert r.exit_code == 0, r.output
    assert f"note: --resume: {tmp_path / 'v'} holds no capture yet: starting a new one" in r.stderr


@pytest.mark.parametrize("target,needle", [
    ("/dev/full", "/dev/full is not a regular file"),
    ("{f}/x.json", "is a file, not a folder"),
])
def test_a_json_path_that_cannot_be_written_is_refused_before_the_work(tmp_path, target, needle):
    (tmp_path / "f").write_text("keep\n")
    one_error(invoke("ladder", "--format", "bf16", "--device", "sim:h100", "--steps", "slice",
                     "--json", target.format(f=tmp_path / "f")), needle)  # one line: no step ran
    assert (tmp_path / "f").read_text() == "keep\n"


def test_run_case_keeps_an_empty_entry_in_its_place():
    # A = 1, +0, 1 and B = 1, 1, 2: 1 + 0 + 2 = 3 (skipping the empty entry gave 1 + 1 = 2)
    r = invoke("run-case", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100", "--a",
               "0x3f80,,0x3f80", "--b", "0x3f80,0x3f80,0x4000", "--model", "ieee")
    assert r.exit_code == 0, r.output
    assert "0x40400000 (3)" in r.output and "0x40000000" not in r.output
