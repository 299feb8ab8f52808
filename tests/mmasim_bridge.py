"""Run tcprobe Cases through MMA-Sim 2.1.1 (the peer simulator), word in, word out.

MMA-Sim takes torch tensors of values: f32/tf32, f16, bf16, fp8 and the
scales as their torch dtypes (bit-identical views of our words); fp6 codes
one per byte in bits 5:0 and e2m1 in bits 5:2 (its fp6/fp4 convention);
the packed mxf4 kinds as float16 values (exact). Only test code uses this."""

from __future__ import annotations

import numpy as np

from tcprobe.models.formats import decode

torch = None


def _torch():
    global torch
    if torch is None:
        import torch as _t

        torch = _t
    return torch


def _view(words: np.ndarray, fmt: str):
    t = _torch()
    w = np.ascontiguousarray(words)
    if fmt in ("f32", "tf32"):
        return t.from_numpy(w.astype(np.uint32).view(np.int32).copy()).view(t.float32)
    if fmt in ("f16", "bf16"):
        x = t.from_numpy(w.astype(np.uint16).view(np.int16).copy())
        return x.view(t.float16 if fmt == "f16" else t.bfloat16)
    u8 = t.from_numpy(w.astype(np.uint8).copy())
    if fmt == "e4m3":
        return u8.view(t.float8_e4m3fn)
    if fmt == "e5m2":
        return u8.view(t.float8_e5m2)
    if fmt == "ue8m0":
        return u8.view(t.float8_e8m0fnu)
    if fmt == "ue4m3":
        return u8.view(t.float8_e4m3fn)
    if fmt in ("e2m3", "e3m2"):
        return u8
    if fmt == "e2m1":
        return t.from_numpy((w.astype(np.uint8) << 2).copy())
    raise ValueError(fmt)


def _e2m1_values(words: np.ndarray):
    d = decode("e2m1", words)
    v = np.where(d.sign == 1, -1.0, 1.0) * d.sig.astype(np.float64) * np.exp2(d.lsb)
    return _torch().from_numpy(v.astype(np.float16))


def _words(out, d_type: str) -> np.ndarray:
    t = _torch()
    if d_type == "f16":
        return (out.view(t.int16).numpy().astype(np.int64) & 0xFFFF).astype(np.uint32)
    return out.view(t.int32).numpy().view(np.uint32)


def shape_and_type(dp) -> str:
    """MMA-Sim's name of datapath ``dp`` (ValueError where it has none)."""
    if dp.sparse or dp.family != "tcgen05" or dp.kind == "i8":
        raise ValueError(f"MMA-Sim 2.1.1 has no {dp.id}")
    if not dp.block_scaled:
        m, k = 64, dp.k
        return f"m{m}n8k{k}.kind::{dp.kind}.{dp.d_type}.{dp.a_type}.{dp.b_type}"
    block = dp.scale_block
    return (f"m128n8k{dp.k}.kind::{dp.kind}.block{block}.{dp.d_type}.{dp.a_type}.{dp.b_type}."
            f"{dp.scale_type}")


def run(dp, cases) -> np.ndarray:
    """MMA-Sim's output words for every case of ``cases``."""
    from mmasim.nv_ptx import TCGen05MMA, TCGen05MMABlockScale

    name = shape_and_type(dp)
    c = _view(cases.c, dp.c)
    if not dp.block_scaled:
        sim = TCGen05MMA("Blackwell", name)
        out = sim.dpa(_view(cases.a, dp.a_type), _view(cases.b, dp.b_type), c)
        return _words(out, dp.d_type)
    sim = TCGen05MMABlockScale("Blackwell", name)
    if dp.kind == "mxf8f6f4":
        a, b = _view(cases.a, dp.a_type), _view(cases.b, dp.b_type)
    else:
        a, b = _e2m1_values(cases.a), _e2m1_values(cases.b)
    sa, sb = _view(cases.scale_a, dp.scale_type), _view(cases.scale_b, dp.scale_type)
    return _words(sim.dpa(a, b, c, sa, sb), dp.d_type)
