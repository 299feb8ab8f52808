"""Compile every v_mfma of the ISA table with LLVM's AMDGPU backend and read the opcode back.

No HIP compiler is needed: llvmlite (a core dependency, through numba) ships
LLVM with its AMDGPU target, the backend hipcc itself drives. For each
instruction of a generation :func:`kernel_ir` writes a small kernel that
loads A, B and C, calls the ``llvm.amdgcn.mfma.*`` intrinsic of the
instruction (LLVM's IntrinsicsAMDGPU.td: named after the CDNA1/2 spelling,
``_`` -> ``.``; CDNA3 renamed the instructions, not the intrinsics) and
stores D. One module per gfx target is compiled to assembly in a child
process (LLVM ends the whole process on an intrinsic it cannot select for a
target: the child reports it, the kernel is dropped, the rest compiled
again), and :func:`check_target` judges each kernel by the ``v_mfma``
mnemonic its assembly shows. Nothing runs on a GPU.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import cache

from tcprobe.models import isa_amd

TRIPLE = "amdgcn-amd-amdhsa"
# LLVM's type of one element of an operand, by tcprobe format; fp8/bf8
# operands travel as bytes packed into one i64 a lane (8 a lane).
_ELEMENT = {"f32": "float", "tf32": "float", "f16": "half", "bf16": "i16", "f64": "double"}
_PACKED_8BIT = "i64"
_MATRIX_OP = re.compile(r"^\s+(v_mfma\w*|v_smfmac\w*)\b")
_FMA_OP = re.compile(r"^\s+(v_(?:pk_)?fma\w*|v_dot\w*|v_mac\w*)\b")
_LABEL = re.compile(r"^([A-Za-z_][\w.$]*):")
_REFUSED = re.compile(r"Cannot select: intrinsic %(llvm\.amdgcn\.[\w.]+)")
_TARGET_LINE = re.compile(r'\.amdgcn_target\s+"amdgcn-amd-amdhsa--([\w-]+)')

# The child process: "cpus" prints the CPUs LLVM's AMDGPU target knows (its
# -mcpu=help list), "asm CPU" compiles the module on stdin to assembly.
_WORKER = r"""
import sys
import llvmlite.binding as llvm
llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()
target = llvm.Target.from_triple(sys.argv[1])
if sys.argv[2] == "cpus":
    target.create_target_machine(cpu="help")
    sys.stdout.flush()
else:
    mod = llvm.parse_assembly(sys.stdin.read())
    mod.verify()
    tm = target.create_target_machine(cpu=sys.argv[3], opt=2)
    sys.stdout.write(tm.emit_assembly(mod))
"""


class AmdgpuError(RuntimeError):
    """LLVM's AMDGPU backend is missing, or failed in a way that is no verdict."""


def backend_missing() -> str | None:
    """Why this llvmlite cannot build AMDGPU code objects (None: it can)."""
    try:
        import llvmlite.binding as llvm
    except ImportError as e:  # llvmlite is a core dependency; still, say so
        return f"llvmlite is not importable ({e})"
    try:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        llvm.Target.from_triple(TRIPLE)
    except Exception as e:  # llvmlite built without the AMDGPU target
        return f"llvmlite's LLVM {llvm_version()} has no AMDGPU target ({str(e).strip()})"
    return None


@cache
def llvm_version() -> str:
    import llvmlite
    import llvmlite.binding as llvm

    return f"{'.'.join(map(str, llvm.llvm_version_info))} (llvmlite {llvmlite.__version__})"


def _worker(args: list[str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _WORKER, TRIPLE, *args], input=stdin,
                          capture_output=True, text=True, timeout=600)


@cache
def known_cpus() -> tuple[str, ...]:
    """Every processor LLVM's AMDGPU target knows (its -mcpu=help list)."""
    res = _worker(["cpus"])
    cpus, inside = [], False
    for line in (res.stdout + "\n" + res.stderr).splitlines():  # LLVM writes it to stderr
        if line.startswith("Available CPUs"):
            inside = True
        elif line.startswith("Available features"):
            break
        elif inside and line.strip():
            cpus.append(line.split()[0])
    if not cpus:
        raise AmdgpuError(f"LLVM's AMDGPU target listed no processors: {_last_line(res)}")
    return tuple(cpus)


