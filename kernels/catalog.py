"""The harness variants: which kernel runs which datapath on which architecture.

Each :class:`Variant` is one ``extern "C"`` kernel instantiated from a family
source (``mma_sync.cu``, ``wgmma.cu``, ``tcgen05.cu``) by one macro line. For
an architecture, :func:`translation_unit` joins the family sources that the
architecture runs and the instantiation lines of its variants into one
compilation unit: one cubin, one nvdisasm call per architecture.

This is the build manifest. The ISA facts it builds from (the families each
architecture runs, the architecture groups, the SASS opcode each instruction
compiles to) are the ISA table's (:mod:`tcprobe.models.isa`); each variant
carries the expected opcodes of its architectures (:class:`Expect`), which
``tcprobe sass-check`` compares with the disassembly. Where the compiler
emulates an instruction (e4m3/e5m2 ``mma.sync`` on sm_90 and sm_100a/sm_103a:
F2FP unpacks to f16, then HMMA), the expectation says so; the model profile
that describes the emulation is named by ``models/emulated.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from tcprobe.models import isa, isa_sass

from . import source

# Shared-memory packings (TcpPack in common.cuh; the values must agree).
PACK_B32, PACK_B16, PACK_B8, PACK_B6X16P32, PACK_B4X16P64, PACK_B4 = range(6)
PACK_NAMES = {PACK_B32: "b32", PACK_B16: "b16", PACK_B8: "b8", PACK_B6X16P32: "b6x16_p32",
              PACK_B4X16P64: "b4x16_p64", PACK_B4: "b4"}
SOURCES = {"mma": "mma_sync.cu", "wgmma": "wgmma.cu", "tcgen05": "tcgen05.cu"}
HEADER = "tcprobe_common.cuh"

ARCH_FAMILIES = isa.ARCH_FAMILIES  # the architectures a harness cubin is built for
arch_for_cc = isa.arch_for_cc


@dataclass(frozen=True)
class Expect:
    """The opcode a variant should compile to on some architectures."""

    archs: tuple[str, ...]
    opcode: str  # full SASS opcode expected, e.g. HMMA.16816.F32.BF16
    emulated: bool = False  # the PTX instruction is emulated on these archs
    note: str = ""

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]


@dataclass(frozen=True)
class Variant:
    family: str  # mma | wgmma | tcgen05
    key: str  # short name inside the family: bf16.f32, e4m3.f16, f16.sparse, mxf4nvf4.4x
    ptx: str  # the instruction the kernel issues (operands left out)
    formats: tuple[str, ...]  # input formats it runs
    d_types: tuple[str, ...]  # output types it runs
    archs: tuple[str, ...]  # architectures it is built for
    expects: tuple[Expect, ...]
    m: int
    n: int
    k: int  # logical K of one instruction
    threads: int
    acc_regs: int  # accumulator words a thread (mma, wgmma) or tensor-memory columns (tcgen05)
    scaled: bool = False
    sparse: bool = False
    a_bits: int = 0  # mma: bits of an element in the A registers (32, 16, 8, 4)
    b_bits: int = 0
    a_shift: int = 0  # mma: left shift of a code inside its field (e2m1 under kind::f8f6f4)
    b_shift: int = 0
    a_pack: int | None = None  # wgmma: shared-memory packing (tcgen05: from the datapath)
    b_pack: int | None = None
    tail: str = ""  # wgmma: the immediates after scale-d
    notes: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return f"{self.family}.{self.key}"

    @property
    def symbol(self) -> str:
        return "tcp_" + self.name.replace(".", "_")

    @property
    def a_regs(self) -> int:
        """mma: A fragment registers a lane loads (the kernel's AR; mma_sync.cu)."""
        return {(8, 16): 2, (4, 16): 2}.get((self.k, self.a_bits), 4)

    @property
    def b_regs(self) -> int:
        """mma: B fragment registers a lane loads (BR): m16n8k8 16-bit 1, m8n8k4 2,
        sparse 4 (B holds all K), else 2."""
        if self.sparse:
            return 4
        return {(8, 16): 1, (4, 16): 2}.get((self.k, self.a_bits), 2)

    def expect(self, arch: str) -> Expect | None:
        return next((e for e in self.expects if arch in e.archs), None)

    def macro(self) -> str:
        """The instantiation line of this variant."""
        if self.family == "mma":
            if self.a_bits == 64:  # f64: one operand list a shape (mma_sync.cu)
                return (f'TCP_MMA_F64({self.symbol}, "{self.ptx}", {self.m * self.k // 32}, '
                        f'{self.k * self.n // 32}, {self.acc_regs // 2}, '
                        f'TCP_F64_ASM_{self.m}{self.n}{self.k})')
            if self.sparse:
                return (f'TCP_MMA_SPARSE({self.symbol}, "{self.ptx}", {self.acc_regs}, '
                        f'{self.a_bits}, {self.b_bits})')
            if self.scaled:
                return (f'TCP_MMA_SCALED({self.symbol}, "{self.ptx}", {self.a_bits}, '
                        f'{self.a_shift}, {self.b_bits}, {self.b_shift})')
            plain = {(8, 16): "TCP_MMA_PLAIN_K8", (4, 16): "TCP_MMA_PLAIN_M884"}.get(
                (self.k, self.a_bits), "TCP_MMA_PLAIN")
            return (f'{plain}({self.symbol}, "{self.ptx}", {self.acc_regs}, {self.a_bits}, '
                    f'{self.a_shift}, {self.b_bits}, {self.b_shift})')
        if self.family == "wgmma":
            sp = "_SP" if self.sparse else ""
            return (f'TCP_WGMMA{sp}({self.symbol}, "{self.ptx}", {self.acc_regs}, {self.a_pack}, '
                    f'{self.b_pack}, "{self.tail}")')
        form = ("SCALED_" if self.scaled else "") + ("SPARSE" if self.sparse else "")
        return f'TCP_TC05({self.symbol}, "{self.ptx}", {form.rstrip("_") or "DENSE"})'


# ---------------------------------------------------------------------------
# mma.sync

MMA_ALL, FP8_NATIVE, FP8_EMULATED = isa.MMA_ARCHS, isa.FP8_NATIVE_ARCHS, isa.FP8_EMULATED_ARCHS
TURING = isa.TURING_ARCHS
SM120 = isa.SM120_ARCHS
_MMA = "mma.sync.aligned"
_F2FP_NOTE = ("F2FP.F16.{t}.UNPACK_B turns the fp8 operands into f16, two chained "
              "HMMA.16816.{acc} (the first with C = 0, split by k mod 4 in {{0,1}} then {{2,3}}) "
              "form the product sum, and a separate {add} adds C")


WIDTH_BITS = {"s8": 8, "u8": 8, "s4": 4, "u4": 4}
S4_NOTE = ("Hopper and later have no 4-bit IMMA: ptxas unpacks the nibbles with integer ALU "
           "code and issues 8-bit IMMA (no .SAT on it under .satfinite); an exact sum by "
           "construction, unmeasured (the ladder's carry step on an H100 would settle it)")


B1_IMMA_NOTE = ("sm_100a and later have no BMMA: ptxas spreads the bits into bytes and "
                "counts them with 8-bit IMMA (IMMA.16832.U8.U8) (unmeasured)")
B1_XOR_NOTE = ("on sm_90 ptxas has no BMMA.XOR: it issues BMMA.AND.POPC and forms the "
               "XOR count from it and the operands' own popcounts (unmeasured)")


def _mma(key, ptx, formats, d, k, acc_regs, bits, expects, **kw) -> Variant:
    return Variant("mma", key, ptx, formats, (d,), kw.pop("archs", MMA_ALL), expects, 16, 8, k, 32,
                   acc_regs, a_bits=bits, b_bits=bits, **kw)


_MMA_SP_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
                "s4": 4, "u4": 4}


