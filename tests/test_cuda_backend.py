"""The CUDA GEMM backend (kernels/tc_gemm.cu): the kernel compiles with NVRTC,
and the host build of the same source gives the CPU engine's words, word for
word, for every covered GPU profile and format (tcprobe.models.gemm.gemm_words
and the plain engine's fused_dot are the references; neither is this code)."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
from cuda_backend_support import (
    COVERED,
    INTEGER,
    SCALED,
    SPARSE,
    assert_same_words,
    engine_chain,
    fp4_operands,
    integer_model,
    integer_operands,
    model_chain,
    model_of,
    operands,
    row_id,
    scales,
    sparse_active,
)
from cuda_support import needs_nvdisasm, needs_nvrtc

from tcprobe.backends import cuda_gemm, cuda_params, host_build
from tcprobe.kernels import source
from tcprobe.models import gemm
from tcprobe.models.formats import get_format

KINDS = ("raw", "finite", "special", "spread", "cancel")
# the fast tier's rows first (one a family and input class), then the rest of COVERED
FAST = [("B200", "sm_100a", "tcgen05", "bf16", "f32"), ("H100", "sm_90", "wgmma", "e4m3", "f32"),
        ("A100", "sm_80", "mma", "tf32", "f16"), ("H100", "sm_90", "mma", "f16", "f16")]
ORDERED = FAST + [r for r in COVERED if r not in FAST]


_ids = _int_ids = row_id  # (GPU, datapath id) rows too


# ---------------------------------------------------------------------------
# The source


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100a"])
def test_kernel_compiles_with_nvrtc(arch):
    from tcprobe.devices.cuda import nvrtc

    cubin = cuda_gemm.compile_kernel(arch)
    assert cubin.data[:4] == b"\x7fELF"
    ptx = nvrtc.compile_ptx(source("tc_gemm.cu"), arch, name="tc_gemm.cu",
                            headers=cuda_gemm.headers(),
                            options=("-default-device",))
    entry = re.search(r"\.entry\s+tc_gemm_chain\s*\((.*?)\)", ptx, re.S)
    assert entry
    # the arguments _run_torch passes: TcParams, A, B, C, D, SA, SB, ACT, M, N, K, blk_lo, blk_hi
    params = re.findall(r"\.param\s[^,]*?tc_gemm_chain_param_\d+(\[\d+\])?", entry.group(1))
    assert len(params) == 13
    assert params[0] == f"[{8 * cuda_params.N_PARAMS}]"  # TcParams by value: N_PARAMS int64
    assert ".shared" in ptx  # the decoded tiles live in shared memory


@needs_nvrtc
@needs_nvdisasm
def test_kernel_sass_has_no_local_memory():
    """The decoded tiles in shared memory, the rest in registers: no spill or
    local array in the sm_90 SASS (a local load in the product loop would
    cost the speed the kernel is for)."""
    from tcprobe.devices.cuda import sass

    code = sass.functions(sass.disassemble(cuda_gemm.compile_kernel("sm_90").data))
    ops = [i.opcode.split(".")[0] for i in code["tc_gemm_chain"]]
    assert "LDS" in ops and "STS" in ops and "BAR" in ops
    assert not {"LDL", "STL"} & set(ops)


def _struct_fields(text: str, name: str) -> list[str]:
    body = re.search(r"struct " + name + r" \{(.*?)\};", text, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if decl:
            names += [x.strip() for x in decl.split(None, 1)[1].split(",")]
    return names


def test_params_layout_matches_header():
    text = source("tc_gemm_core.cuh")
    spec = [f.replace("signed", "is_signed") for f in cuda_params.SPEC_FIELDS]
    assert _struct_fields(text, "TcSpec") == spec
    assert _struct_fields(text, "TcStage") == list(cuda_params.STAGE_FIELDS)
    assert _struct_fields(text, "TcParams") == list(cuda_params.PARAM_FIELDS)
    assert host_build.library().tc_gemm_params_size() == cuda_params.N_PARAMS


# ---------------------------------------------------------------------------
# Words: the host build against the CPU engine


@pytest.mark.fast_first(len(FAST))
@pytest.mark.parametrize("row", ORDERED, ids=_ids)
def test_profile_words_equal_gemm_words(row):
    mdl = model_of(*row)
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    dp = mdl.datapath
    rng = np.random.default_rng(zlib.crc32(_ids(row).encode()))
    tiles = max(2, 96 // dp.k)  # K of 96 or more, several instructions chained
    for kind in KINDS:
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 19, tiles * dp.k, 21)
        want = gemm.gemm_words(mdl, a, b, c, (0, tiles))
        got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, tiles)
        assert got.dtype == np.uint32
        assert_same_words(got, want, kind)
        if kind == "finite":  # not a run of NaNs: most words are finite and nonzero
            fin = (want & 0x7FFFFFFF) != 0
            assert fin.mean() > 0.9


@pytest.mark.parametrize("row", [r for r in COVERED if r[2] in ("wgmma", "tcgen05")], ids=_ids)
def test_profile_words_equal_plain_engine(row):
    """The same words as the engine's plain kernel, instruction by instruction,
    on special-heavy operands whose M and N are not multiples of the CTA's 16."""
    mdl = model_of(*row)
    dp = mdl.datapath
    rng = np.random.default_rng(7)
    a, b, c = operands(rng, "special", dp.a_type, dp.b_type, dp.d_type, 17, 3 * dp.k, 33)
    assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3),
                          engine_chain(mdl, a, b, c, 0, 3))


