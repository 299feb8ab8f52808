"""Read the SASS of the harness cubins: which tensor-core opcode each kernel uses.

nvdisasm comes from the ``nvidia-cuda-nvdisasm`` wheel (found with
cuda.pathfinder); no GPU or driver is involved. One nvdisasm call reads a
whole architecture's harness cubin. :func:`check` compares every kernel's
tensor-core opcodes with the opcode the catalog expects, and recognizes the
emulation of fp8 ``mma.sync`` (F2FP unpacks to f16 feeding HMMA), which it
summarizes from the instructions it found.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import cache

from tcprobe.kernels import catalog
from tcprobe.models import isa
from tcprobe.models.emulated import EMULATION_BY_ARCH
from tcprobe.models.profiles import profile_for_gpu

from . import nvrtc

# Tensor-core opcodes: warp MMA (HMMA, IMMA, QMMA, OMMA, BMMA, DMMA), warpgroup
# MMA (HGMMA, QGMMA, IGMMA, BGMMA) and tcgen05 (UTCHMMA, UTCQMMA, UTCIMMA, UTCOMMA).
TENSOR_OPCODE = re.compile(r"^(?:[HIQOBD]MMA|[HQIB]GMMA|UTC[HQIOB]MMA)(?:\.|$)")
_SECTION = re.compile(r"^\s*\.section\s+\.text\.([A-Za-z_$][\w$]*)")
_INSTR = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*([^;]*);")


class SassError(RuntimeError):
    """nvdisasm is missing or cannot read a cubin."""


@dataclass(frozen=True)
class Instr:
    opcode: str  # HMMA.16816.F32.BF16
    operands: tuple[str, ...]


def nvdisasm_path() -> str:
    """The nvdisasm executable: $TCPROBE_NVDISASM when set, else the
    nvidia-cuda-nvdisasm wheel's, else the one on PATH."""
    chosen = os.environ.get("TCPROBE_NVDISASM")
    if chosen:
        if not (os.path.isfile(chosen) and os.access(chosen, os.X_OK)):
            raise SassError(f"TCPROBE_NVDISASM={chosen!r} is not an executable file")
        return chosen
    path = None
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        path = find_nvidia_binary_utility("nvdisasm")
    except Exception:  # pathfinder absent or unable to look
        path = None
    path = path or shutil.which("nvdisasm")
    if not path:
        raise SassError(f"nvdisasm is not available; {nvrtc.INSTALL_HINT} (nvidia-cuda-nvdisasm)")
    return path


@cache
def nvdisasm_version() -> str:
    out = subprocess.run([nvdisasm_path(), "--version"], capture_output=True, text=True)
    m = re.search(r"release ([\d.]+), V([\d.]+)", out.stdout)
    return m.group(2) if m else out.stdout.strip().splitlines()[-1]


