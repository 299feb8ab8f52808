"""TCPROBE_KERNEL=plain (models/numba_internals.py) runs every path on the
plain numba kernels: the same words as the hand-written IR kernels, the IR
modules never imported, and a misspelt value is one error line."""

import os
import subprocess
import sys

import numpy as np
import pytest
from tcgen05_gen import random_cases

from tcprobe.models import numba_internals
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, fused_dot
from tcprobe.models.formats import get_format
from tcprobe.models.kernels.kernel_params import kernel_params
from tcprobe.models.kernels.scaled_kernel import kernel_params as scaled_kernel_params
from tcprobe.models.tcgen05_scaled import BlockScaledModel, ScaledParams

# 1 x 1 - 1 x 1 + 2^-30 x 1 with C = +0: the 2^-30 product lies 30 bits below
# the anchor (2^0), outside a 25-bit window, so it is cut and D = +0, where an
# exact sum would give 2^-30 (f32 0x30800000).
ONE_BF16, MINUS_ONE_BF16, TINY_BF16 = 0x3F80, 0xBF80, 0x3080  # 1.0, -1.0, 2^-30

def raw_cases(dp: Datapath, n: int, seed: int) -> Cases:
    """Random raw words of every input format (specials included)."""
    rng = np.random.default_rng(seed)

    def raw(t, shape):
        return rng.integers(0, get_format(t).word_mask + 1, shape,
                            dtype=np.uint64).astype(np.uint32)

    return Cases(raw(dp.a_type, (n, dp.k)), raw(dp.b_type, (n, dp.k)), raw(dp.c, n))


PLAIN_DATAPATHS = {
    "mma bf16": Datapath("mma", "bf16", "bf16", "bf16", "f32", 16),
    "mma tf32": Datapath("mma", "tf32", "tf32", "tf32", "f32", 8),
    "mma e4m3": Datapath("mma", "e4m3", "e4m3", "e4m3", "f32", 32),
    "tcgen05 e5m2 x e2m1": Datapath("tcgen05", "f8f6f4", "e5m2", "e2m1", "f16", 32),
}


@pytest.mark.parametrize("name", sorted(PLAIN_DATAPATHS))
def test_plain_switch_gives_the_ir_words(name, monkeypatch):
    """The lane kernel runs by default and the plain kernel under
    TCPROBE_KERNEL=plain, on the same words."""
    dp = PLAIN_DATAPATHS[name]
    cases = raw_cases(dp, 3000, 11)
    params = EngineParams(window_bits=25)
    monkeypatch.delenv(numba_internals.KERNEL_ENV, raising=False)
    lanes = numba_internals.ir_module("lane_kernel")
    assert lanes is not None and lanes.applies(kernel_params(dp, params, dp.k))
    ir_words = fused_dot(dp, cases, params, fast=True)
    monkeypatch.setenv(numba_internals.KERNEL_ENV, "plain")
    assert numba_internals.ir_module("lane_kernel") is None
    plain_words = fused_dot(dp, cases, params, fast=True)
    assert np.array_equal(ir_words, plain_words)


def test_plain_switch_on_the_grouped_scaled_kernel(monkeypatch):
    """The block-scaled grouped kernel (scaled_groups, hand-written IR) and
    the plain scaled kernel agree on mxf4 cases with random scales."""
    dp = Datapath.parse("tcgen05.mxf4.e2m1.f32.k64.ue8m0x2")
    params = ScaledParams(product_window=None, c_window=35, scale_window=35, q_floor=-174,
                          product_group=16)
    model = BlockScaledModel("grouped", dp, "", params)
    cases = random_cases(dp, 2000, "raw", seed=5)
    monkeypatch.delenv(numba_internals.KERNEL_ENV, raising=False)
    groups = numba_internals.ir_module("scaled_groups")
    assert groups is not None and groups.applies(scaled_kernel_params(dp, params))
    ir_words = model.evaluate(cases)
    monkeypatch.setenv(numba_internals.KERNEL_ENV, "plain")
    plain_words = model.evaluate(cases)
    assert np.array_equal(ir_words, plain_words)


def test_window_cut_bits_under_both_forms(monkeypatch):
    """1 - 1 + 2^-30 (+ zeros) with C = +0 on the bf16 datapath, 25-bit
    window: the 2^-30 product is cut below the window, D = +0 under either
    kernel form; with no window (exact) it survives as 2^-30."""
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
    a = np.zeros((1, 16), np.uint32)
    b = np.zeros((1, 16), np.uint32)
    a[0, :3] = (ONE_BF16, MINUS_ONE_BF16, TINY_BF16)
    b[0, :3] = ONE_BF16
    cases = Cases(a, b, np.zeros(1, np.uint32))
    for form in ("ir", "plain"):
        monkeypatch.setenv(numba_internals.KERNEL_ENV, form)
        assert int(fused_dot(dp, cases, EngineParams(window_bits=25), fast=True)[0]) == 0
        assert int(fused_dot(dp, cases, EngineParams(window_bits=None), fast=True)[0]) == 0x30800000


def test_misspelt_switch_is_one_error_line(monkeypatch):
    monkeypatch.setenv(numba_internals.KERNEL_ENV, "fast")
    with pytest.raises(numba_internals.KernelSwitchError, match="TCPROBE_KERNEL='fast'"):
        numba_internals.kernel_form()
    r = subprocess.run([sys.executable, "-m", "tcprobe", "validate", "--format", "bf16", "--cases", "200"],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, numba_internals.KERNEL_ENV: "fast"})
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: TCPROBE_KERNEL='fast'"), r.stderr
    assert "Traceback" not in r.stderr


def test_plain_never_imports_the_ir(tmp_path):
    """With the IR modules made unimportable (as a newer llvmlite that cannot
    build them would be), TCPROBE_KERNEL=plain still evaluates the lane
    kernel's and the grouped kernel's datapaths."""
    script = (
        "import sys\n"
        "for m in ('lanes_ir', 'vector_ir', 'groups_ir', 'lane_kernel', 'scaled_groups'):\n"
        "    sys.modules['tcprobe.models.kernels.' + m] = None\n"
        "import numpy as np\n"
        "from tcprobe.models.cases import Cases\n"
        "from tcprobe.models.datapath import Datapath\n"
        "from tcprobe.models.engine import EngineParams, fused_dot\n"
        "dp = Datapath('mma', 'bf16', 'bf16', 'bf16', 'f32', 16)\n"
        "a = np.full((4, 16), 0x3F80, np.uint32)\n"
        "out = fused_dot(dp, Cases(a, a, np.zeros(4, np.uint32)), EngineParams(window_bits=25),"
        " fast=True)\n"
        "print(hex(int(out[0])))\n")
    env = {**os.environ, numba_internals.KERNEL_ENV: "plain"}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=600, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "0x41800000"  # 16 x (1.0 x 1.0) = 16.0


def test_numba_internals_wrapper():
    """The named internals work on this numba: a compile event reaches the
    listener, and an intrinsic is declared once per module."""
    from llvmlite import ir
    from numba import njit

    seen = []
    numba_internals.on_compile_start(lambda: seen.append(1))

    @njit
    def twice(x):
        return 2 * x

    assert twice(21) == 42 and seen
    module = ir.Module()
    fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32)])
    first = numba_internals.declared_function(module, fnty, "llvm.ctpop.i32")
    assert numba_internals.declared_function(module, fnty, "llvm.ctpop.i32") is first
    assert str(module).count("declare i32 @\"llvm.ctpop.i32\"") == 1