def test_tiles_chain_and_jobs():
    """Tiles lo..hi from C: 0..2 then 2..5 is 0..5; rows over threads give the same words."""
    mdl = model_of("H100", "sm_90", "wgmma", "bf16", "f32")
    rng = np.random.default_rng(3)
    a, b, c = operands(rng, "special", "bf16", "bf16", "f32", 40, 80, 50)
    whole = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 5)
    part = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2)
    assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, part, 2, 5), whole)
    assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 5, jobs=2), whole)
    assert np.array_equal(whole, gemm.gemm_words(mdl, a, b, c, (0, 5)))
    mid = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 1, 4)
    assert np.array_equal(mid, gemm.gemm_words(mdl, a, b, c, (1, 4)))


@pytest.mark.parametrize("row", [("B200", "sm_100a", "tcgen05", "bf16", "f32"),
                                 ("A100", "sm_80", "mma", "tf32", "f16"),
                                 ("H100", "sm_90", "wgmma", "e5m2", "f32")], ids=_ids)
@pytest.mark.parametrize("k", [1, 7, 37])
def test_k_not_a_multiple_of_the_instruction(row, k):
    """K padded with +0 words to whole instructions, as the pipeline's main loop pads it."""
    from tcprobe.matrix import Problem, run
    from tcprobe.matrix.schedule import PRESETS

    mdl = model_of(*row)
    dp = mdl.datapath
    rng = np.random.default_rng(k)
    a, b, c = operands(rng, "special", dp.a_type, dp.b_type, dp.d_type, 9, k, 18)
    chain = run(Problem(mdl, a, dp.a_type, b, dp.b_type, dp.d_type, c, dp.c),
                PRESETS["chain"].schedule)
    assert np.array_equal(cuda_gemm.product_words_cuda(mdl, a, b, c), chain)
    host = run(Problem(mdl, a, dp.a_type, b, dp.b_type, dp.d_type, c, dp.c, backend="host"),
               PRESETS["chain"].schedule)  # the pipeline's chains on the backend
    assert np.array_equal(host, chain)


def test_named_vectors():
    """Hand-made words (no engine involved): bf16 on the H100 wgmma profile
    (F=25, L=16, RZ into f32, floor -133)."""
    mdl = model_of("H100", "sm_90", "wgmma", "bf16", "f32")
    one, m_one, two_m30 = 0x3F80, 0xBF80, 0x3080  # 1, -1, 2**-30
    a = np.zeros((4, 16), np.uint32)
    b = np.zeros((16, 4), np.uint32)
    c = np.zeros((4, 4), np.uint32)
    a[0, :3] = (one, m_one, two_m30)  # 1 - 1 + 2**-30 in one block: 2**-30 is cut (F=25)
    b[:3, 0] = one
    a[1, 0] = 0x7F80  # +Inf * 0: NaN
    a[2, 0] = 0x7F80  # +Inf * 1 with C = -Inf: NaN
    b[0, 2] = one
    c[2, 2] = 0xFF800000
    a[3, 0] = 0x3F80  # 1 * 1 + C = 2**-30: C is cut below the anchor
    b[0, 3] = one
    c[3, 3] = 0x30800000
    d = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 1)
    assert d[0, 0] == 0x00000000  # +0, not 2**-30
    assert d[1, 1] == 0x7FFFFFFF  # the canonical NaN (row 1 is Inf, column 1 of B is 0)
    assert d[2, 2] == 0x7FFFFFFF
    assert d[3, 3] == 0x3F800000
    assert d[2, 0] == 0x7F800000  # +Inf * 0 ... only column 0's first B word is 1: +Inf