def _mma_sp_variants() -> list[Variant]:
    """mma.sp at the largest K of each type (the ISA table's MMA_SP_K): every
    output type, .satfinite for the integers, and one ::ordered_metadata form."""
    out = []
    for t, ks in isa.MMA_SP_K.items():
        k, bits = max(ks), _MMA_SP_BITS[t]
        archs = isa.FP8_NATIVE_ARCHS if t in isa.FP8_TYPES else MMA_ALL
        # ptxas 13.5: "mma with F16 accumulator and F8 floating point type not
        # supported on .target sm_89" for mma.sp: fp8 sparse into f32 only
        outs = ("f32",) if t in isa.FP8_TYPES else isa.output_types("mma", t, t)
        for d in outs:
            regs = 2 if d == "f16" else 4
            sats = (False, True) if t in isa.SATFINITE_TYPES else (False,)
            for sat in sats:
                key = f"{t}.{d}.sparse" + (".sat" if sat else "")
                ptx = (f"mma.sp.sync.aligned.m16n8k{k}.row.col{'.satfinite' if sat else ''}"
                       f".{d}.{t}.{t}.{d}")
                out.append(_mma(key, ptx, (t,), d, k, regs, bits,
                                tuple(SP_EXPECTS(t, d, k, sat, archs)), archs=archs,
                                sparse=True))
    out.append(_mma("f16.f32.sparse.ordered",
                    "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",
                    ("f16",), "f32", 32, 4, 16, tuple(SP_EXPECTS("f16", "f32", 32, False, MMA_ALL)),
                    sparse=True))
    return out


