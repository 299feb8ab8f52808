"""The fast engine against the peer simulator, MMA-Sim 2.1.1 (skipped where
it is not installed): the same words on random raw bf16 and f16 cases."""

import numpy as np
import pytest

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.profiles import PROFILES

pytestmark = [pytest.mark.peer, pytest.mark.usefixtures("mmasim_peer")]


@pytest.mark.parametrize("fmt,tdtype", [("bf16", "bfloat16"), ("f16", "float16")])
def test_hopper_words_agree(fmt, tdtype):
    import torch
    from mmasim.nv_ptx import MMA

    tdtype = getattr(torch, tdtype)

    n = 5000
    rng = np.random.default_rng(17)
    a = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    b = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    peer = MMA("Hopper", f"m16n8k16.f32.{fmt}.{fmt}.f32")
    view = lambda x: torch.from_numpy(x.astype(np.uint16).view(np.int16)).view(tdtype)  # noqa: E731
    d = peer.dpa(view(a), view(b), torch.from_numpy(c.view(np.int32)).view(torch.float32))
    theirs = d.view(torch.int32).numpy().view(np.uint32)
    dp = Datapath("mma", fmt, fmt, fmt, "f32", 16)
    ours = PROFILES["h100"].model(dp).evaluate(Cases(a, b, c))
    assert np.array_equal(ours, theirs), f"{int((ours != theirs).sum())} words differ"