# ---------------------------------------------------------------------------
# Parameters beyond the profiles: every value the backend accepts


def _random_params(rng, mdl):
    dp = mdl.datapath
    d_fmt = get_format(dp.d_type)
    blocks = [x for x in range(1, dp.k + 1) if dp.k % x == 0]
    inter = rng.choice(["", "f32", "f16", "bf16"])
    i_fmt = get_format(inter) if inter else d_fmt
    window = int(rng.integers(0, cuda_params.MAX_WINDOW + 1))
    carry = None if rng.random() < 0.5 else int(rng.integers(0, min(12, 61 - window) + 1))
    return mdl.params.replace(
        window_bits=window,
        block_size=int(rng.choice(blocks)),
        zero_floor=None if rng.random() < 0.2 else int(rng.integers(-150, 20)),
        input_conversion=str(rng.choice(["truncate", "rne", "rna"])),
        output_rounding=str(rng.choice(["rz", "rne", "rna"])),
        output_frac_bits=None if rng.random() < 0.5 else int(rng.integers(0, d_fmt.frac_bits + 1)),
        nan=None if rng.random() < 0.7 else int(rng.integers(1, 1 << d_fmt.width)),
        overflow=str(rng.choice(["ieee", "inf", "saturate"])),
        carry_bits=carry, carry_top=str(rng.choice(["wrap", "saturate", "normalize"])),
        inter_type=inter or None,
        inter_rounding=None if rng.random() < 0.5 else str(rng.choice(["rz", "rne", "rna"])),
        inter_frac_bits=None if rng.random() < 0.5 else int(rng.integers(0, i_fmt.frac_bits + 1)),
    )


@pytest.mark.fast_first(4)
@pytest.mark.parametrize("seed", range(12))
def test_random_parameters_equal_plain_engine(seed):
    rng = np.random.default_rng(1000 + seed)
    row = COVERED[int(rng.integers(len(COVERED)))]
    base = model_of(*row)
    mdl = type(base)(base.name, base.datapath, base.evidence, _random_params(rng, base))
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    dp = mdl.datapath
    for kind in ("special", "spread", "cancel"):
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 6, 3 * dp.k, 7)
        want = engine_chain(mdl, a, b, c, 0, 3)
        got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3)
        assert np.array_equal(got, want), (kind, mdl.params)


# ---------------------------------------------------------------------------
# Refusals: never a different answer


def _with(row, **changes):
    base = model_of(*row)
    return type(base)(base.name, base.datapath, base.evidence, base.params.replace(**changes))


BF16 = ("H100", "sm_90", "wgmma", "bf16", "f32")


@pytest.mark.parametrize("changes, named", [
    ({"k_order": tuple(range(15))}, "k_order"),
    ({"c_convert": "e2m1"}, "c_convert"),
    ({"window_bits": 49}, "window_bits"),
    ({"carry_bits": 40}, "carry_bits"),
    ({"output_frac_bits": 24}, "output_frac_bits"),
    ({"inter_type": "e4m3"}, "inter_type"),
    ({"block_size": 3}, "block_size"),
])
def test_refuses_parameters(changes, named):
    mdl = _with(BF16, **changes)
    ok, why = cuda_gemm.supports(mdl)
    assert not ok and named in why
    a = np.zeros((1, 16), np.uint32)
    with pytest.raises(cuda_gemm.Unsupported, match=named):
        cuda_gemm.gemm_words_cuda(mdl, a, a.T.copy(), np.zeros((1, 1), np.uint32), 0, 1)


@pytest.mark.parametrize("dp_id, gpu, named", [
    ("tcgen05.mxf8f6f4.e4m3.f32.k64.ue8m0x1.sparse", "B200", "sparse"),
    ("tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse", "B200", "sparse"),
    ("mma.f64.f64.k4", "H100", "F64Model: f64 DMMA"),
    ("mfma.f64.f64.k4", "MI300X", "f64 MFMA"),
    ("mfma.f64.f64.k4", "MI250X", "64-bit"),
])
def test_refuses_datapaths(dp_id, gpu, named):
    from tcprobe.models import registry
    from tcprobe.models.datapath import Datapath

    mdl = registry.auto(Datapath.parse(dp_id), gpu)
    ok, why = cuda_gemm.supports(mdl)
    assert not ok and named in why, why