def SP_EXPECTS(t, d, k, sat, archs):  # noqa: N802 (a table, read like one)
    """The expected opcodes of one mma.sp variant on ``archs``."""
    if t in isa.MMA_ONLY_TYPES or t in ("s8", "u8"):
        native = tuple(a for a in archs if a in isa.S4_NATIVE_ARCHS or t in ("s8", "u8"))
        yield Expect(native, isa_sass.integer_mma_opcode(t, k, sparse=True, saturate=sat))
        later = tuple(a for a in archs if a not in native)
        if later:
            yield Expect(later, isa_sass.integer_mma_opcode(t, k, sparse=True, saturate=sat,
                                                       emulated=True), True, S4_NOTE)
        return
    yield Expect(archs, isa_sass.sparse_mma_opcode(t, d, k))


def _mma_variants() -> list[Variant]:
    out = []
    for t, d, regs, bits in (("f16", "f32", 4, 16), ("f16", "f16", 2, 16), ("bf16", "f32", 4, 16),
                             ("tf32", "f32", 4, 32), ("s8", "s32", 4, 8), ("u8", "s32", 4, 8)):
        k = isa.INPUT_K[t]
        out.append(_mma(f"{t}.{d}", f"{_MMA}.m16n8k{k}.row.col.{d}.{t}.{t}.{d}", (t,), d, k,
                        regs, bits, (Expect(MMA_ALL, isa_sass.mma_opcode(t, d)),)))
    # integer and single-bit mma.sync (the ISA table's integer block): .satfinite
    # s8/u8 and s4/u4, s4/u4 m16n8k64 (emulated on Hopper and later), b1 .and/.xor
    for t in ("s8", "u8", *isa.SUBBYTE_INTEGER_TYPES):
        k, sub = isa.INPUT_K[t], t in isa.SUBBYTE_INTEGER_TYPES
        native = isa.S4_NATIVE_ARCHS if sub else MMA_ALL
        for sat in ((False, True) if sub else (True,)):
            expects = [Expect(native, isa_sass.integer_mma_opcode(t, k, saturate=sat))]
            if sub:
                expects.append(Expect(isa.S4_EMULATED_ARCHS, isa_sass.integer_mma_opcode(
                    t, k, emulated=True, saturate=sat), True, S4_NOTE))
            out.append(_mma(f"{t}.s32" + (".sat" if sat else ""),
                            f"{_MMA}.m16n8k{k}.row.col{'.satfinite' if sat else ''}.s32.{t}.{t}.s32",
                            (t,), "s32", k, 4, WIDTH_BITS[t], tuple(expects)))
    for op in isa.BIT_OPS:
        k = isa.INPUT_K["b1"]
        native = isa.B1_XOR_NATIVE_ARCHS if op == "xor" else isa.BMMA_ARCHS
        expects = [Expect(native, isa_sass.integer_mma_opcode("b1", k, op))]
        if op == "xor":
            hopper = tuple(a for a in isa.BMMA_ARCHS if a not in native)
            expects.append(Expect(hopper, isa_sass.integer_mma_opcode("b1", k, op, emulated=True),
                                  True, B1_XOR_NOTE))
        later = tuple(a for a in MMA_ALL if a not in isa.BMMA_ARCHS)
        expects.append(Expect(later, isa_sass.integer_mma_opcode("b1", k, op, emulated="imma"), True,
                              B1_IMMA_NOTE))
        expects = tuple(expects)
        out.append(_mma(f"b1.{op}", f"{_MMA}.m16n8k{k}.row.col.s32.b1.b1.s32.{op}.popc", ("b1",),
                        "s32", k, 4, 1, expects))
    out += _mma_sp_variants()
    for t in isa.FP8_TYPES:
        T = t.upper()
        for d, regs in (("f32", 4), ("f16", 2)):
            D = d.upper()
            note = _F2FP_NOTE.format(t=T, acc=D, add="FADD" if d == "f32" else "HADD2")
            out.append(_mma(f"{t}.{d}", f"{_MMA}.m16n8k32.row.col.{d}.{t}.{t}.{d}", (t,), d, 32,
                            regs, 8, (Expect(FP8_NATIVE, isa_sass.mma_opcode(t, d)),
                                      Expect(FP8_EMULATED, isa_sass.mma_opcode(t, d, emulated=True),
                                             True, note)),
                            archs=FP8_NATIVE + FP8_EMULATED))
    # m16n8k8 f16 (sm_75 and later: Turing's largest f16 shape)
    for d, regs in (("f32", 4), ("f16", 2)):
        out.append(_mma(f"f16.{d}.k8", f"{_MMA}.m16n8k8.row.col.{d}.f16.f16.{d}", ("f16",), d, 8,
                        regs, 16, (Expect(TURING + MMA_ALL, isa_sass.mma_shape_opcode("f16", d, 8)),),
                        archs=TURING + MMA_ALL))
    # m8n8k4 f16 (Volta's shape; built for sm_75, whose largest f16 shape is k8)
    for d, regs in (("f32", 8), ("f16", 4)):
        out.append(Variant("mma", f"f16.{d}.k4", f"{_MMA}.m8n8k4.row.col.{d}.f16.f16.{d}", ("f16",),
                           (d,), TURING, (Expect(TURING, isa_sass.mma_shape_opcode("f16", d, 4)),),
                           8, 8, 4, 32, regs, a_bits=16, b_bits=16))
    # sm_120a: kind::f8f6f4 (8-bit containers: fp6 in bits 5:0 of a byte, e2m1
    # in bits 5:2) and block scaling (kinds, K and scale forms: the ISA table).
    k8, ((st8, vec8),) = isa.MMA_KIND_K["mxf8f6f4"], isa.scale_forms("mxf8f6f4")
    for t in isa.MMA_KIND_INPUT_TYPES["f8f6f4"]:
        shift = 2 if t == "e2m1" else 0
        out.append(_mma(f"f8f6f4.{t}.f32",
                        f"{_MMA}.kind::f8f6f4.m16n8k{k8}.row.col.f32.{t}.{t}.f32",
                        (t,), "f32", k8, 4, 8, (Expect(SM120, isa_sass.mma_kind_opcode("f8f6f4", t)),),
                        archs=SM120, a_shift=shift, b_shift=shift))
        out.append(_mma(f"mxf8f6f4.{t}.f32",
                        f"{_MMA}.kind::mxf8f6f4.block_scale.scale_vec::{vec8}X.m16n8k{k8}.row.col"
                        f".f32.{t}.{t}.f32.{st8}", (t,), "f32", k8, 4, 8,
                        (Expect(SM120, isa_sass.mma_kind_opcode("mxf8f6f4", t, st8, vec8)),),
                        archs=SM120, scaled=True, a_shift=shift, b_shift=shift))
    for kind in isa.PACKED_E2M1_KINDS:
        k = isa.MMA_KIND_K[kind]
        for st, vec in isa.scale_forms(kind):
            out.append(_mma(f"{kind}.{vec}x.{st}",
                            f"{_MMA}.kind::{kind}.block_scale.scale_vec::{vec}X.m16n8k{k}.row.col"
                            f".f32.e2m1.e2m1.f32.{st}", ("e2m1",), "f32", k, 4, 4,
                            (Expect(SM120, isa_sass.mma_kind_opcode(kind, "e2m1", st, vec)),),
                            archs=SM120, scaled=True))
    return out


