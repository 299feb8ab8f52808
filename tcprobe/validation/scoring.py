"""Score models against recorded output words: count and describe mismatches."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcprobe.capture import Capture
from tcprobe.models.formats import describe, get_format
from tcprobe.models.model import Model
from tcprobe.models.words import ulps_or_none


@dataclass
class Mismatch:
    index: int
    name: str | None
    a: list[str]
    b: list[str]
    c: str
    device: str
    model: str
    ulps: int | None  # None when a NaN is involved
    scale_a: list[str] | None = None
    scale_b: list[str] | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class ScoreResult:
    capture: str
    label: str
    gpu: str | None
    datapath: str
    input_format: str
    output: str
    model: str
    cases: int
    mismatches: int
    simulated: bool = False
    examples: list[Mismatch] = field(default_factory=list)
    mismatch_index: np.ndarray | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {
            "capture": self.capture, "label": self.label, "gpu": self.gpu,
            "datapath": self.datapath, "format": self.input_format, "output": self.output,
            "model": self.model, "cases": self.cases, "mismatches": self.mismatches,
            "simulated": self.simulated, "examples": [m.as_dict() for m in self.examples],
        }


def _hex(fmt, words) -> list[str]:
    f = get_format(fmt)
    return [f"0x{int(w) & f.word_mask:0{f.hex_digits}x}" for w in np.ravel(words)]


def mismatch_details(cap_dp, cases, idx, device_words, model_words, names=None) -> list[Mismatch]:
    """Readable records of the cases at ``idx``."""
    out_fmt = get_format(cap_dp.d_type)
    out = []
    for i in idx:
        i = int(i)
        dw, mw = int(device_words[i]), int(model_words[i])
        out.append(Mismatch(
            index=i,
            name=names[i] if names else None,
            a=_hex(cap_dp.a_type, cases.a[i]), b=_hex(cap_dp.b_type, cases.b[i]),
            c=_hex(cap_dp.c, [cases.c[i]])[0],
            device=describe(out_fmt, dw), model=describe(out_fmt, mw),
            ulps=ulps_or_none(out_fmt, mw, dw),
            scale_a=None if cases.scale_a is None else _hex(cap_dp.scale_type, cases.scale_a[i]),
            scale_b=None if cases.scale_b is None else _hex(cap_dp.scale_type, cases.scale_b[i]),
        ))
    return out


def score(capture: Capture, model: Model, examples: int = 3) -> ScoreResult:
    """Mismatches of ``model`` on ``capture`` (words compared bit for bit)."""
    words = model.evaluate(capture.cases)
    bad = np.flatnonzero(words != capture.words)
    dp = capture.datapath
    names = capture.cases.names
    return ScoreResult(
        capture=capture.source, label=capture.label, gpu=capture.gpu, datapath=dp.id,
        input_format=dp.a_type if dp.a_type == dp.b_type else f"{dp.a_type}x{dp.b_type}",
        output=dp.d_type, model=model.name, cases=len(capture), mismatches=len(bad),
        simulated=bool(capture.meta.get("simulated", False)),
        examples=mismatch_details(dp, capture.cases, bad[:examples], capture.words, words, names),
        mismatch_index=bad,
    )
