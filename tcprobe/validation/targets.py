"""The datapaths tcprobe knows how to model, as named targets.

- ``blog``: the 46 B200 datapaths of the tcgen05 write-up's validated suite
  (../shared/seeds/tcgen05-blog.txt, "The full validated suite"), in its
  groups. Two pairs share one arithmetic datapath but were separate hardware
  runners (dense and sparse mxf4nvf4 with ue4m3 scales): they are listed
  twice, as the write-up counts them.
- ``mixed``: every ordered A/B pair of e4m3, e5m2, e2m3, e3m2, e2m1 with an
  f32 or f16 D (50 descriptor-level combinations, one implementation).
- ``hmma``: the mma.sync and wgmma datapaths of the HMMA profiles.
- ``integer``: integer mma.sync (s8/u8, s4/u4, wrapped and .satfinite; b1
  .and/.xor popc) and integer wgmma (s8/u8), each at its largest K.
- ``sparse``: mma.sp (f16, bf16, tf32, e4m3, e5m2, s8, u8, s4, u4) and
  wgmma.sp (f16, bf16, tf32, e4m3, e5m2, s8, u8), each at its largest K.
- ``mma-new``: the mma.sync of Turing (sm_75: m16n8k8, m8n8k4) and RTX
  Blackwell (sm_120a: kind::f8f6f4, the block-scaled kinds), whose profiles
  (t4, rtx5090) are MMA-Sim's parameters.
- ``dmma``: the f64 mma.sync datapaths (m8n8k4 from sm_80; m16n8k8 and
  m16n8k16 from sm_90; m16n8k4 shares K=4 with m8n8k4).
- ``mfma``: AMD's v_mfma datapaths (models/isa_amd.py), each id once per
  CDNA generation that runs it (its design differs by generation: docs/amd.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tcprobe.models import amd_profiles, isa, isa_amd
from tcprobe.models.datapath import Datapath, default_datapath
from tcprobe.models.isa import F8F6F4_TYPES as F8F6F4
from tcprobe.tiles.descriptors import encode

SUITES = ("blog", "mixed", "hmma", "integer", "sparse", "mma-new", "dmma", "mfma")
_UNSCALED = (("tf32", "tf32"), ("f16", "bf16"), ("f16", "f16"), *(("f8f6f4", f) for f in F8F6F4))
_UE8M0 = (*(("mxf8f6f4", f, 1) for f in F8F6F4), ("mxf4", "e2m1", 2),
          ("mxf4nvf4", "e2m1", 2), ("mxf4nvf4", "e2m1", 4))


@dataclass(frozen=True)
class Target:
    suite: str
    group: str
    name: str
    datapath: Datapath
    arch: str

    @property
    def scaling(self) -> str:
        dp = self.datapath
        return f"{dp.scale_type} x{dp.scale_vec} (K/{dp.scale_block})" if dp.block_scaled else "-"

    @property
    def descriptor(self) -> int | None:
        """The idesc word (M64N8; M128N8 for block-scaled kinds); None off tcgen05."""
        return encode(self.datapath) if self.datapath.family == "tcgen05" else None

    def as_dict(self) -> dict:
        dp, d = self.datapath, self.descriptor
        return {"suite": self.suite, "group": self.group, "name": self.name, "datapath": dp.id,
                "family": dp.family, "kind": dp.kind, "a_type": dp.a_type, "b_type": dp.b_type,
                "c_type": dp.c, "d_type": dp.d_type, "k": dp.k, "scale_type": dp.scale_type,
                "scale_vec": dp.scale_vec, "scale_block": dp.scale_block, "sparse": dp.sparse,
                "saturate": dp.saturate, "arch": self.arch,
                "descriptor": None if d is None else f"{d:#010x}"}


def _tc(kind, a, b, d, *, scale=None, vec=None, sparse=False, sat=False) -> Datapath:
    """The tcgen05 datapath of ``kind`` with its one-instruction K (ISA table)."""
    return Datapath("tcgen05", kind, a, b, d, isa.instruction_k("tcgen05", kind, sparse=sparse),
                    scale_type=scale, scale_vec=vec, sparse=sparse, saturate=sat)


def blog_targets() -> list[Target]:
    """The write-up's 46 datapaths, in its order."""
    out = []

    def add(group, name, dp):
        out.append(Target("blog", group, name, dp, "sm_100a"))

    for sparse in (False, True):
        grp = "sparse unscaled float" if sparse else "dense unscaled float"
        for kind, f in _UNSCALED:
            add(grp, f + (" sparse" if sparse else ""), _tc(kind, f, f, "f32", sparse=sparse))
        if not sparse:
            for a in ("u8", "s8"):
                for b in ("u8", "s8"):
                    for sat in (False, True):
                        add("dense integer", f"{a} x {b} {'saturate' if sat else 'wrap'}",
                            _tc("i8", a, b, "s32", sat=sat))
        grp = "sparse ue8m0 block-scaled" if sparse else "dense ue8m0 block-scaled"
        for kind, f, vec in _UE8M0:
            name = f"{kind} {f} x{vec}" + (" sparse" if sparse else "")
            add(grp, name, _tc(kind, f, f, "f32", scale="ue8m0", vec=vec, sparse=sparse))
        nv = _tc("mxf4nvf4", "e2m1", "e2m1", "f32", scale="ue4m3", vec=4, sparse=sparse)
        if sparse:
            add("sparse ue4m3 nvfp4", "nvfp4 sparse", nv)
            add("sparse ue4m3 hybrid", "mxf4nvf4 ue4m3 x4 sparse (hybrid runner)", nv)
        else:
            add("dense ue4m3 nvfp4", "mxf4nvf4 ue4m3 x4", nv)
            add("dense ue4m3 nvfp4", "nvfp4 (separate runner)", nv)
    add("mixed representatives", "e4m3 x e2m1 -> f32", _tc("f8f6f4", "e4m3", "e2m1", "f32"))
    add("mixed representatives", "e2m1 x e4m3 -> f16", _tc("f8f6f4", "e2m1", "e4m3", "f16"))
    return out