def test_refuses_integer_datapaths_by_type():
    """Integer kinds into another D than s32 (none the profiles give, so the
    model is built by hand) are refused by name."""
    from tcprobe.models.datapath import Datapath
    from tcprobe.models.model import IntegerModel

    base = integer_model("A100", "mma.s8.s32.k32")
    for dp_id, named in (("mma.s8.f32tos32.k32", "c_type"), ("mma.s8.f32.k32", "d_type")):
        mdl = IntegerModel(base.name, Datapath.parse(dp_id), base.evidence)
        ok, why = cuda_gemm.supports(mdl)
        assert not ok and named in why and "s32" in why, why


def test_shapes_checked():
    mdl = model_of(*BF16)
    a = np.zeros((2, 32), np.uint32)
    with pytest.raises(ValueError, match="do not fit"):
        cuda_gemm.gemm_words_cuda(mdl, a, np.zeros((32, 3), np.uint32),
                                  np.zeros((2, 3), np.uint32), 0, 3)
    with pytest.raises(ValueError, match="do not chain"):
        cuda_gemm.gemm_words_cuda(mdl, a, np.zeros((32, 3), np.uint32),
                                  np.zeros((3, 3), np.uint32), 0, 2)


@pytest.mark.parametrize("row", [BF16, ("B200", "sm_100a", "tcgen05", "tf32", "f32"),
                                 ("H100", "sm_90", "wgmma", "e5m2", "f16")], ids=_ids)
def test_both_cut_paths_equal_plain_engine(row):
    """Windows on each side of the kernel's 32-bit cut (window - fraction bits
    of the product >= 0 and window <= 28) and of the 64-bit one."""
    dp = model_of(*row).datapath
    fab = get_format(dp.a_type).frac_bits + get_format(dp.b_type).frac_bits
    rng = np.random.default_rng(11)
    for window in (fab - 1, fab, 28, 29, 40):
        mdl = _with(row, window_bits=window)
        for kind in ("special", "spread", "cancel"):
            a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 5, 2 * dp.k, 6)
            assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2),
                                  engine_chain(mdl, a, b, c, 0, 2)), (window, kind)


@pytest.mark.parametrize("conversion", ["truncate", "rne", "rna"])
def test_tf32_input_conversions(conversion):
    """f32 container words with bits below tf32: ties, carries into the
    exponent, past the largest finite, NaNs whose payload is only in the
    dropped bits."""
    mdl = _with(("B200", "sm_100a", "tcgen05", "tf32", "f32"), input_conversion=conversion)
    words = np.array([0x3F800FFF, 0x3F801000, 0x3F803000, 0x3F802FFF, 0x3FFFF000, 0x7F7FFFFF,
                      0xFF7FF000, 0x7F800001, 0xFF801000, 0x00001FFF, 0x80000FFF, 0x3F800000,
                      0x40400000, 0xC0A01000, 0x00800000, 0x33FFFFFF], np.uint32)
    rng = np.random.default_rng(8)
    a = rng.choice(words, (32, 8))
    a[:16] = 0
    a[np.arange(16), np.arange(16) % 8] = words  # rows 0-15: one word each
    b = rng.choice(words, (8, 16))
    b[:, :8] = 0x3F800000  # one: A's converted words pass through unscaled
    c = np.zeros((32, 16), np.uint32)
    want = engine_chain(mdl, a, b, c, 0, 1)
    assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 1), want)
    # the conversions differ on these words (the test would see one computed as another)
    other = {"truncate": "rne", "rne": "rna", "rna": "truncate"}[conversion]
    assert not np.array_equal(want, engine_chain(_with(("B200", "sm_100a", "tcgen05", "tf32",
                                                        "f32"), input_conversion=other),
                                                 a, b, c, 0, 1))


def test_unknown_parameter_refused(monkeypatch):
    """A parameter the backend does not handle, set away from its default, is
    refused by name (an engine parameter added later waits for the backend)."""
    monkeypatch.setattr(cuda_params, "HANDLED", cuda_params.HANDLED - {"carry_bits"})
    assert cuda_gemm.supports(_with(BF16))[0]
    ok, why = cuda_gemm.supports(_with(BF16, carry_bits=3))
    assert not ok and "carry_bits" in why


def test_gpu_check_covers_the_tested_rows():
    """The prepared GPU check (scripts/gpu_cuda_backend.py) runs every row tested here."""
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "scripts" / "gpu_cuda_backend.py"
    names = runpy.run_path(str(script))
    assert names["ROWS"] == COVERED  # restated in the script: held equal here
    # the other lists are the support module's own; the AMD rows cover every design
    from tcprobe.models import amd, amd_profiles
    from tcprobe.models.datapath import Datapath

    assert sorted(amd_profiles.model_for(Datapath.parse(d), g).params.design
                  for g, d in names["AMD_ROWS"]) == sorted(amd.DESIGNS)


