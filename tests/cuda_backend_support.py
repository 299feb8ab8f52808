"""Shared by the CUDA backend tests: the GPU profiles the backend covers, word
generators (finite, special-heavy, cancelling, wide exponent spread), and the
plain engine's chain (fused_dot on the plain kernel, instruction by
instruction) that the backend's words are compared with."""

from __future__ import annotations

import numpy as np

from tcprobe.models import registry
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, datapath_for
from tcprobe.models.engine import fused_dot
from tcprobe.models.formats import decode, get_format

# (GPU, arch, family, input format, D format): every float datapath the
# default profiles give A100 (mma.sync), H100 (mma.sync, wgmma) and B200
# (legacy mma.sync, tcgen05 dense kind::f16 / tf32 / f8f6f4) for bf16, f16,
# tf32, e4m3 and e5m2 that the backend computes; then the fp6/fp4 inputs of
# kind::f8f6f4 (tcgen05 on B200, mma.sync on sm_120a's RTX 5090).
COVERED = [
    *[("A100", "sm_80", "mma", f, d) for f in ("bf16", "f16", "tf32") for d in ("f32", "f16")],
    *[("H100", "sm_90", "mma", f, d) for f in ("bf16", "f16", "tf32") for d in ("f32", "f16")],
    *[("H100", "sm_90", "wgmma", f, d) for f in ("bf16", "f16", "tf32", "e4m3", "e5m2")
      for d in ("f32", "f16")],
    *[("B200", "sm_100a", "mma", f, d) for f in ("bf16", "f16", "tf32") for d in ("f32", "f16")],
    ("B200", "sm_100a", "tcgen05", "bf16", "f32"),
    ("B200", "sm_100a", "tcgen05", "f16", "f32"),
    ("B200", "sm_100a", "tcgen05", "f16", "f16"),
    ("B200", "sm_100a", "tcgen05", "tf32", "f32"),
    *[("B200", "sm_100a", "tcgen05", f, d) for f in ("e4m3", "e5m2") for d in ("f32", "f16")],
    # mixed fp8 pairs (A e4m3, B e5m2)
    ("H100", "sm_90", "wgmma", "e4m3xe5m2", "f32"), ("B200", "sm_100a", "tcgen05", "e4m3xe5m2", "f16"),
    # fp6 / fp4 (each in an 8-bit container, the word its low 6 or 4 bits)
    *[("B200", "sm_100a", "tcgen05", f, d) for f in ("e2m3", "e3m2", "e2m1") for d in ("f32", "f16")],
    *[("B200", "sm_100a", "tcgen05", f, d) for f, d in (
        ("e4m3xe2m1", "f32"), ("e2m1xe5m2", "f16"), ("e2m3xe3m2", "f32"), ("e3m2xe2m1", "f16"),
        ("e2m1xe2m3", "f32"))],
    ("RTX5090", "sm_120a", "mma", "e2m1", "f32"), ("RTX5090", "sm_120a", "mma", "e2m3xe4m3", "f16"),
]

# (GPU, datapath id): the integer kinds the backend computes (s32 D, wrapped,
# or saturated with .sat), every input type and instruction K the profiles
# give: mma.sync s8/u8 (K 16 and 32), s4/u4 (K 64), b1 .and / .xor (K 256),
# wgmma s8/u8, tcgen05 kind::i8, signed x unsigned pairs.
INTEGER = [
    ("A100", "mma.s8.s32.k32"), ("H100", "mma.b1.s32.k256.xor"),
    ("B200", "tcgen05.i8.s8xu8.s32.k32.sat"), ("A100", "mma.u8.s32.k32.sat"),
    ("H100", "mma.s8.s32.k16"), ("A100", "mma.s8.s8xu8.s32.k32.sat"), ("A100", "mma.s4.s32.k64"),
    ("A100", "mma.u4.s32.k64.sat"), ("H100", "mma.u4.u4xs4.s32.k64"),
    ("A100", "mma.b1.s32.k256.and"), ("H100", "wgmma.s8.s32.k32"),
    ("H100", "wgmma.u8.u8xs8.s32.k32.sat"), ("B200", "tcgen05.i8.s8.s32.k32"),
    ("B200", "tcgen05.i8.u8.s32.k32"),
]


