"""Replay a capture: run its recorded inputs on a device, compare the words.

A published capture holds the inputs a GPU saw and the words it wrote. A
replay sends the same inputs through a device (the real instruction with
``--device cuda``, or a model with ``--device sim:NAME``) and counts the cases
where the device's word differs from the recorded one.

Two harness facts decide which instruction a published capture is replayed
on (``../shared/hwdata/README.md``): the authors captured fp16, bf16 and tf32
through ``wmma``, which compiles to the ``mma.sync`` datapath on every GPU,
and the H100/H200 fp8 files through WGMMA with C = 0. K shorter than the
harness's instruction K (tf32 files hold 4 products, ``mma`` tf32 takes 8)
is padded with +0 products, which add nothing to a fixed-point sum.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from tcprobe.capture import Capture
from tcprobe.devices.base import Device
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, default_datapath
from tcprobe.validation.scoring import mismatch_details


@dataclass
class ReplayResult:
    label: str
    source: str
    gpu: str | None
    recorded_datapath: str
    datapath: str  # what the device ran
    device: str
    cases: int
    mismatches: int = 0
    notes: list[str] = field(default_factory=list)
    examples: list = field(default_factory=list)
    skipped: str | None = None

    @property
    def agree(self) -> int:
        return self.cases - self.mismatches

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["examples"] = [m.as_dict() for m in self.examples]
        d["agree"] = self.agree
        return d


PADDED = ("mma", "wgmma")  # families whose captures replay on the harness's instruction K


def replay_datapath(cap: Capture, family: str | None = None) -> tuple[Datapath, list[str]]:
    """The datapath a capture is replayed on, and why."""
    dp, notes = cap.datapath, []
    fam = family
    if fam is None and dp.family == "wgmma" and "c_note" in cap.meta:
        notes.append(f"{cap.meta['c_note']}: replayed on wgmma")
    if fam and fam != dp.family:
        base = default_datapath(fam, dp.a_type, dp.d_type)
        dp = replace(base, k=max(base.k, dp.k))
    else:
        # mma and wgmma captures may hold fewer products than the instruction takes;
        # a tcgen05 or v_mfma id names its instruction's own K (nothing to pad)
        k = default_datapath(dp.family, dp.a_type, dp.d_type).k if dp.family in PADDED else dp.k
        if k > dp.k:
            dp = dp.with_k(k)
    if dp.k != cap.datapath.k:
        notes.append(f"K={cap.datapath.k} padded with +0 products to the instruction's K={dp.k}")
    return dp, notes


def pad_cases(cases: Cases, k: int) -> Cases:
    """The cases with +0 words appended to A and B up to K = ``k``."""
    if cases.k == k:
        return cases
    if cases.k > k:
        raise ValueError(f"cases have K={cases.k}, more than the instruction's K={k}")
    pad = np.zeros((len(cases), k - cases.k), cases.a.dtype)
    active = None if cases.active is None else np.hstack([cases.active, np.zeros_like(pad, bool)])
    return Cases(np.hstack([cases.a, pad]), np.hstack([cases.b, pad]), cases.c, cases.scale_a,
                 cases.scale_b, active, cases.names)


def replay(cap: Capture, device: Device, family: str | None = None, limit: int | None = None,
           show: int = 5) -> ReplayResult:
    """Run ``cap``'s cases on ``device`` and compare with the recorded words."""
    dp, notes = replay_datapath(cap, family)
    n = len(cap) if limit is None else min(limit, len(cap))
    res = ReplayResult(cap.label or cap.source, cap.source, cap.gpu, cap.datapath.id, dp.id,
                       device.name, n, notes=notes)
    if not device.supports(dp):
        res.skipped = f"{device.name} does not run {dp.id}"
        return res
    cases = cap.cases if n == len(cap) else cap.cases.take(np.arange(n))
    recorded = cap.words[:n]
    got = np.asarray(device.run(dp, pad_cases(cases, dp.k))).astype(recorded.dtype, copy=False)
    bad = np.flatnonzero(got != recorded)
    res.mismatches = int(len(bad))
    if len(bad) and show:
        res.examples = mismatch_details(cap.datapath, cases, bad[:show], recorded, got, cases.names)
    return res