# ---------------------------------------------------------------------------
# Block-scaled kind::mxf8f6f4


@pytest.mark.fast_first(3)
@pytest.mark.parametrize("row", SCALED, ids=_int_ids)
def test_scaled_words_equal_model(row):
    """The host build's words equal the BlockScaledModel's own (models.gemm has
    no block-scaled chain), three instructions chained, on element words of
    every kind and scales near one, raw (NaN, 2**-127, 2**127) and special."""
    from tcprobe.models.datapath import Datapath

    mdl = registry_auto(row)
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    dp = mdl.datapath
    assert Datapath.parse(row[1]) == dp
    rng = np.random.default_rng(zlib.crc32(_int_ids(row).encode()))
    for kind in KINDS:
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 19, 3 * dp.k, 21)
        for skind in ("near", "raw", "special"):
            sa, sb = scales(rng, skind, 19, 21, 3 * dp.n_scales, dp.scale_type)
            want = model_chain(mdl, a, b, c, 0, 3, sa=sa, sb=sb)
            got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3, sa=sa, sb=sb)
            assert_same_words(got, want, f"{kind}/{skind}")
            if kind == "finite" and skind == "near":  # the scales count: all-one scales differ
                one = (np.full_like(sa, cuda_params.scale_one(mdl)),
                       np.full_like(sb, cuda_params.scale_one(mdl)))
                assert not np.array_equal(model_chain(mdl, a, b, c, 0, 3, None, *one), want)
                assert ((want & 0x7FFFFFFF) != 0).mean() > 0.9


RULES = {"c_dominant": False, "per_group_c_merge": False, "group_floor": None}


@pytest.mark.parametrize("profile", ["b200-tcgen05", "mmasim-tcgen05"])
@pytest.mark.parametrize("dp_id", [r[1] for r in SCALED if r[1].startswith("tcgen05.mxf4")])
def test_fp4_rules_words_equal_model(dp_id, profile):
    """The fp4 kinds (tc_groups_step) on operands that reach the C-dominant
    merge, the C-relative group cut and the subnormal group floor: the host
    build's words equal the model's; each rule the profile has is reached
    (the model with it turned off gives other words on these operands)."""
    from tcprobe.models import tcgen05
    from tcprobe.models.datapath import Datapath
    from tcprobe.models.tcgen05_scaled import BlockScaledModel

    mdl = tcgen05.model_for(Datapath.parse(dp_id), profile)
    assert cuda_gemm.supports(mdl)[0] and not cuda_params.scaled_by_chain(mdl)
    dp, p = mdl.datapath, mdl.params
    rng = np.random.default_rng(zlib.crc32((dp_id + profile).encode()))
    reached = dict.fromkeys(k for k, off in RULES.items() if getattr(p, k) != off)
    for kind, tiles in (("cancel", 1), ("floor", 2)):
        a, b, c, sa, sb = fp4_operands(rng, kind, dp, 24, 20, tiles)
        want = model_chain(mdl, a, b, c, 0, tiles, sa=sa, sb=sb)
        got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, tiles, sa=sa, sb=sb)
        assert np.array_equal(got, want), (kind, int((got != want).sum()))
        for rule in reached:
            off = BlockScaledModel(mdl.name, dp, mdl.evidence, p.replace(**{rule: RULES[rule]}))
            if not np.array_equal(model_chain(off, a, b, c, 0, tiles, sa=sa, sb=sb), want):
                reached[rule] = kind
    assert all(reached.values()), reached


@pytest.mark.fast_first(3)
@pytest.mark.parametrize("row", SPARSE, ids=_int_ids)
def test_sparse_words_equal_engine(row):
    """Sparse A: the positions its metadata leaves out are zeros in A (as the
    matrix pipeline makes them) that no B word there may turn into NaN: the
    host build with ``active`` equals models.gemm with the masked decoders and
    the plain model on masked cases; without the mask the engine's words
    differ on these operands (B's NaN and Inf at left-out positions)."""
    from tcprobe.models.datapath import Datapath

    mdl = registry_auto(row)
    assert cuda_gemm.supports(mdl)[0]
    dp = mdl.datapath
    assert Datapath.parse(row[1]) == dp
    rng = np.random.default_rng(zlib.crc32(_int_ids(row).encode()))
    kinds = ("raw", "extreme") if dp.is_integer else ("special", "raw", "spread")
    for kind in kinds:
        if dp.is_integer:
            a, b, c = integer_operands(rng, kind, dp.a_type, dp.b_type, 19, 3 * dp.k, 21)
        else:
            a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 19, 3 * dp.k, 21)
        active = sparse_active(rng, dp, 19, 3 * dp.k)
        a = np.where(active, a, np.uint32(0)).astype(np.uint32)
        want = model_chain(mdl, a, b, c, 0, 3, active)
        decoded = None if dp.is_integer else gemm.decoders(mdl, a, b, active)
        assert np.array_equal(gemm.gemm_words(mdl, a, b, c, (0, 3), decoded), want), kind
        got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3, active=active)
        assert np.array_equal(got, want), (kind, int((got != want).sum()))
        if kind == "special":  # the mask counts: left-out positions hold B's specials
            every = np.ones_like(active)
            assert not np.array_equal(model_chain(mdl, a, b, c, 0, 3, every), want)
    with pytest.raises(ValueError, match="takes active"):
        cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3)