def model_of(gpu, arch, family, fmt, d):
    """The default model of that GPU for A and B of ``fmt`` ('e4m3xe5m2': A e4m3, B e5m2)."""
    a, _, b = fmt.partition("x")
    return registry.auto(datapath_for(arch, family, a, b or a, d), gpu)


# (GPU, datapath id): the block-scaled kinds the backend computes: B200
# tcgen05 kind::mxf8f6f4 (ue8m0 scales, one a 32-wide K block), every element
# class: fp8, fp6, fp4 and mixed pairs.
SCALED = [
    ("B200", "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1"),
    ("B200", "tcgen05.mxf8f6f4.e5m2.f32.k32.ue8m0x1"),
    ("B200", "tcgen05.mxf8f6f4.e2m3.f32.k32.ue8m0x1"),
    ("B200", "tcgen05.mxf8f6f4.e3m2.f32.k32.ue8m0x1"),
    ("B200", "tcgen05.mxf8f6f4.e2m1.f32.k32.ue8m0x1"),
    ("B200", "tcgen05.mxf8f6f4.e4m3xe2m1.f32.k32.ue8m0x1"),
    ("B200", "tcgen05.mxf8f6f4.e2m1xe5m2.f32.k32.ue8m0x1"),
    ("B200", "tcgen05.mxf8f6f4.e3m2xe2m3.f32.k32.ue8m0x1"),
    # the fp4 kinds (K=64): scaled_case's groups, merges and floor (tc_groups_step)
    ("B200", "tcgen05.mxf4.e2m1.f32.k64.ue8m0x2"),
    ("B200", "tcgen05.mxf4nvf4.e2m1.f32.k64.ue8m0x2"),
    ("B200", "tcgen05.mxf4nvf4.e2m1.f32.k64.ue8m0x4"),
    ("B200", "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4"),
    ("RTX5090", "mma.mxf4nvf4.e2m1.f32.k64.ue4m3x4"),  # sm_120a mma.sync block-scaled
    ("RTX5090", "mma.mxf8f6f4.e4m3xe2m1.f32.k32.ue8m0x1"),
]


def scales(rng, kind, m, n, blocks, fmt="ue8m0"):
    """(SA (m, blocks), SB (n, blocks)) ue8m0 words: near one (2**-17 .. 2**12)
    for most kinds; raw: every word (NaN 0xff, 2**-127, 2**127 included);
    special: near one with NaN, the smallest and the largest scales mixed in.
    ue4m3 (``fmt``): every 7-bit word (raw: NaN 0x7f, zero, subnormals), near
    one 0x30 .. 0x47 (0.5 .. 1.875), special: near one with NaN, zero, the
    smallest subnormal and the largest finite mixed in."""
    if fmt == "ue4m3":
        if kind == "raw":
            return (rng.integers(0, 128, (m, blocks)).astype(np.uint32),
                    rng.integers(0, 128, (n, blocks)).astype(np.uint32))
        sa = rng.integers(0x30, 0x48, (m, blocks)).astype(np.uint32)
        sb = rng.integers(0x30, 0x48, (n, blocks)).astype(np.uint32)
        if kind == "special":
            for s in (sa, sb):
                hit = rng.random(s.shape) < 0.15
                s[hit] = rng.choice(np.array([0x7F, 0, 1, 0x7E], np.uint32), int(hit.sum()))
        return sa, sb
    if kind == "raw":
        return (rng.integers(0, 256, (m, blocks)).astype(np.uint32),
                rng.integers(0, 256, (n, blocks)).astype(np.uint32))
    sa = rng.integers(110, 140, (m, blocks)).astype(np.uint32)
    sb = rng.integers(110, 140, (n, blocks)).astype(np.uint32)
    if kind == "special":
        for s in (sa, sb):
            hit = rng.random(s.shape) < 0.15
            s[hit] = rng.choice(np.array([0xFF, 0, 1, 0xFE, 0xFD], np.uint32), int(hit.sum()))
    return sa, sb


