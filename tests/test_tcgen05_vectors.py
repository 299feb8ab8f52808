"""Recorded tcgen05 result words (B200 silicon): the words frozen in the
write-up's release and the MMA-Sim PR vectors, in
tests/data/vectors/tcgen05-b200.jsonl (see make_tcgen05_b200.py)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcprobe.capture import load
from tcprobe.models import registry
from tcprobe.models.tcgen05 import B200_TCGEN05
from tcprobe.models.tcgen05_scaled import BlockScaledModel
from tcprobe.validation.scoring import score

DATA = Path(__file__).parent / "data" / "vectors"
VECTORS = DATA / "tcgen05-b200.jsonl"


def captures():
    return load(VECTORS)


def test_the_data_file_is_what_the_script_writes(tmp_path):
    fresh = tmp_path / "v.jsonl"
    out = subprocess.run([sys.executable, str(DATA / "make_tcgen05_b200.py"), str(fresh)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "64 vectors" in out.stdout
    assert fresh.read_text() == VECTORS.read_text()


def test_every_recorded_word_matches_the_b200_profile():
    caps = captures()
    assert sum(len(c) for c in caps) == 64
    for cap in caps:
        r = score(cap, registry.resolve("auto", cap.datapath, cap.gpu))
        assert r.mismatches == 0, (cap.label, r.examples[:1])


def _case(name):
    for cap in captures():
        names = cap.meta["names"]
        if name in names:
            return cap, names.index(name)
    raise LookupError(name)


def test_k4_carry_vector_needs_the_k4_groups():
    """The write-up's nvfp4-k4-product-carry vector: one internal quantum below
    an f32 boundary; per-product cuts lose the carry."""
    cap, i = _case("nvfp4-k4-product-carry")
    dp = cap.datapath
    one = cap.cases.take([i])
    p = B200_TCGEN05.scaled_params(dp)
    assert BlockScaledModel("b200", dp, "", p).evaluate(one)[0] == cap.words[i] == 0x49FCAFB7
    per_product = BlockScaledModel("k1", dp, "", p.replace(product_group=1)).evaluate(one)[0]
    assert per_product != cap.words[i]


def test_random_vectors_need_the_window_and_truncation():
    """The recorded random words refute the obvious models (window 24 or 26,
    round to nearest) on at least one vector each."""
    from tcprobe.models.model import FixedPointModel

    rejected = {"window 24": 0, "window 26": 0, "rne": 0}
    for cap in captures():
        dp = cap.datapath
        if dp.block_scaled or dp.is_integer or dp.d_type != "f32":
            continue
        base = B200_TCGEN05.engine_params(dp)
        for label, p in (("window 24", base.replace(window_bits=24)),
                         ("window 26", base.replace(window_bits=26)),
                         ("rne", base.replace(output_rounding="rne"))):
            got = FixedPointModel(label, dp, "", p).evaluate(cap.cases)
            rejected[label] += int((got != cap.words).sum())
    assert all(n > 0 for n in rejected.values()), rejected


@pytest.mark.parametrize("name, word", [
    ("pr-f16-zero-accumulator-anchor-2^-21 (tie)", 0x4),
    ("pr-zero-result-bf16 ((1+2^-7)2^-75)^2 - 2^-149", 0x0),
    ("pr-e2m1-subnormal 0.5 x 0.5 - (0.25 - 2^-26)", 0x33000000),
    ("tf32-low-payload-pretruncate", 0x7F800000),
])
def test_named_vectors(name, word):
    cap, i = _case(name)
    assert cap.words[i] == word
    got = registry.resolve("b200-tcgen05", cap.datapath).evaluate(cap.cases.take([i]))
    assert np.uint32(got[0]) == word


def test_score_command_on_the_recorded_vectors():
    from click.testing import CliRunner

    from tcprobe.cli import main

    r = CliRunner().invoke(main, ["score", "--capture", str(VECTORS)])
    assert r.exit_code == 0, r.output
    assert "0 mismatches in all" in r.output
    r = CliRunner().invoke(main, ["score", "--capture", str(VECTORS), "--model", "ieee"])
    assert r.exit_code == 1  # the obvious model misses recorded words