def _f64_variants() -> list[Variant]:
    """f64 mma.sync (DMMA): every shape of the ISA table on the architectures
    that have it, with the opcode each compiles to (m16n8 shapes split into
    DMMA.8x8x4s on sm_100a, sm_103a and sm_120a: flagged emulated). The
    m8n8k4 variant is mma.f64.f64; the others name their shape."""
    out = []
    for shape in isa.F64_SHAPES:
        m, n, k = shape
        archs = tuple(a for a in MMA_ALL if shape in isa.f64_shapes(a))
        expects: dict = {}
        for a in archs:
            expects.setdefault(isa_sass.f64_opcode(shape, a), []).append(a)
        key = "f64.f64" if shape == isa.F64_SHAPES[0] else f"f64.f64.m{m}n{n}k{k}"
        out.append(Variant("mma", key, f"{_MMA}.m{m}n{n}k{k}.row.col.f64.f64.f64.f64", ("f64",),
                           ("f64",), archs,
                           tuple(Expect(tuple(group), op, emulated, _DMMA_SPLIT_NOTE if emulated else "")
                                 for (op, emulated), group in expects.items()),
                           m, n, k, 32, 2 * m * n // 32, a_bits=64, b_bits=64))
    return out


_DMMA_SPLIT_NOTE = ("the compiler splits the shape into DMMA.8x8x4s chained through the "
                    "accumulator (two row halves times K/4)")


# ---------------------------------------------------------------------------
# wgmma (sm_90a), m64n8kK, operands in shared memory

HOPPER = isa.HOPPER_ARCHS
_WG = "wgmma.mma_async.sync.aligned"


def _wgmma_variants() -> list[Variant]:
    out = []
    def add(key, ptx, fmt, d, k, regs, pack, tail, opcode):
        out.append(Variant("wgmma", key, ptx, (fmt,), (d,), HOPPER, (Expect(HOPPER, opcode),), 64, 8,
                           k, 128, regs, a_pack=pack, b_pack=pack, tail=tail))
    for t in ("f16", "bf16"):
        for d in (("f32", "f16") if t == "f16" else ("f32",)):
            add(f"{t}.{d}", f"{_WG}.m64n8k16.{d}.{t}.{t}", t, d, 16, 4 if d == "f32" else 2,
                PACK_B16, ", 1, 1, 0, 0", isa_sass.wgmma_opcode(t, d))
    add("tf32.f32", f"{_WG}.m64n8k8.f32.tf32.tf32", "tf32", "f32", 8, 4, PACK_B32, ", 1, 1",
        isa_sass.wgmma_opcode("tf32", "f32"))
    for t in isa.FP8_TYPES:
        for d in ("f32", "f16"):
            add(f"{t}.{d}", f"{_WG}.m64n8k32.{d}.{t}.{t}", t, d, 32, 4 if d == "f32" else 2, PACK_B8,
                ", 1, 1", isa_sass.wgmma_opcode(t, d))
    for t in isa.INTEGER_INPUT_TYPES:
        add(f"{t}.s32", f"{_WG}.m64n8k32.s32.{t}.{t}", t, "s32", 32, 4, PACK_B8, "",
            isa_sass.wgmma_opcode(t, "s32"))
        add(f"{t}.s32.sat", f"{_WG}.m64n8k32.satfinite.s32.{t}.{t}", t, "s32", 32, 4, PACK_B8, "",
            isa_sass.wgmma_opcode(t, "s32", saturate=True))
    # wgmma.mma_async.sp: K doubled, into f32 (s32 for the integers)
    tails = {"f16": ", 1, 1, 0, 0", "bf16": ", 1, 1, 0, 0", "tf32": ", 1, 1"}
    packs = {"f16": PACK_B16, "bf16": PACK_B16, "tf32": PACK_B32}
    for t in isa.WGMMA_SP_TYPES:
        d = isa.output_types("wgmma", t, t)[0]
        k = isa.instruction_k("wgmma", t, sparse=True)
        integer = t in isa.INTEGER_INPUT_TYPES
        out.append(Variant("wgmma", f"{t}.{d}.sparse",
                           f"wgmma.mma_async.sp.sync.aligned.m64n8k{k}.{d}.{t}.{t}", (t,), (d,),
                           HOPPER, (Expect(HOPPER, isa_sass.wgmma_opcode(t, d, sparse=True)),), 64, 8,
                           k, 128, 4, sparse=True, a_pack=packs.get(t, PACK_B8),
                           b_pack=packs.get(t, PACK_B8),
                           tail="" if integer else tails.get(t, ", 1, 1")))
    return out


# ---------------------------------------------------------------------------
# tcgen05 (sm_100a, sm_103a): types, M and N live in the runtime instruction
# descriptor, so one kernel serves every type of a kind.

BLACKWELL = isa.BLACKWELL_ARCHS
_TC = "tcgen05.mma"
UTC_SAME_OPCODE = ("UTCHMMA is one opcode for f16, bf16 and tf32 inputs: the types sit in the "
                   "runtime instruction descriptor, so SASS cannot tell them apart")
# The unscaled kinds, then the block-scaled kinds by scale_vec (kinds, types,
# K, outputs, scale forms and opcodes: the ISA table).
TC05_PLAIN = isa.TCGEN05_PLAIN_KINDS
TC05_SCALED = tuple((kind, vec) for kind in isa.BLOCK_SCALED_KINDS for vec in isa.scale_vecs(kind))


def _tcgen05_variants() -> list[Variant]:
    out = []
    for kind in TC05_PLAIN:
        fmts, k = isa.TCGEN05_INPUT_TYPES[kind], isa.TCGEN05_K[kind]
        if kind == "i8":
            fmts = isa.INTEGER_INPUT_TYPES  # s8 first, as mma and wgmma list them
        archs, op = isa.TCGEN05_KIND_ARCHS[kind], isa_sass.TCGEN05_OPCODES[kind]
        ds = isa.output_types("tcgen05", kind, fmts[0])
        for sparse in (False, True):
            sp = ".sp" if sparse else ""
            notes = (UTC_SAME_OPCODE,) if op == "UTCHMMA" else ()
            out.append(Variant("tcgen05", kind + (".sparse" if sparse else ""),
                               f"{_TC}{sp}.cta_group::1.kind::{kind}", fmts, ds, archs,
                               (Expect(archs, op, note=notes[0] if notes else ""),), 64, 8,
                               k * (2 if sparse else 1), 128, 8, sparse=sparse, notes=notes))
    for kind, vec in TC05_SCALED:
        fmts, k = isa.TCGEN05_INPUT_TYPES[kind], isa.TCGEN05_K[kind]
        for sparse in (False, True):
            sp = ".sp" if sparse else ""
            key = f"{kind}.{vec}x" + (".sparse" if sparse else "")
            expects = tuple(Expect((a,), isa_sass.tcgen05_opcode(kind, a, vec)) for a in BLACKWELL)
            out.append(Variant("tcgen05", key,
                               f"{_TC}{sp}.cta_group::1.kind::{kind}.block_scale.scale_vec::{vec}X",
                               fmts, ("f32",), BLACKWELL, expects, 128, 8,
                               k * (2 if sparse else 1), 128, 8, scaled=True, sparse=sparse))
    return out


# Variants a family's architecture cannot build, with the compiler's reason
# (shown by sass-check; tests/test_sass.py recompiles them to confirm).
UNSUPPORTED = {
    (f"tcgen05.{kind}{sparse}", arch): f"ptxas rejects kind::{kind} for {arch}"
    for kind in TC05_PLAIN for arch in BLACKWELL if arch not in isa.TCGEN05_KIND_ARCHS[kind]
    for sparse in ("", ".sparse")}


@cache
def variants() -> tuple[Variant, ...]:
    return tuple(_mma_variants() + _f64_variants() + _wgmma_variants() + _tcgen05_variants())


def for_arch(arch: str, families: tuple[str, ...] | None = None) -> list[Variant]:
    """The variants built into ``arch``'s harness cubin."""
    fams = ARCH_FAMILIES.get(arch)
    if fams is None:
        raise LookupError(f"no harness for {arch} (known: {', '.join(ARCH_FAMILIES)})")
    if families is not None:
        fams = tuple(f for f in fams if f in families)
    return [v for v in variants() if v.family in fams and arch in v.archs]


def by_name(name: str) -> Variant:
    for v in variants():
        if v.name == name:
            return v
    raise LookupError(f"no harness variant {name!r}")


@dataclass(frozen=True)
class Unit:
    """One compilation unit: an architecture's harness source and headers."""

    arch: str
    families: tuple[str, ...]
    source: str
    headers: dict
    variants: tuple[Variant, ...]


def translation_unit(arch: str, families: tuple[str, ...] | None = None,
                     only: tuple[Variant, ...] | None = None) -> Unit:
    """The source of ``arch``'s harness cubin: the family sources it runs and
    one instantiation line per variant (or per variant of ``only``)."""
    vs = list(only) if only is not None else for_arch(arch, families)
    fams = tuple(f for f in SOURCES if any(v.family == f for v in vs))
    if not fams:
        raise LookupError(f"no harness variants for {arch} in families {families}")
    parts = [f"// tcprobe harness unit for {arch}: {', '.join(fams)}"]
    for fam in fams:
        parts.append(source(SOURCES[fam]))
        parts.extend(v.macro() for v in vs if v.family == fam)
    return Unit(arch, fams, "\n".join(parts) + "\n", {HEADER: source("common.cuh")}, tuple(vs))