def test_sparse_through_matmul_host():
    """The pipeline's sparse chains on the host build: A zero where its
    metadata leaves a position out, B NaN there."""
    from tcprobe.matrix import Problem, run
    from tcprobe.matrix.schedule import PRESETS

    mdl = registry_auto(("H100", "wgmma.bf16.f32.k32.sparse"))
    dp = mdl.datapath
    rng = np.random.default_rng(9)
    a, b, c = operands(rng, "finite", dp.a_type, dp.b_type, dp.d_type, 9, 70, 18)
    active = sparse_active(rng, dp, 9, 72)[:, :70]
    a = np.where(active, a, np.uint32(0)).astype(np.uint32)
    b[~active[0]] = 0x7FC0  # row 0's left-out K positions: NaN in every column of B

    def problem(backend=None):
        return Problem(mdl, a, dp.a_type, b, dp.b_type, dp.d_type, c, dp.c, backend=backend)

    chain = run(problem(), PRESETS["chain"].schedule)
    assert np.array_equal(run(problem("host"), PRESETS["chain"].schedule), chain)
    assert not ((chain[0] & 0x7FFFFFFF) > 0x7F800000).any()  # row 0 reads none of the NaNs


@pytest.mark.parametrize("dp_id", ["tcgen05.mxf4.e2m1.f32.k64.ue8m0x2",
                                   "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1"])
def test_scaled_zero_c_keep(dp_id):
    """zero_c='keep' (C's word, -0 included, when every product is zero;
    tc_groups_step): the model's words on operands with zero rows and C = -0,
    which 'positive' gives as +0."""
    from tcprobe.models.tcgen05_scaled import BlockScaledModel

    mdl = registry_auto(("B200", dp_id))
    keep = BlockScaledModel(mdl.name, mdl.datapath, mdl.evidence,
                            mdl.params.replace(zero_c="keep"))
    assert cuda_gemm.supports(keep)[0] and not cuda_params.scaled_by_chain(keep)
    dp = keep.datapath
    rng = np.random.default_rng(14)
    a, b, c = operands(rng, "finite", dp.a_type, dp.b_type, dp.d_type, 12, 2 * dp.k, 10)
    sa, sb = scales(rng, "near", 12, 10, 2 * dp.n_scales)
    a[:4] = 0  # rows of zero products (B finite: no Inf that makes a NaN)
    c[:4] = 0x80000000
    want = model_chain(keep, a, b, c, 0, 2, sa=sa, sb=sb)
    assert np.array_equal(cuda_gemm.gemm_words_cuda(keep, a, b, c, 0, 2, sa=sa, sb=sb), want)
    assert (want[:4] == 0x80000000).all()
    assert not np.array_equal(model_chain(mdl, a, b, c, 0, 2, sa=sa, sb=sb), want)


def registry_auto(row):
    from tcprobe.models import registry
    from tcprobe.models.datapath import Datapath

    return registry.auto(Datapath.parse(row[1]), row[0])


def test_scaled_named_vectors():
    """Hand-made mxf8f6f4 words (no engine involved): e2m1 elements, ue8m0
    scales 2**(code - 127): 6 * 2**3 * 6 * 2**-1 = 144; a NaN scale (0xff)
    makes its row's products NaN; 2**127 * 2**127 * 36 * 32 products is past
    f32: +Inf (the B200 profile's overflow)."""
    mdl = registry_auto(("B200", "tcgen05.mxf8f6f4.e2m1.f32.k32.ue8m0x1"))
    a = np.zeros((4, 32), np.uint32)
    b = np.zeros((32, 3), np.uint32)
    a[0, 0], b[0, 0] = 0x7, 0x7
    a[1, 0], b[0, 1] = 0x7, 0x7
    a[2, :], b[:, 2] = 0x7, 0x7
    sa = np.array([[130], [0xFF], [0xFE], [0xFF]], np.uint32)  # row 3: zeros, a NaN scale
    sb = np.array([[126], [127], [0xFE]], np.uint32)
    d = cuda_gemm.gemm_words_cuda(mdl, a, b, np.zeros((4, 3), np.uint32), 0, 1, sa=sa, sb=sb)
    assert d[0, 0] == 0x43100000  # 144
    assert d[1, 1] == 0x7FFFFFFF  # the canonical NaN
    assert d[3, 0] == 0x7FFFFFFF  # a NaN scale times zero elements is NaN too
    assert d[2, 2] == 0x7F800000