def mixed_targets() -> list[Target]:
    """All 50 mixed A/B combinations of kind::f8f6f4."""
    return [Target("mixed", f"mixed -> {d}", f"{a} x {b} -> {d}",
                   _tc("f8f6f4", a, b, d), "sm_100a")
            for d in ("f32", "f16") for a in F8F6F4 for b in F8F6F4]


def hmma_targets() -> list[Target]:
    """mma.sync and wgmma datapaths of the HMMA profiles (f32 output)."""
    out = []
    for fam, fmts, arch in (("mma", ("f16", "bf16", "tf32"), "sm_80"),
                            ("mma", ("e4m3", "e5m2"), "sm_89"),
                            ("wgmma", ("f16", "bf16", "tf32", "e4m3", "e5m2"), "sm_90a")):
        for f in fmts:
            out.append(Target("hmma", f"{fam} {arch}", f"{fam} {f}",
                              default_datapath(fam, f), arch))
    return out


def integer_targets() -> list[Target]:
    """Integer mma.sync and wgmma: wrapped and saturated, b1 both operations."""
    out = []
    for t in ("s8", "u8", *isa.SUBBYTE_INTEGER_TYPES):
        dp = default_datapath("mma", t)
        for sat in (False, True):
            name = f"mma {t} {'satfinite' if sat else 'wrap'}"
            out.append(Target("integer", "mma integer", name, replace(dp, saturate=sat), "sm_80"))
    for op in isa.BIT_OPS:
        dp = replace(default_datapath("mma", "b1"), bitop=op)
        out.append(Target("integer", "mma b1", f"mma b1 {op}.popc", dp, "sm_80"))
    for t in ("s8", "u8"):
        dp = default_datapath("wgmma", t)
        for sat in (False, True):
            name = f"wgmma {t} {'satfinite' if sat else 'wrap'}"
            out.append(Target("integer", "wgmma integer", name, replace(dp, saturate=sat),
                              "sm_90a"))
    return out


