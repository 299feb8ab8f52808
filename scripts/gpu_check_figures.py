"""The key figure of one gpu-check step, read from the JSON that step wrote.

    python3 scripts/gpu_check_figures.py KIND JSON [LOG]

KIND: arch (the harness arch of the first GPU in a devices JSON), devices,
sass, replay, ladder, validate, smoke, library (a torch_gemm fits.json). Prints one line with no tabs; where
the JSON is missing or unreadable, the last ``error:`` line of LOG (or its
last line) instead. Never fails: a figure is evidence, not a verdict.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _devices(d: dict) -> str:
    gpus = [r for r in d.get("devices", []) if r.get("kind") == "GPU"]
    if not gpus:
        return f"no GPU: {d.get('gpu_note') or 'none found'}"
    parts = []
    for r in gpus:
        drv = ", ".join(x for x in (f"driver {r['driver_version']}" if r.get("driver_version") else "",
                                    f"CUDA {r['driver_cuda_version']}" if r.get("driver_cuda_version") else "")
                        if x)
        parts.append(f"{r['device']} {r['name']} cc {r.get('compute_capability', '?')} "
                     f"{r.get('arch', '-')}" + (f" ({drv})" if drv else "")
                     + (" STAND-IN DRIVER" if r.get("stand_in_driver") else ""))
    return "; ".join(parts)


def _sass(d: dict) -> str:
    s = d.get("summary", {})
    opcodes = sorted({op.split(".")[0] for a in d.get("archs", []) for v in a.get("verdicts", [])
                      for op in v.get("found", []) or []})
    archs = ",".join(a.get("arch", "?") for a in d.get("archs", []))
    return (f"{archs}: {s.get('ok', 0)} ok, {s.get('emulated', 0)} emulated, {s.get('missing', 0)} missing; "
            f"{' '.join(opcodes)}; NVRTC {d.get('nvrtc')}, nvdisasm {d.get('nvdisasm')}")


def _replay(d: dict) -> str:
    rs = d.get("results", [])
    ran = [r for r in rs if not r.get("skipped")]
    cases = sum(r["cases"] for r in ran)
    bad = sum(r["mismatches"] for r in ran)
    out = f"{cases:,} cases of {len(ran)} captures, {bad:,} differ"
    worst = [f"{r['label']} {r['mismatches']:,}" for r in ran if r["mismatches"]]
    if worst:
        out += " (" + ", ".join(worst) + ")"
    if len(ran) < len(rs):
        out += f"; {len(rs) - len(ran)} skipped"
    return out


def _ladder(d: dict) -> str:
    fp = d.get("fingerprint") or {}
    v = d.get("validation") or {}
    failed = [s.get("name", "?") for s in d.get("steps", []) if s.get("status") == "failed"]
    out = f"{d.get('datapath')}: F={fp.get('window_bits')} L={fp.get('block_size')} " \
          f"floor={fp.get('zero_floor')} {fp.get('output_rounding')}"
    if v:
        out += f"; model {v.get('mismatches', '?'):,} of {v.get('cases', 0):,} differ"
    if failed:
        out += f"; failed steps: {', '.join(failed)}"
    return out


def _validate(d: dict) -> str:
    models = d.get("models", [])
    rate = d.get("cases_per_second")
    scored = ", ".join(f"{m['name']} {m['mismatches']:,}" for m in models)
    return (f"{d.get('datapath')}: {d.get('cases', {}).get('run', 0):,} cases, mismatches {scored}"
            + (f"; {rate:,} cases/s" if rate else ""))


def _smoke(d: dict) -> str:
    steps = d.get("steps", [])
    n = {k: sum(s.get("status") == k for s in steps) for k in ("passed", "failed", "skipped")}
    bad = [f"{s['name']}: {s.get('detail', '')}" for s in steps if s.get("status") == "failed"]
    return f"{len(steps)} steps: {n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped" + \
        (f" ({'; '.join(bad)})" if bad else "")


def _schedule_text(s: dict) -> str:
    """The axes of a schedule dict that differ from the cuBLAS-like default."""
    default = {"instr": None, "acc": None, "k_block": None, "k_order": "forward", "split_k": 1,
               "split_kind": "serial", "reduction": "forward", "promote": None,
               "c": "epilogue", "fused": True, "out": None, "saturate": None}
    diff = [f"{k}={v}" for k, v in s.items() if k in default and default[k] != v]
    return ",".join(diff) or "cublas"


def _library(fits: list) -> str:
    bounds = [f["bounds"] for f in fits if "bounds" in f]
    fits = [f for f in fits if "bounds" not in f]
    done = [f for f in fits if "error" not in f]
    good = [f for f in done if f.get("explained")]
    out = f"{len(good)} of {len(fits)} library calls explained"
    if bounds:
        out += f" (splits start at K = {', '.join(map(str, bounds[0])) or 'none'})"
    ops = {}
    for f in good:
        ops.setdefault(f["op"], set()).add(_schedule_text(f["schedules"][0]) if f["schedules"]
                                           else "?")
    if ops:
        out += "; " + "; ".join(f"{op}: {' | '.join(sorted(v))}" for op, v in sorted(ops.items()))
    bad = [f"{f['case']}.{f['op']} {f.get('mismatches', '?')} of {f.get('elements', '?')}"
           for f in done if not f.get("explained")]
    if bad:
        out += "; not explained: " + ", ".join(bad)
    return out


def _arch(d: dict) -> str:
    for r in d.get("devices", []):
        if r.get("kind") == "GPU" and str(r.get("arch", "")).startswith("sm_"):
            return r["arch"]
    return ""


KINDS = {"arch": _arch, "devices": _devices, "sass": _sass, "replay": _replay, "ladder": _ladder,
         "validate": _validate, "smoke": _smoke, "library": _library}


def last_error(log: str | None) -> str:
    """The last 'error:' line of a log, else its last non-empty line."""
    if not log or not Path(log).is_file():
        return "no output"
    lines = [x.strip() for x in Path(log).read_text(errors="replace").splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error:")]
    return (errors or lines or ["no output"])[-1]


def figure(kind: str, json_path: str, log: str | None = None) -> str:
    try:
        data = json.loads(Path(json_path).read_text())
        text = KINDS[kind](data)
    except Exception:
        text = "" if kind == "arch" else last_error(log)
    return " ".join(text.replace("\t", " ").split())[:400]


if __name__ == "__main__":
    args = sys.argv[1:]
    print(figure(args[0], args[1], args[2] if len(args) > 2 else None) if len(args) >= 2 else "")