def test_scaled_through_matmul_host():
    """The matrix pipeline's chains on the host build, block-scaled, K not a
    multiple of 32 (padded with zero elements and scales of one)."""
    from tcprobe.matrix import Problem, run
    from tcprobe.matrix.schedule import PRESETS

    mdl = registry_auto(("B200", "tcgen05.mxf8f6f4.e4m3xe2m1.f32.k32.ue8m0x1"))
    dp = mdl.datapath
    rng = np.random.default_rng(6)
    a, b, c = operands(rng, "special", dp.a_type, dp.b_type, dp.d_type, 9, 80, 18)
    sa, sb = scales(rng, "special", 9, 18, 3)

    def problem(backend=None):
        return Problem(mdl, a, dp.a_type, b, dp.b_type, dp.d_type, c, dp.c, sa=sa, sb=sb,
                       backend=backend)

    chain = run(problem(), PRESETS["chain"].schedule)
    assert np.array_equal(run(problem("host"), PRESETS["chain"].schedule), chain)
    assert np.array_equal(cuda_gemm.product_words_cuda(mdl, a, b, c, sa=sa, sb=sb), chain)


def test_scales_checked():
    mdl = registry_auto(("B200", "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1"))
    a, b, c = np.zeros((2, 64), np.uint32), np.zeros((64, 3), np.uint32), np.zeros((2, 3),
                                                                                   np.uint32)
    with pytest.raises(ValueError, match="SA must be"):
        cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2)
    with pytest.raises(ValueError, match="SB must be"):
        cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2, sa=np.zeros((2, 2), np.uint32),
                                  sb=np.zeros((3, 1), np.uint32))
    with pytest.raises(ValueError, match="takes no block scales"):
        cuda_gemm.gemm_words_cuda(model_of(*BF16), a, b, c, 0, 4, sa=a)


# ---------------------------------------------------------------------------
# fp6 / fp4 inputs: hand-made words (no engine involved)


def test_fp4_fp6_named_vectors():
    """tcgen05 kind::f8f6f4 on B200 (F=25, L=32, RZ into f32): e2m1 words
    0x7 = 6, 0xF = -6, 0x1 = 0.5 (its subnormal), 0x2 = 1; e2m3 0x1F = 7.5,
    e3m2 0x1F = 28 and 0x01 = 2**-4 (subnormals); every code a number (no
    NaN or Inf: 0x7 and 0x1F are the largest finite values)."""
    mdl = model_of("B200", "sm_100a", "tcgen05", "e2m1", "f32")
    a = np.zeros((4, 32), np.uint32)
    b = np.zeros((32, 4), np.uint32)
    c = np.zeros((4, 4), np.uint32)
    a[0] = 0x7
    b[:, 0] = 0x7  # 32 * 36 = 1152
    a[1, :2] = (0x1, 0x9)  # 0.5 * 1 + (-0.5) * 1 = +0 (an exact zero is +0)
    b[:2, 1] = 0x2
    a[2, 0] = 0xF  # -6 * 0.5 + C = 3: 0
    b[0, 2] = 0x1
    c[2, 2] = 0x40400000
    a[3, 0] = 0x1  # 0.5 * 0.5 = 0.25 (the model reads a word's low 4 bits: 0xF1 is 0x1)
    b[0, 3] = 0xF1
    d = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 1)
    assert d[0, 0] == 0x44900000
    assert d[1, 1] == 0x00000000
    assert d[2, 2] == 0x00000000
    assert d[3, 3] == 0x3E800000
    mixed = model_of("B200", "sm_100a", "tcgen05", "e2m3xe3m2", "f32")
    a = np.zeros((1, 32), np.uint32)
    b = np.zeros((32, 2), np.uint32)
    a[0, :2] = (0x1F, 0x1F)  # 7.5, 7.5
    b[:2, 0] = (0x1F, 0x01)  # 28, 2**-4: 210 + 0.46875
    b[0, 1] = 0x3F  # -28
    d = cuda_gemm.gemm_words_cuda(mixed, a, b, np.zeros((1, 2), np.uint32), 0, 1)
    assert d[0, 0] == 0x43527800  # 210.46875
    assert d[0, 1] == 0xC3520000  # -210