def fp4_operands(rng, kind, dp, m, n, tiles):
    """e2m1 A and B, their scales and C that reach the fp4 kinds' rules.
    cancel (one instruction): each instruction's first product large (e2m1 2 ..
    6, alone in its scale block, scales near one, or 2**7 for ue4m3), the other
    blocks' scales 2**-10 .. 2**-20 (ue8m0) or subnormal (ue4m3) smaller, and C
    the exact negative of the first product: C outranks the products (the
    C-dominant merge, the C-relative group cut) and then cancels, leaving the
    small sums whose cut the rules decide; floor: scales near 2**-71 (ue8m0;
    products near 2**-140, sums subnormal in f32) or subnormal (ue4m3), the
    other blocks lower again, C = +0 (the subnormal group floor)."""
    k, blk = tiles * dp.k, dp.scale_block
    ns = k // blk
    a = rng.integers(0, 16, (m, k)).astype(np.uint32)
    b = rng.integers(0, 16, (k, n)).astype(np.uint32)
    first = (np.arange(ns) % (dp.k // blk)) == 0  # each instruction's first scale block
    if kind == "cancel":
        a[:, ::dp.k] = rng.integers(4, 8, (m, tiles)) | (rng.integers(0, 2, (m, tiles)) << 3)
        b[::dp.k, :] = rng.integers(4, 8, (tiles, n)) | (rng.integers(0, 2, (tiles, n)) << 3)
        for t in range(tiles):  # the first product alone in its scale block
            a[:, t * dp.k + 1:t * dp.k + blk] = 0
    if get_format(dp.scale_type).name == "ue4m3":
        top = 0x70 if kind == "cancel" else 0x08

        def sc(rows):
            return np.where(first[None, :], top + rng.integers(0, 7, (rows, ns)),
                            rng.integers(1, 8, (rows, ns))).astype(np.uint32)
    else:
        center, drop = (127, (10, 20)) if kind == "cancel" else (56, (10, 25))

        def sc(rows):
            near = center + rng.integers(-1, 2, (rows, ns))
            low = center - rng.integers(drop[0], drop[1] + 1, (rows, ns))
            return np.clip(np.where(first[None, :], near, low), 0, 254).astype(np.uint32)
    sa, sb = sc(m), sc(n)
    c = np.zeros((m, n), np.uint32)
    if kind == "cancel":  # C = -(A[i, 0] * B[0, j] * its scales), exact in f32
        def val(fmt, w):
            d = decode(fmt, w)
            return np.where(d.sign == 1, -1.0, 1.0) * d.sig * np.exp2(d.lsb.astype(float))
        p = (val(dp.a_type, a[:, :1]) * val(dp.b_type, b[:1, :]) * val(dp.scale_type, sa[:, :1])
             * val(dp.scale_type, sb[:, :1]).T)
        c = (-p).astype(np.float32).view(np.uint32)
    return a, b, c, sa, sb


# (GPU, datapath id): sparse datapaths (A's metadata keeps half of K; B's
# words at the left-out positions are never read)
SPARSE = [
    ("H100", "wgmma.e4m3.f32.k64.sparse"), ("H100", "wgmma.bf16.f32.k32.sparse"),
    ("A100", "mma.tf32.f32.k16.sparse"), ("B200", "tcgen05.f16.bf16.f32.k32.sparse"),
    ("B200", "tcgen05.f8f6f4.e2m1xe4m3.f16.k64.sparse"), ("A100", "mma.s8.s32.k64.sparse"),
    ("B200", "tcgen05.i8.s8.s32.k64.sparse.sat"),
]


def sparse_active(rng, dp, m, k):
    """A's kept positions: half of every group of 4 (1 of 2 for tf32), at random."""
    g = 2 if get_format(dp.a_type).name == "tf32" else 4
    keys = rng.random((m, k // g, g))
    keep = keys < np.sort(keys, axis=2)[:, :, g // 2 - 1:g // 2]
    keep |= keys == np.sort(keys, axis=2)[:, :, g // 2 - 1:g // 2]
    return keep.reshape(m, k)


def integer_model(gpu, dp_id):
    """The default (IntegerModel) model of that GPU for an integer datapath id."""
    return registry.auto(Datapath.parse(dp_id), gpu)


def integer_operands(rng, kind, a_fmt, b_fmt, m, k, n):
    """(A, B, C) words of an integer kind: raw (every word equally likely; C
    any s32), extreme (A and B at their most negative and largest values,
    C near -2**31 and 2**31 - 1, so that sums wrap or saturate)."""
    fa, fb = get_format(a_fmt), get_format(b_fmt)
    a = rng.integers(0, 1 << fa.width, (m, k)).astype(np.uint32)
    b = rng.integers(0, 1 << fb.width, (k, n)).astype(np.uint32)
    c = rng.integers(0, 1 << 32, (m, n), dtype=np.uint64).astype(np.uint32)
    if kind == "extreme":
        def ends(f):  # the words of the smallest and the largest value
            top = 1 << (f.width - 1)
            return (top, top - 1) if f.signed else (0, (1 << f.width) - 1)
        a = rng.choice(ends(fa), (m, k)).astype(np.uint32)
        b = rng.choice(ends(fb), (k, n)).astype(np.uint32)
        near = np.array([0x7FFFFFFF - 40, 0x7FFFFFFF, 0x80000000, 0x80000000 + 40, 0, 1],
                        np.uint32)
        c = rng.choice(near, (m, n))
    return a, b, c


def pack_word(fmt, sign, e, f):
    """The word of ``fmt`` with these sign, biased exponent and fraction fields."""
    spec = get_format(fmt).spec
    w = (np.asarray(sign, np.int64) << (spec.width - 1)) | (
        np.asarray(e, np.int64) << (spec.frac_bits + spec.drop)) | (
        np.asarray(f, np.int64) << spec.drop)
    return w.astype(np.uint32)


def extremes(fmt) -> np.ndarray:
    """Words that test the edges: +-0, +-Inf (or the largest finite where the
    format has no Inf), NaN, the smallest and largest subnormals, the smallest
    normal, the largest finite, one."""
    fm = get_format(fmt)
    emax, fmask = (1 << fm.exp_bits) - 1, (1 << fm.frac_bits) - 1
    fn = fm.specials == 1  # e4m3: no Inf, NaN is all ones
    top_e, top_f = (emax, fmask - 1) if fn else (emax - 1, fmask)
    words = []
    for s in (0, 1):
        words += [pack_word(fmt, s, 0, 0), pack_word(fmt, s, 0, 1), pack_word(fmt, s, 0, fmask),
                  pack_word(fmt, s, 1, 0), pack_word(fmt, s, top_e, top_f),
                  pack_word(fmt, s, fm.bias, 0), pack_word(fmt, s, emax, fmask)]
        if not fn:
            words += [pack_word(fmt, s, emax, 0), pack_word(fmt, s, emax, 1)]
    return np.array(words, np.uint32)


def finite(rng, fmt, shape, spread: int = 3) -> np.ndarray:
    """Finite words of exponents bias +- spread (0: a subnormal where it reaches)."""
    fm = get_format(fmt)
    e = np.clip(rng.integers(fm.bias - spread, fm.bias + spread + 1, shape), 0,
                (1 << fm.exp_bits) - 2)
    f = rng.integers(0, 1 << fm.frac_bits, shape)
    w = pack_word(fmt, rng.integers(0, 2, shape), e, f)
    if fm.drop_bits:  # tf32: stray low bits of the f32 container (input conversion)
        w |= rng.integers(0, 1 << fm.drop_bits, shape).astype(np.uint32)
    return w


def operands(rng, kind, a_fmt, b_fmt, d_fmt, m, k, n):
    """(A, B, C) words of one kind: raw (every word equally likely), finite,
    special (finite with a tenth of extreme words), spread (exponents over the
    whole range, no specials), cancel (products in pairs that cancel exactly,
    one small term left)."""
    if kind == "raw":
        def raw(fmt, shape):
            fm = get_format(fmt)
            return rng.integers(0, 1 << fm.width, shape, dtype=np.uint64).astype(np.uint32)
        return raw(a_fmt, (m, k)), raw(b_fmt, (k, n)), raw(d_fmt, (m, n))
    spread = {"finite": 3, "special": 6, "cancel": 2}.get(kind)
    if kind == "spread":
        spread = 1 << (get_format(a_fmt).exp_bits - 1)
    a, b = finite(rng, a_fmt, (m, k), spread), finite(rng, b_fmt, (k, n), spread)
    c = finite(rng, d_fmt, (m, n), min(spread, 8))
    if kind == "special":
        for x, fmt in ((a, a_fmt), (b, b_fmt), (c, d_fmt)):
            hit = rng.random(x.shape) < 0.1
            x[hit] = rng.choice(extremes(fmt), int(hit.sum()))
    if kind == "cancel":
        sign_a = np.uint32(1 << (get_format(a_fmt).width - 1))
        a[:, 1::2] = a[:, 0:k - k % 2:2] ^ sign_a  # a[t+1] = -a[t], b[t+1] = b[t]
        b[1::2, :] = b[0:k - k % 2:2, :]
        a[:, 0] = finite(rng, a_fmt, (m,), 1)  # one term that does not cancel
        c[rng.random(c.shape) < 0.5] = 0
    return a, b, c


def engine_chain(mdl, a, b, c, lo: int, hi: int) -> np.ndarray:
    """The plain engine (fused_dot, fast=False) tile by tile over tiles lo..hi:
    each instruction's D the next one's C."""
    dp = mdl.datapath
    m, n = c.shape
    acc = np.asarray(c, np.uint32).copy()
    b_t = np.ascontiguousarray(b.T)
    for t in range(lo, hi):
        ks = slice(t * dp.k, (t + 1) * dp.k)
        cases = Cases(np.repeat(a[:, ks], n, axis=0), np.tile(b_t[:, ks], (m, 1)), acc.ravel())
        acc = fused_dot(dp, cases, mdl.params, fast=False).reshape(m, n).astype(np.uint32)
    return acc


def model_chain(mdl, a, b, c, lo: int, hi: int, active=None, sa=None, sb=None) -> np.ndarray:
    """The plain model (its own ``evaluate``: IntegerModel's numpy sums, the
    engine's fused_dot, the block-scaled kinds' scaled_case) tile by tile over
    tiles lo..hi: each instruction's D the next one's C (``active``: a sparse
    A's kept positions; ``sa``, ``sb``: block scales (M, blocks), (N, blocks))."""
    dp = mdl.datapath
    m, n = c.shape
    ns = dp.n_scales if sa is not None else 0
    acc = np.asarray(c, np.uint32).copy()
    b_t = np.ascontiguousarray(b.T)
    for t in range(lo, hi):
        ks, ss = slice(t * dp.k, (t + 1) * dp.k), slice(t * ns, (t + 1) * ns)
        act = None if active is None else np.repeat(active[:, ks], n, axis=0)
        cases = Cases(np.repeat(a[:, ks], n, axis=0), np.tile(b_t[:, ks], (m, 1)), acc.ravel(),
                      None if sa is None else np.repeat(sa[:, ss], n, axis=0),
                      None if sb is None else np.tile(sb[:, ss], (m, 1)), active=act)
        acc = mdl.evaluate(cases).reshape(m, n).astype(np.uint32)
    return acc


# (GPU, datapath id): fp8 mma.sync of sm_90 / sm_100, which the compiler runs
# as F2FP unpacks to f16 and two f16 HMMAs, C added last (models/emulated.py's
# SplitModel profiles: hopper-fp8-emulated, b200-fp8-emulated)
SPLIT = [
    ("H100", "mma.e4m3.f32.k32"), ("H100", "mma.e5m2.f16.k32"), ("H100", "mma.e4m3xe5m2.f16.k32"),
    ("B200", "mma.e5m2.f32.k32"), ("B200", "mma.e4m3.f16.k32"), ("B200", "mma.e5m2xe4m3.f32.k32"),
]


# (GPU, datapath id): every AMD v_mfma datapath of MI100 / MI250X / MI300X
# (models/isa_amd.py through models/amd_profiles.py) but f64, first one of
# each design (fma, exact, ftz, truncated, grouped), then the rest.
def _amd_rows():
    from tcprobe.models import amd, amd_profiles, isa_amd

    rows = []
    for gpu, arch in isa_amd.GPU_ARCH.items():
        for ins in isa_amd.instructions(arch):
            row = (gpu, amd_profiles.datapath(ins).id)
            if ins.kind != "f64" and row not in rows:
                rows.append(row)
    # first, one row a design (the fast tier's and the GPU check's), in amd.DESIGNS' order
    design = {r: amd_profiles.model_for(Datapath.parse(r[1]), r[0]).params.design for r in rows}
    first = [next(r for r in rows if design[r] == d) for d in amd.DESIGNS]
    return first + [r for r in rows if r not in first]


AMD = _amd_rows()


def amd_operands(rng, kind, a_fmt, b_fmt, m, k, n):
    """(A, B, C) words for an AMD design, C f32: raw (every word equally
    likely), finite (exponents bias +- 3), special (finite with a fifth of
    models/amd_cases' boundary words: zeros, subnormals, the largest finite,
    Inf, NaN), spread (exponents over the whole range: products past 2**128
    and below f32's subnormals), cancel (products in pairs that cancel, one
    term left, C zero in half), tiny (exponents at the bottom of the range,
    subnormal inputs and C)."""
    from tcprobe.models.amd_cases import _specials

    def words(fmt, shape):
        f = get_format(fmt)
        if kind == "raw":
            return rng.integers(0, 1 << f.width, shape, dtype=np.uint64).astype(np.uint32)
        top = (1 << f.exp_bits) - 1 - (f.specials == 0)
        lo, hi = {"finite": (f.bias - 3, f.bias + 3), "special": (f.bias - 6, f.bias + 6),
                  "cancel": (f.bias - 2, f.bias + 2), "spread": (0, top),
                  "tiny": (0, 3)}[kind]
        e = rng.integers(lo, hi + 1, shape)
        w = pack_word(fmt, rng.integers(0, 2, shape), e, rng.integers(0, 1 << f.frac_bits, shape))
        if f.drop_bits:  # xf32: stray low bits of the f32 container, which it drops
            w |= rng.integers(0, 1 << f.drop_bits, shape).astype(np.uint32)
        if f.specials == 4:
            w[w == 0x80] = 0  # fnuz: 0x80 is the NaN, no -0
        if kind == "special":
            hit = rng.random(shape) < 0.2
            w[hit] = rng.choice(_specials(fmt), int(hit.sum())).astype(np.uint32)
        return w

    a, b, c = words(a_fmt, (m, k)), words(b_fmt, (k, n)), words("f32", (m, n))
    if kind == "cancel":
        sign_a = np.uint32(1 << (get_format(a_fmt).width - 1))
        a[:, 1::2] = a[:, 0:k - k % 2:2] ^ sign_a  # a[t+1] = -a[t], b[t+1] = b[t]
        b[1::2, :] = b[0:k - k % 2:2, :]
        a[:, 0] = words(a_fmt, (m,))
        c[rng.random(c.shape) < 0.5] = 0
    return a, b, c


def row_id(row) -> str:
    """A parametrized row's test id: its fields joined by '-'."""
    return "-".join(row)


def assert_same_words(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Every word of ``got`` equals ``want``'s; else one message with the count
    of words that differ and the first of them, both words in hex."""
    bad = np.argwhere(got != want)
    assert not len(bad), (f"{what}: {len(bad)} words differ, first at {tuple(bad[0])}: "
                          f"{got[tuple(bad[0])]:#x} != {want[tuple(bad[0])]:#x}")