def disassemble(cubin: bytes) -> str:
    """nvdisasm's text of a whole cubin (one call)."""
    fd, path = tempfile.mkstemp(suffix=".cubin", prefix="tcprobe-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(cubin)
        res = subprocess.run([nvdisasm_path(), "-c", path], capture_output=True)
    finally:
        os.unlink(path)
    if res.returncode != 0:
        msg = res.stderr.decode(errors="replace").strip().splitlines()
        raise SassError(f"nvdisasm failed: {msg[-1] if msg else res.returncode}")
    return res.stdout.decode(errors="replace")


def functions(text: str) -> dict[str, list[Instr]]:
    """The instructions of every kernel in a disassembly, by symbol."""
    out: dict[str, list[Instr]] = {}
    cur = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        if cur is not None:
            mi = _INSTR.search(line)
            if mi:
                ops = tuple(o.strip() for o in mi.group(2).split(",") if o.strip())
                cur.append(Instr(mi.group(1), ops))
    return out


def tensor_opcodes(instrs: list[Instr]) -> list[str]:
    """The distinct tensor-core opcodes of a kernel, in order of appearance."""
    seen: dict[str, None] = {}
    for i in instrs:
        if TENSOR_OPCODE.match(i.opcode):
            seen.setdefault(i.opcode)
    return list(seen)


def emulation_summary(instrs: list[Instr]) -> dict | None:
    """How a kernel emulates an fp8 MMA, read off its instructions: the F2FP
    unpacks, the HMMA chain (and whether its first link starts from C = 0,
    RZ), and the separate additions of C that follow; None if no F2FP unpack
    feeds an HMMA. An f64 shape split into several DMMA.8x8x4s is summed up
    as that chain."""
    dmmas = [i.opcode for i in instrs if i.opcode.startswith("DMMA")]
    if len(dmmas) > 1 and set(dmmas) == {"DMMA.8x8x4"}:
        return {"dmma_chain": dmmas,
                "summary": f"{len(dmmas)} DMMA.8x8x4 chained through the accumulator (the f64 "
                           "model of the GPU's profile: its FMA chain goes on through each)"}
    unpacks = Counter(i.opcode for i in instrs if i.opcode.startswith("F2FP") and "UNPACK" in i.opcode)
    hmmas = [i for i in instrs if i.opcode.startswith("HMMA")]
    if not unpacks or not hmmas:
        return None
    last = max(k for k, i in enumerate(instrs) if i.opcode.startswith("HMMA"))
    adds = Counter(i.opcode for i in instrs[last + 1:] if i.opcode in ("FADD", "HADD2", "FADD.FTZ", "HADD2.F32"))
    first_c = hmmas[0].operands[-1] if hmmas[0].operands else "?"
    parts = [", ".join(f"{op} x{n}" for op, n in sorted(unpacks.items())),
             f"{' -> '.join(i.opcode for i in hmmas)} (first from C = {'0 (RZ)' if first_c == 'RZ' else first_c})"]
    if adds:
        parts.append("then " + ", ".join(f"{op} x{n}" for op, n in sorted(adds.items())) + " adds C")
    return {"unpacks": dict(unpacks), "hmma_chain": [i.opcode for i in hmmas],
            "first_c_zero": first_c == "RZ", "c_added_by": dict(adds), "summary": "; ".join(parts)}


@dataclass
class Verdict:
    harness: str  # variant name, e.g. mma.e4m3.f32
    arch: str
    ptx: str
    formats: tuple[str, ...]
    expected: str
    found: list[str]
    status: str  # ok | emulated | missing | unsupported
    emulation: dict | None = None
    profile: str | None = None  # model profile of the emulation
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "missing"

    def as_dict(self) -> dict:
        return asdict(self)


def _f64_profile(arch: str) -> str | None:
    """The profile whose f64 model describes an f64 shape split into DMMA.8x8x4s."""
    gpus = isa.ARCH_GPUS.get(arch, ())
    return profile_for_gpu(gpus[0]).name if gpus else None


def judge(variant: catalog.Variant, arch: str, instrs: list[Instr] | None) -> Verdict:
    """Compare one kernel's opcodes on ``arch`` with the catalog's expectation."""
    exp = variant.expect(arch)
    expected = exp.opcode if exp else "?"
    if instrs is None:
        return Verdict(variant.name, arch, variant.ptx, variant.formats, expected, [], "missing",
                       note=f"kernel {variant.symbol} is not in the {arch} cubin")
    found = tensor_opcodes(instrs)
    emu = emulation_summary(instrs)
    note = exp.note if exp else ""
    if exp is None:
        return Verdict(variant.name, arch, variant.ptx, variant.formats, expected, found, "missing",
                       emu, note="no expectation recorded for this architecture")
    hit = expected in found
    if exp.emulated:
        # fp8 emulations show their F2FP unpacks; integer ones (s4/u4 through
        # 8-bit IMMA, b1 .xor through BMMA.AND) only their substitute opcode
        dmma = variant.formats[0] in isa.F64_TYPES  # DMMA.8x8x4 chains, read off the SASS
        integer = variant.formats[0] not in isa.FP8_TYPES and not dmma
        status = "emulated" if hit and (emu or integer) else "missing"
        profile = _f64_profile(arch) if dmma else EMULATION_BY_ARCH.get(arch)
        if integer:  # an exact integer sum either way: the integer model
            emu, profile = {"summary": exp.note}, "auto (exact integer sum)"
        if emu:
            note = f"emulated: {emu['summary']}"
        return Verdict(variant.name, arch, variant.ptx, variant.formats, expected, found, status, emu,
                       profile, note)
    if hit and emu:  # expected native but the compiler emulated it
        return Verdict(variant.name, arch, variant.ptx, variant.formats, expected, found, "missing", emu,
                       EMULATION_BY_ARCH.get(arch), f"unexpected emulation: {emu['summary']}")
    return Verdict(variant.name, arch, variant.ptx, variant.formats, expected, found,
                   "ok" if hit else "missing", emu, None, note)


@dataclass
class ArchReport:
    arch: str
    cubin_sha256: str
    cubin_bytes: int
    cached: bool
    compile_s: float
    disasm_s: float
    verdicts: list[Verdict] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["verdicts"] = [v.as_dict() for v in self.verdicts]
        return d


def check_arch(arch: str, families: tuple[str, ...] | None = None, use_cache: bool = True) -> ArchReport:
    """Compile ``arch``'s harness cubin, disassemble it once, judge every kernel."""
    arch = nvrtc.check_arch(arch)
    cub = nvrtc.compile_harness(arch, families, use_cache=use_cache)
    t0 = time.perf_counter()
    funcs = functions(disassemble(cub.data))
    t1 = time.perf_counter() - t0
    rep = ArchReport(arch, cub.sha256, len(cub.data), cub.cached, round(cub.seconds, 3), round(t1, 3))
    for v in catalog.for_arch(arch, families):
        rep.verdicts.append(judge(v, arch, funcs.get(v.symbol)))
    for v in catalog.variants():
        why = catalog.UNSUPPORTED.get((v.name, arch))
        if why and (families is None or v.family in families):
            rep.verdicts.append(Verdict(v.name, arch, v.ptx, v.formats, "-", [], "unsupported", note=why))
    return rep


@cache
def _opcodes_of(sha: str, data: bytes) -> dict[str, list[str]]:
    return {name: tensor_opcodes(ins) for name, ins in functions(disassemble(data)).items()}


def kernel_opcodes(cubin: nvrtc.Cubin) -> dict[str, list[str]]:
    """Tensor-core opcodes of every kernel of a cubin (disassembled once)."""
    return _opcodes_of(cubin.sha256, cubin.data)