def _last_line(res: subprocess.CompletedProcess) -> str:
    lines = (res.stderr or res.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit status {res.returncode}"


def amd_name(ins: isa_amd.Mfma) -> str:
    """AMD's name of the A type of a CDNA1/2-spelt intrinsic (f32, f16, bf16, f64)."""
    return "bf16" if ins.kind.startswith("bf16") else ins.kind


def intrinsic(ins: isa_amd.Mfma) -> str:
    """The LLVM intrinsic of an instruction. xf32 and fp8/bf8 (CDNA3 only) keep
    their CDNA3 spelling; the others are named as CDNA1/2 spell them, a bf16
    operand of four elements a lane being the ``_1k`` form."""
    if ins.kind in ("xf32", "fp8"):
        return "llvm.amdgcn.mfma." + ins.suffix.replace("_", ".")
    d = "f64" if ins.kind == "f64" else "f32"
    onek = ".1k" if ins.kind.startswith("bf16") and ins.a_per_lane == 4 else ""
    return f"llvm.amdgcn.mfma.{d}.{ins.m}x{ins.n}x{ins.k}{amd_name(ins)}{onek}"


def _vector(element: str, n: int) -> str:
    return element if n == 1 else f"<{n} x {element}>"


def operand_types(ins: isa_amd.Mfma) -> tuple[str, str]:
    """LLVM's types of one lane's A (= B) and C (= D) operands."""
    ab = _PACKED_8BIT if ins.kind == "fp8" else _vector(_ELEMENT[ins.a_type], ins.a_per_lane)
    return ab, _vector(_ELEMENT[ins.d_type], ins.d_per_lane)


def symbol(ins: isa_amd.Mfma) -> str:
    return f"mfma_{ins.suffix}"


def kernel_ir(ins: isa_amd.Mfma) -> str:
    """One kernel: D = mfma(A, B, C) with A, B, C loaded from and D stored to global memory."""
    ab, cd = operand_types(ins)
    name = intrinsic(ins)
    return (f"declare {cd} @{name}({ab}, {ab}, {cd}, i32, i32, i32)\n"
            f"define amdgpu_kernel void @{symbol(ins)}(ptr addrspace(1) %pa, ptr addrspace(1) %pb, "
            f"ptr addrspace(1) %pc) {{\n"
            f"  %a = load {ab}, ptr addrspace(1) %pa\n"
            f"  %b = load {ab}, ptr addrspace(1) %pb\n"
            f"  %c = load {cd}, ptr addrspace(1) %pc\n"
            f"  %d = call {cd} @{name}({ab} %a, {ab} %b, {cd} %c, i32 0, i32 0, i32 0)\n"
            f"  store {cd} %d, ptr addrspace(1) %pc\n"
            f"  ret void\n}}\n")


def module_ir(instrs: list[isa_amd.Mfma]) -> str:
    return f'target triple = "{TRIPLE}"\n\n' + "\n".join(kernel_ir(i) for i in instrs)


def compile_asm(cpu: str, instrs: list[isa_amd.Mfma]) -> tuple[str, dict[str, str]]:
    """The assembly of all ``instrs`` on ``cpu``, and the instructions (by
    suffix) whose intrinsic LLVM refused to select there, with its message."""
    todo, refused = list(instrs), {}
    while todo:
        res = _worker(["asm", cpu], module_ir(todo))
        if res.returncode == 0:
            return res.stdout, refused
        m = _REFUSED.search(res.stderr)
        gone = [i for i in todo if m and intrinsic(i) == m.group(1)]
        if not gone:
            raise AmdgpuError(f"LLVM could not compile the {cpu} module: {_last_line(res)}")
        for i in gone:
            refused[i.suffix] = f"LLVM cannot select {m.group(1)} for {cpu}"
        todo = [i for i in todo if i not in gone]
    return "", refused


def kernel_ops(asm: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each kernel's matrix opcodes (v_mfma, v_smfmac) and FMA/dot opcodes, in order."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    cur = None
    for line in asm.splitlines():
        lab = _LABEL.match(line)
        if lab:
            name = lab.group(1)
            cur = out.setdefault(name, ([], [])) if not name.startswith(".") else None
            continue
        if line.lstrip().startswith(".Lfunc_end"):
            cur = None
        elif cur is not None:
            for ops, rx in zip(cur, (_MATRIX_OP, _FMA_OP), strict=True):
                m = rx.match(line)
                if m:
                    ops.append(m.group(1))
    return out


@dataclass
class Verdict:
    instruction: str  # v_mfma_f32_16x16x16_f16
    arch: str  # CDNA3
    target: str  # gfx942
    intrinsic: str
    expected: str
    found: list[str]
    status: str  # ok | emulated | missing
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.status != "ok"

    def as_dict(self) -> dict:
        return asdict(self)


def judge(ins: isa_amd.Mfma, target: str, ops: tuple[list[str], list[str]] | None,
          refused: str | None) -> Verdict:
    """One kernel's verdict: ok when its assembly has the instruction's own
    v_mfma; emulated when it computes without one (FMAs or dots); missing else."""
    expected = ins.name
    v = Verdict(expected, ins.arch, target, intrinsic(ins), expected, [], "missing")
    if refused:
        v.note = refused
        return v
    if ops is None:
        v.note = f"kernel {symbol(ins)} is not in the {target} assembly"
        return v
    matrix, fmas = ops
    v.found = list(dict.fromkeys(matrix))
    if expected in matrix:
        v.status = "ok"
    elif not matrix and fmas:
        v.status, v.note = "emulated", "no v_mfma: " + ", ".join(
            f"{op} x{fmas.count(op)}" for op in dict.fromkeys(fmas))
    else:
        v.note = "a different v_mfma" if matrix else "no matrix instruction"
    return v


@dataclass
class TargetReport:
    target: str  # gfx942
    arch: str  # CDNA3
    llvm: str
    asm_sha256: str
    compile_s: float
    verdicts: list[Verdict] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["verdicts"] = [v.as_dict() for v in self.verdicts]
        return d


def resolve(name: str) -> str:
    """The generation (CDNA1/2/3) of a gfx target, a generation or a GPU name;
    ValueError (isa_amd.MfmaError) naming the known ones."""
    key = name.strip()
    by_target = {t: a for a, t in isa_amd.GFX.items()}
    arch = by_target.get(key.lower()) or isa_amd.GPU_ARCH.get(key.upper()) or key.upper()
    if arch not in isa_amd.MFMA:
        raise isa_amd.MfmaError(f"not an AMD target with v_mfma in the ISA table: {name!r} (known: "
                                f"{', '.join(isa_amd.GFX.values())}; or {', '.join(isa_amd.ARCHS)}, "
                                f"{', '.join(isa_amd.GPU_ARCH)})")
    return arch


def check_target(name: str) -> TargetReport:
    """Compile every v_mfma of the generation of ``name`` for its gfx target and judge each."""
    arch = resolve(name)
    target = isa_amd.GFX[arch]
    if target not in known_cpus():
        raise AmdgpuError(f"llvmlite's LLVM {llvm_version()} does not know {target}")
    instrs = isa_amd.instructions(arch)
    t0 = time.perf_counter()
    asm, refused = compile_asm(target, instrs)
    seconds = time.perf_counter() - t0
    m = _TARGET_LINE.search(asm)
    if asm and (not m or m.group(1) != target):
        raise AmdgpuError(f"LLVM compiled for {m.group(1) if m else 'no target'}, not {target}")
    ops = kernel_ops(asm)
    rep = TargetReport(target, arch, llvm_version(), hashlib.sha256(asm.encode()).hexdigest(),
                       round(seconds, 3))
    rep.verdicts = [judge(i, target, ops.get(symbol(i)), refused.get(i.suffix)) for i in instrs]
    return rep
