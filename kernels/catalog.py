"""The harness variants: which kernel runs which datapath on which architecture.

Each :class:`Variant` is one ``extern "C"`` kernel instantiated from a family
source (``mma_sync.cu``, ``wgmma.cu``, ``tcgen05.cu``) by one macro line. For
an architecture, :func:`translation_unit` joins the family sources that the
architecture runs and the instantiation lines of its variants into one
compilation unit: one cubin, one nvdisasm call per architecture.

Expected opcodes are stated per variant and architecture group (:class:`Expect`);
``tcprobe sass-check`` compares them with the disassembly. Where the compiler
emulates an instruction (e4m3/e5m2 ``mma.sync`` on sm_90 and sm_100a/sm_103a:
F2FP unpacks to f16, then HMMA), the expectation names the emulation and the
model profile that describes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from . import source

# Shared-memory packings (TcpPack in common.cuh; the values must agree).
PACK_B32, PACK_B16, PACK_B8, PACK_B6X16P32, PACK_B4X16P64, PACK_B4 = range(6)
PACK_NAMES = {PACK_B32: "b32", PACK_B16: "b16", PACK_B8: "b8", PACK_B6X16P32: "b6x16_p32",
              PACK_B4X16P64: "b4x16_p64", PACK_B4: "b4"}
SOURCES = {"mma": "mma_sync.cu", "wgmma": "wgmma.cu", "tcgen05": "tcgen05.cu"}
HEADER = "tcprobe_common.cuh"

# Families each architecture's harness cubin holds. sm_90a adds wgmma to the
# mma harness of sm_90; sm_100a and sm_103a add tcgen05.
ARCH_FAMILIES: dict[str, tuple[str, ...]] = {
    "sm_80": ("mma",),
    "sm_86": ("mma",),
    "sm_89": ("mma",),
    "sm_90": ("mma",),
    "sm_90a": ("mma", "wgmma"),
    "sm_100a": ("mma", "tcgen05"),
    "sm_103a": ("mma", "tcgen05"),
    "sm_120a": ("mma",),
}

# Names the fit engineer's emulation profiles carry (they must match).
EMULATION_PROFILES = {"sm_90": "hopper-fp8-emulated", "sm_90a": "hopper-fp8-emulated",
                      "sm_100a": "b200-fp8-emulated", "sm_103a": "b200-fp8-emulated"}


def arch_for_cc(major: int, minor: int) -> str:
    """The harness architecture of a GPU of compute capability major.minor:
    the arch-specific target where the family needs one (sm_90a, sm_100a)."""
    cc = major * 10 + minor
    table = {80: "sm_80", 86: "sm_86", 87: "sm_86", 89: "sm_89", 90: "sm_90a", 100: "sm_100a",
             103: "sm_103a", 120: "sm_120a"}
    if cc in table:
        return table[cc]
    raise LookupError(f"no tcprobe harness for compute capability {major}.{minor} "
                      f"(harnesses: {', '.join(ARCH_FAMILIES)})")


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

    def expect(self, arch: str) -> Expect | None:
        return next((e for e in self.expects if arch in e.archs), None)

    def macro(self) -> str:
        """The instantiation line of this variant."""
        if self.family == "mma":
            if self.scaled:
                return (f'TCP_MMA_SCALED({self.symbol}, "{self.ptx}", {self.a_bits}, '
                        f'{self.a_shift}, {self.b_bits}, {self.b_shift})')
            return (f'TCP_MMA_PLAIN({self.symbol}, "{self.ptx}", {self.acc_regs}, {self.a_bits}, '
                    f'{self.a_shift}, {self.b_bits}, {self.b_shift})')
        if self.family == "wgmma":
            return (f'TCP_WGMMA({self.symbol}, "{self.ptx}", {self.acc_regs}, {self.a_pack}, '
                    f'{self.b_pack}, "{self.tail}")')
        form = ("SCALED_" if self.scaled else "") + ("SPARSE" if self.sparse else "")
        return f'TCP_TC05({self.symbol}, "{self.ptx}", {form.rstrip("_") or "DENSE"})'


# ---------------------------------------------------------------------------
# mma.sync

MMA_ALL = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_103a", "sm_120a")
FP8_NATIVE = ("sm_89", "sm_120a")
FP8_EMULATED = ("sm_90", "sm_90a", "sm_100a", "sm_103a")
SM120 = ("sm_120a",)
_MMA = "mma.sync.aligned"
_F2FP_NOTE = ("F2FP.F16.{t}.UNPACK_B turns the fp8 operands into f16, two chained "
              "HMMA.16816.{acc} (the first with C = 0, split by k mod 4 in {{0,1}} then {{2,3}}) "
              "form the product sum, and a separate {add} adds C")


def _mma(key, ptx, formats, d, k, acc_regs, bits, expects, **kw) -> Variant:
    return Variant("mma", key, ptx, formats, (d,), kw.pop("archs", MMA_ALL), expects, 16, 8, k, 32,
                   acc_regs, a_bits=bits, b_bits=bits, **kw)


def _mma_variants() -> list[Variant]:
    out = [
        _mma("f16.f32", f"{_MMA}.m16n8k16.row.col.f32.f16.f16.f32", ("f16",), "f32", 16, 4, 16,
             (Expect(MMA_ALL, "HMMA.16816.F32"),)),
        _mma("f16.f16", f"{_MMA}.m16n8k16.row.col.f16.f16.f16.f16", ("f16",), "f16", 16, 2, 16,
             (Expect(MMA_ALL, "HMMA.16816.F16"),)),
        _mma("bf16.f32", f"{_MMA}.m16n8k16.row.col.f32.bf16.bf16.f32", ("bf16",), "f32", 16, 4, 16,
             (Expect(MMA_ALL, "HMMA.16816.F32.BF16"),)),
        _mma("tf32.f32", f"{_MMA}.m16n8k8.row.col.f32.tf32.tf32.f32", ("tf32",), "f32", 8, 4, 32,
             (Expect(MMA_ALL, "HMMA.1688.F32.TF32"),)),
        _mma("s8.s32", f"{_MMA}.m16n8k32.row.col.s32.s8.s8.s32", ("s8",), "s32", 32, 4, 8,
             (Expect(MMA_ALL, "IMMA.16832.S8.S8"),)),
        _mma("u8.s32", f"{_MMA}.m16n8k32.row.col.s32.u8.u8.s32", ("u8",), "s32", 32, 4, 8,
             (Expect(MMA_ALL, "IMMA.16832.U8.U8"),)),
    ]
    for t in ("e4m3", "e5m2"):
        T = t.upper()
        for d, regs in (("f32", 4), ("f16", 2)):
            D = d.upper()
            native = f"QMMA.16832.{D}.{T}.{T}"
            note = _F2FP_NOTE.format(t=T, acc=D, add="FADD" if d == "f32" else "HADD2")
            out.append(_mma(f"{t}.{d}", f"{_MMA}.m16n8k32.row.col.{d}.{t}.{t}.{d}", (t,), d, 32,
                            regs, 8, (Expect(FP8_NATIVE, native),
                                      Expect(FP8_EMULATED, f"HMMA.16816.{D}", True, note)),
                            archs=FP8_NATIVE + FP8_EMULATED))
    # sm_120a: kind::f8f6f4 (fp6 in bits 5:0 of a byte, e2m1 in bits 5:2) and block scaling.
    fp_kinds = {"e4m3": (8, 0), "e5m2": (8, 0), "e2m3": (8, 0), "e3m2": (8, 0), "e2m1": (8, 2)}
    for t, (bits, shift) in fp_kinds.items():
        T = t.upper()
        out.append(_mma(f"f8f6f4.{t}.f32", f"{_MMA}.kind::f8f6f4.m16n8k32.row.col.f32.{t}.{t}.f32",
                        (t,), "f32", 32, 4, bits, (Expect(SM120, f"QMMA.16832.F32.{T}.{T}"),),
                        archs=SM120, a_shift=shift, b_shift=shift))
        out.append(_mma(f"mxf8f6f4.{t}.f32",
                        f"{_MMA}.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.{t}.{t}.f32.ue8m0",
                        (t,), "f32", 32, 4, bits, (Expect(SM120, f"QMMA.SF.16832.F32.{T}.{T}.E8"),),
                        archs=SM120, scaled=True, a_shift=shift, b_shift=shift))
    for kind, vec, st in (("mxf4", "2X", "ue8m0"), ("mxf4nvf4", "2X", "ue8m0"), ("mxf4nvf4", "4X", "ue4m3")):
        sc = "E8" if st == "ue8m0" else "UE4M3.4X"
        out.append(_mma(f"{kind}.{vec.lower()}.{st}",
                        f"{_MMA}.kind::{kind}.block_scale.scale_vec::{vec}.m16n8k64.row.col.f32.e2m1.e2m1.f32.{st}",
                        ("e2m1",), "f32", 64, 4, 4,
                        (Expect(SM120, f"OMMA.SF.16864.F32.E2M1.E2M1.{sc}"),), archs=SM120, scaled=True))
    return out


# ---------------------------------------------------------------------------
# wgmma (sm_90a), m64n8kK, operands in shared memory

HOPPER = ("sm_90a",)
_WG = "wgmma.mma_async.sync.aligned"


def _wgmma_variants() -> list[Variant]:
    out = []
    def add(key, ptx, fmt, d, k, regs, pack, tail, opcode):
        out.append(Variant("wgmma", key, ptx, (fmt,), (d,), HOPPER, (Expect(HOPPER, opcode),), 64, 8,
                           k, 128, regs, a_pack=pack, b_pack=pack, tail=tail))
    for t in ("f16", "bf16"):
        for d in (("f32", "f16") if t == "f16" else ("f32",)):
            suffix = "" if (t == "f16" and d == "f16") else (".BF16" if t == "bf16" else "")
            add(f"{t}.{d}", f"{_WG}.m64n8k16.{d}.{t}.{t}", t, d, 16, 4 if d == "f32" else 2,
                PACK_B16, ", 1, 1, 0, 0", f"HGMMA.64x8x16.{d.upper()}{suffix}")
    add("tf32.f32", f"{_WG}.m64n8k8.f32.tf32.tf32", "tf32", "f32", 8, 4, PACK_B32, ", 1, 1",
        "HGMMA.64x8x8.F32.TF32")
    for t in ("e4m3", "e5m2"):
        for d in ("f32", "f16"):
            add(f"{t}.{d}", f"{_WG}.m64n8k32.{d}.{t}.{t}", t, d, 32, 4 if d == "f32" else 2, PACK_B8,
                ", 1, 1", f"QGMMA.64x8x32.{d.upper()}.{t.upper()}.{t.upper()}")
    for t in ("s8", "u8"):
        add(f"{t}.s32", f"{_WG}.m64n8k32.s32.{t}.{t}", t, "s32", 32, 4, PACK_B8, "",
            f"IGMMA.64x8x32.{t.upper()}.{t.upper()}")
    return out


# ---------------------------------------------------------------------------
# tcgen05 (sm_100a, sm_103a): types, M and N live in the runtime instruction
# descriptor, so one kernel serves every type of a kind.

BLACKWELL = ("sm_100a", "sm_103a")
_TC = "tcgen05.mma"
UTC_SAME_OPCODE = ("UTCHMMA is one opcode for f16, bf16 and tf32 inputs: the types sit in the "
                   "runtime instruction descriptor, so SASS cannot tell them apart")
# kind -> (formats, d types, dense K, opcode, archs). ptxas 13.5 rejects
# kind::i8 for sm_103a ("Feature '.kind::i8' not supported on .target
# 'sm_103a'"): the integer kind is built for sm_100a only.
TC05_KINDS = {
    "f16": (("f16", "bf16"), ("f32", "f16"), 16, "UTCHMMA", BLACKWELL),
    "tf32": (("tf32",), ("f32",), 8, "UTCHMMA", BLACKWELL),
    "f8f6f4": (("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"), ("f32", "f16"), 32, "UTCQMMA", BLACKWELL),
    "i8": (("s8", "u8"), ("s32",), 32, "UTCIMMA", ("sm_100a",)),
}
# (kind, scale_vec) -> (formats, dense K, scale types, opcode)
TC05_SCALED = {
    ("mxf8f6f4", "1X"): (("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"), 32, ("ue8m0",), "UTCQMMA"),
    ("mxf4", "2X"): (("e2m1",), 64, ("ue8m0",), "UTCOMMA"),
    ("mxf4nvf4", "2X"): (("e2m1",), 64, ("ue8m0",), "UTCOMMA"),
    # The same PTX disassembles as UTCOMMA.4X for sm_100a, UTCOMMA.BLOCK16 for sm_103a.
    ("mxf4nvf4", "4X"): (("e2m1",), 64, ("ue8m0", "ue4m3"),
                         {"sm_100a": "UTCOMMA.4X", "sm_103a": "UTCOMMA.BLOCK16"}),
}


def _tcgen05_variants() -> list[Variant]:
    out = []
    for kind, (fmts, ds, k, op, archs) in TC05_KINDS.items():
        for sparse in (False, True):
            sp = ".sp" if sparse else ""
            notes = (UTC_SAME_OPCODE,) if op == "UTCHMMA" else ()
            out.append(Variant("tcgen05", kind + (".sparse" if sparse else ""),
                               f"{_TC}{sp}.cta_group::1.kind::{kind}", fmts, ds, archs,
                               (Expect(archs, op, note=notes[0] if notes else ""),), 64, 8,
                               k * (2 if sparse else 1), 128, 8, sparse=sparse, notes=notes))
    for (kind, vec), (fmts, k, _scales, op) in TC05_SCALED.items():
        for sparse in (False, True):
            sp = ".sp" if sparse else ""
            key = f"{kind}.{vec.lower()}" + (".sparse" if sparse else "")
            ops = op if isinstance(op, dict) else dict.fromkeys(BLACKWELL, op)
            expects = tuple(Expect((a,), o) for a, o in ops.items())
            out.append(Variant("tcgen05", key,
                               f"{_TC}{sp}.cta_group::1.kind::{kind}.block_scale.scale_vec::{vec}",
                               fmts, ("f32",), BLACKWELL, expects, 128, 8,
                               k * (2 if sparse else 1), 128, 8, scaled=True, sparse=sparse))
    return out


# Variants a family's architecture cannot build, with the compiler's reason
# (shown by sass-check; tests/test_sass.py recompiles them to confirm).
UNSUPPORTED = {
    ("tcgen05.i8", "sm_103a"): "ptxas rejects kind::i8 for sm_103a",
    ("tcgen05.i8.sparse", "sm_103a"): "ptxas rejects kind::i8 for sm_103a",
}


@cache
def variants() -> tuple[Variant, ...]:
    return tuple(_mma_variants() + _wgmma_variants() + _tcgen05_variants())


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