# ---------------------------------------------------------------------------
# The integer kinds


@pytest.mark.fast_first(3)
@pytest.mark.parametrize("row", INTEGER, ids=_int_ids)
def test_integer_words_equal_engine(row):
    """The host build's words equal models.gemm's and the plain IntegerModel's,
    on raw words and on extremes whose sums wrap (or saturate with .sat)."""
    mdl = integer_model(*row)
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    dp = mdl.datapath
    rng = np.random.default_rng(zlib.crc32(_int_ids(row).encode()))
    for kind in ("raw", "extreme"):
        a, b, c = integer_operands(rng, kind, dp.a_type, dp.b_type, 19, 3 * dp.k, 21)
        want = model_chain(mdl, a, b, c, 0, 3)
        assert np.array_equal(gemm.gemm_words(mdl, a, b, c, (0, 3)), want)
        got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3)
        assert got.dtype == np.uint32
        assert_same_words(got, want, kind)
        if kind == "extreme":  # the rule is exercised: wrapping and saturating differ here
            other = type(mdl)(mdl.name, dp, mdl.evidence, saturate=not mdl.saturate)
            assert not np.array_equal(model_chain(other, a, b, c, 0, 3), want)


def test_integer_named_vectors():
    """Hand-made s8 and b1 words (no engine involved)."""
    from tcprobe.models.model import IntegerModel

    wrap = integer_model("A100", "mma.s8.s32.k32")
    sat = IntegerModel(wrap.name, wrap.datapath, wrap.evidence, saturate=True)
    a = np.full((2, 64), 0x80, np.uint32)  # -128
    b = np.full((64, 2), 0x80, np.uint32)  # -128: 32 * 16384 = 0x80000 an instruction
    c = np.array([[0x7FFFFFFF, 0], [0x7FFF0000, 0xFFFFFFFF]], np.uint32)
    d = cuda_gemm.gemm_words_cuda(wrap, a, b, c, 0, 1)
    assert d.tolist() == [[0x8007FFFF, 0x80000], [0x80070000, 0x7FFFF]]
    d = cuda_gemm.gemm_words_cuda(sat, a, b, c, 0, 2)  # saturated once per instruction
    assert d.tolist() == [[0x7FFFFFFF, 0x100000], [0x7FFFFFFF, 0xFFFFF]]
    a[0, 32:] = 0x7F  # the second instruction adds 127 * -128 * 32 = -0x7F000 to row 0:
    d = cuda_gemm.gemm_words_cuda(sat, a, b, c, 0, 2)  # to the saturated first, not the exact
    assert d[0].tolist() == [0x7FF80FFF, 0x1000]
    for op, want in (("and", 0), ("xor", 256)):
        mdl = integer_model("A100", f"mma.b1.s32.k256.{op}")
        a1 = np.ones((1, 256), np.uint32)
        d = cuda_gemm.gemm_words_cuda(mdl, a1, np.zeros((256, 1), np.uint32),
                                      np.full((1, 1), 5, np.uint32), 0, 1)
        assert d[0, 0] == 5 + want, op


def test_integer_through_matmul_host():
    """tcprobe.matmul's pipeline on the host build: an integer product, K not
    a multiple of the instruction (padded with zeros)."""
    from tcprobe.matrix import Problem, run
    from tcprobe.matrix.schedule import PRESETS

    mdl = integer_model("B200", "tcgen05.i8.s8xu8.s32.k32.sat")
    dp = mdl.datapath
    rng = np.random.default_rng(5)
    a, b, c = integer_operands(rng, "extreme", dp.a_type, dp.b_type, 9, 45, 18)
    def problem(backend=None):  # integer alpha = beta = 1
        return Problem(mdl, a, dp.a_type, b, dp.b_type, dp.d_type, c, dp.c, alpha=1, beta=1,
                       backend=backend)

    chain = run(problem(), PRESETS["chain"].schedule)
    assert np.array_equal(run(problem("host"), PRESETS["chain"].schedule), chain)
    assert np.array_equal(cuda_gemm.product_words_cuda(mdl, a, b, c), chain)
    assert np.array_equal(chain, model_chain(mdl, np.pad(a, ((0, 0), (0, 19))),
                                             np.pad(b, ((0, 19), (0, 0))), c, 0, 2))