def sparse_targets() -> list[Target]:
    """mma.sp and wgmma.sp at their largest K (fp8 mma.sp needs sm_89)."""
    out = []
    for t, ks in isa.MMA_SP_K.items():
        d = isa.output_types("mma", t, t)[0]
        arch = "sm_89" if t in isa.FP8_TYPES else "sm_80"
        out.append(Target("sparse", "mma.sp", f"mma.sp {t}",
                          Datapath("mma", t, t, t, d, max(ks), sparse=True), arch))
    for t in isa.WGMMA_SP_TYPES:
        d = isa.output_types("wgmma", t, t)[0]
        k = isa.instruction_k("wgmma", t, sparse=True)
        out.append(Target("sparse", "wgmma.sp", f"wgmma.sp {t}",
                          Datapath("wgmma", t, t, t, d, k, sparse=True), "sm_90a"))
    return out


def new_mma_targets() -> list[Target]:
    """Turing's f16 shapes and sm_120a's mma.sync kinds (f32 D), from the ISA table."""
    out = [Target("mma-new", "mma sm_75", f"mma f16 m{m}n{n}k{k}",
                  Datapath("mma", "f16", "f16", "f16", "f32", k), "sm_75")
           for m, n, k in isa.ARCH_MMA_SHAPES["sm_75"]["f16"]]
    for kind in isa.MMA_KINDS:
        scales = sorted(isa.MMA_KIND_SCALES.get(kind, ())) or [(None, None)]
        for f in isa.MMA_KIND_INPUT_TYPES[kind]:
            for st, vec in scales:
                name = f"mma kind::{kind} {f}" + (f" {st} x{vec}" if st else "")
                out.append(Target("mma-new", f"mma sm_120a kind::{kind}", name,
                                  Datapath("mma", kind, f, f, "f32", isa.MMA_KIND_K[kind],
                                           scale_type=st, scale_vec=vec), "sm_120a"))
    return out


def dmma_targets() -> list[Target]:
    """The f64 mma.sync datapaths, each K once, on the first GPU harness
    architecture with its shape (ISA table)."""
    out = []
    for m, n, k in isa.F64_SHAPES:
        arch = next(a for a in dict.fromkeys(isa.CC_ARCH.values()) if (m, n, k) in isa.f64_shapes(a))
        dp = Datapath("mma", "f64", "f64", "f64", "f64", k)
        if all(t.datapath != dp for t in out):
            out.append(Target("dmma", f"mma {arch}", f"f64 m{m}n{n}k{k}", dp, arch))
    return out


def mfma_targets() -> list[Target]:
    """AMD's v_mfma datapaths, each id once per generation (the ISA table's
    first instruction of the id names it); arch is the generation."""
    out, seen = [], set()
    for ins in isa_amd.instructions():
        dp = amd_profiles.datapath(ins)
        if (ins.arch, dp.id) not in seen:
            seen.add((ins.arch, dp.id))
            out.append(Target("mfma", f"v_mfma {ins.arch} ({isa_amd.GFX[ins.arch]})", ins.name,
                              dp, ins.arch))
    return out


def target_gpu(t: Target) -> str | None:
    """The GPU whose profile stands for the target's arch (an NVIDIA sm_XX or a
    CDNA generation), None where none does."""
    if t.datapath.family == "mfma":
        return next(iter(isa_amd.ARCH_GPUS.get(t.arch, ())), None)
    return isa.arch_gpu(t.arch)


class TargetsError(ValueError):
    """A suite of targets that does not exist."""


def targets(suites=("blog", "mixed")) -> list[Target]:
    """The targets of the named suites, in order."""
    make = {"blog": blog_targets, "mixed": mixed_targets, "hmma": hmma_targets,
            "integer": integer_targets, "sparse": sparse_targets, "mma-new": new_mma_targets,
            "dmma": dmma_targets, "mfma": mfma_targets}
    unknown = [s for s in suites if s not in make]
    if unknown:
        raise TargetsError(f"unknown suite {unknown[0]!r} (known: {', '.join(SUITES)})")
    return [t for s in suites for t in make[s]()]
