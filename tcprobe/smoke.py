"""The smoke run for CI on GPU runners: one short check that a device still
computes the way its profile says.

Steps, each with a status (passed, failed, skipped) and its evidence:

1. ``sass``: the SASS check of every harness for the device's architecture
   (skipped where no architecture is known, or NVRTC is not installed);
2. ``ladder:<family>``: the probe ladder on one format per family the device
   runs; passes when no step fails and the fingerprint's model matches the
   device on its validation cases;
3. ``validate:<family>``: the default suites, ``cases`` cases, against the
   device's own profile (``--model auto``); passes with 0 mismatches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from tcprobe.devices.base import Device
from tcprobe.ladder import run_ladder
from tcprobe.models import registry
from tcprobe.models.datapath import FAMILIES, Datapath, default_datapath
from tcprobe.models.formats import get_format
from tcprobe.models.model import ModelError
from tcprobe.models.profiles import profile_for_gpu
from tcprobe.suites import SUITES, Plan
from tcprobe.validation import validate as validate_mod

# The architecture whose harnesses a GPU's datapaths use (the 'a' targets
# carry wgmma and tcgen05).
ARCH_OF_PROFILE = {"sm_90": "sm_90a", "sm_100": "sm_100a"}


@dataclass
class Step:
    name: str
    status: str  # passed | failed | skipped
    detail: str
    seconds: float = 0.0
    data: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "detail": self.detail,
                "seconds": round(self.seconds, 3), **({"data": self.data} if self.data else {})}


@dataclass
class SmokeResult:
    device: dict
    arch: str | None
    steps: list[Step]
    seconds: float

    @property
    def ok(self) -> bool:
        return all(s.status != "failed" for s in self.steps)

    def as_dict(self) -> dict:
        return {"tool": "tcprobe smoke", "ok": self.ok, "simulated": bool(self.device.get("simulated")),
                "device": self.device, "arch": self.arch, "seconds": round(self.seconds, 3),
                "steps": [s.as_dict() for s in self.steps]}


def device_arch(device: Device) -> str | None:
    """The sm_XX the device's harnesses are built for (None when unknown)."""
    info = device.info()
    if info.get("arch"):
        return info["arch"]
    gpu = info.get("gpu")
    if not gpu:
        return None
    try:
        arch = profile_for_gpu(gpu).arch
    except ModelError:
        return None
    return ARCH_OF_PROFILE.get(arch, arch)


def families_of(device: Device, fmt: str) -> list[Datapath]:
    """One datapath per family that the device runs for input format ``fmt``
    (the device's own choice where it makes one: V100's m8n8k4, AMD's v_mfma)."""
    out = []
    chooser = getattr(device, "datapath", None)
    for fam in getattr(device, "families", None) or FAMILIES:
        try:
            dp = chooser(fam, fmt) if chooser else default_datapath(fam, fmt)
        except ValueError:
            continue
        if device.supports(dp):
            out.append(dp)
    return out


def _sass_step(arch: str | None, families: tuple[str, ...]) -> Step:
    t0 = time.perf_counter()
    if arch is None:
        return Step("sass", "skipped", "the device names no architecture to check")
    try:
        from tcprobe.devices.cuda import sass
    except ImportError as e:  # pragma: no cover - sass imports only the optional wheels lazily
        return Step("sass", "skipped", f"SASS check unavailable: {e}")
    try:
        rep = sass.check_arch(arch, families)
    except (RuntimeError, OSError, ValueError) as e:
        return Step("sass", "skipped", f"SASS check unavailable here: {e}", time.perf_counter() - t0)
    missing = [v for v in rep.verdicts if v.status == "missing"]
    counts = {s: sum(v.status == s for v in rep.verdicts) for s in ("ok", "emulated", "missing")}
    detail = (f"{arch}: {counts['ok']} native, {counts['emulated']} emulated (flagged), "
              f"{counts['missing']} missing")
    if missing:
        detail += "; missing: " + ", ".join(f"{v.harness} (expected {v.expected})" for v in missing[:4])
    return Step("sass", "failed" if missing else "passed", detail, time.perf_counter() - t0,
                {"cubin_sha256": rep.cubin_sha256, **counts})


def _ladder_step(device: Device, dp: Datapath, seed: int) -> Step:
    t0 = time.perf_counter()
    res = run_ladder(device, dp, validate_cases=10_000, seed=seed)
    failed = [f.step for f in res.findings if f.status == "failed"]
    v = res.validation
    fp = res.fingerprint.as_dict() if res.fingerprint is not None else None
    integer = get_format(dp.a_type).kind.name == "INT"  # an exact sum: no fingerprint keys
    if failed:
        status, detail = "failed", f"steps failed: {', '.join(failed)}"
    elif integer and v is not None and not v.mismatches:
        status, detail = "passed", (f"{dp.id}: an integer product (the exact sum: no "
                                    f"fingerprint keys); model 0 mismatches on {v.cases:,}")
    elif v is None or fp is None:
        status, detail = "failed", "no fingerprint was built"
    elif v.mismatches:
        status, detail = "failed", f"fingerprint's model mismatches {v.mismatches:,} of {v.cases:,}"
    else:
        keys = ("window_bits", "block_size", "zero_floor", "output_rounding")
        short = ", ".join(f"{k}={fp[k]}" for k in keys)
        if fp.get("mfma"):  # an AMD v_mfma: its design, not the engine keys (which do not apply)
            short = ", ".join(f"{k}={v}" for k, v in fp["mfma"].items())
        status, detail = "passed", f"{dp.id}: {short}; model 0 mismatches on {v.cases:,}"
    return Step(f"ladder:{dp.family}", status, detail, time.perf_counter() - t0,
                {"datapath": dp.id, "fingerprint": fp,
                 "validation": None if v is None else v.as_dict()})


def _validate_step(device: Device, dp: Datapath, cases: int, seed: int) -> Step:
    t0 = time.perf_counter()
    gpu = device.info().get("gpu")
    try:
        model = registry.auto(dp, gpu)
    except ModelError as e:
        return Step(f"validate:{dp.family}", "skipped", f"no profile to validate against: {e}")
    result = validate_mod.run(dp, device, [model], Plan(SUITES, cases), seed, capture=None)
    bad = result.primary.total
    caught = ", ".join(result.primary.caught_by())
    detail = f"{dp.id}: {model.name} {bad:,} mismatches of {result.cases_run:,}"
    if bad:
        detail += f" (caught by {caught})"
    return Step(f"validate:{dp.family}", "failed" if bad else "passed", detail,
                time.perf_counter() - t0, {"datapath": dp.id, "model": model.name,
                                            "cases": result.cases_run, "mismatches": bad,
                                            "by_suite": dict(result.primary.by_suite)})


def run_smoke(device: Device, *, fmt: str = "bf16", cases: int = 10_000, seed: int = 0,
              sass_check: bool = True, on_step=None) -> SmokeResult:
    """The smoke run on ``device`` (see the module doc)."""
    t0 = time.perf_counter()
    dps = families_of(device, fmt)
    arch = device_arch(device)
    steps: list[Step] = []

    def record(step: Step):
        steps.append(step)
        if on_step:
            on_step(step)

    if not dps:
        record(Step("datapaths", "failed", f"{device.name} runs no {fmt} datapath"))
    if sass_check:
        record(_sass_step(arch, tuple(dp.family for dp in dps) or None))
    for dp in dps:
        record(_ladder_step(device, dp, seed))
        record(_validate_step(device, dp, cases, seed))
    return SmokeResult(device.info(), arch, steps, time.perf_counter() - t0)
