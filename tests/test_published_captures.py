"""The published profiles against the Khattak-Mikaitis silicon captures.

40 of the 48 published outputs are explained by the published parameters;
the other 8 (B200 fp8 to f32 and f16, H100/H200 fp8 to f16) are scored
honestly here and are the subject of `tcprobe fit`.
"""

import pytest
from conftest import HWDATA, SUBSET, needs_shared

from tcprobe.capture import load
from tcprobe.models import registry
from tcprobe.models.profiles import profile_for_gpu
from tcprobe.validation.scoring import score

UNEXPLAINED = {("B200", "e4m3", "f32"), ("B200", "e4m3", "f16"), ("B200", "e5m2", "f32"),
               ("B200", "e5m2", "f16"), ("H100", "e4m3", "f16"), ("H100", "e5m2", "f16"),
               ("H200", "e4m3", "f16"), ("H200", "e5m2", "f16")}


def published_profile_scores(root):
    out = {}
    for cap in load(root):
        key = (cap.gpu, cap.datapath.a_type, cap.datapath.d_type)
        out[key] = score(cap, profile_for_gpu(cap.gpu).model(cap.datapath))
    return out


def check(results, cases_per_file):
    assert len(results) == 48
    explained = {k: r for k, r in results.items() if k not in UNEXPLAINED}
    assert len(explained) == 40
    bad = {k: r.mismatches for k, r in explained.items() if r.mismatches}
    assert bad == {}
    for r in results.values():
        assert r.cases == cases_per_file
    # the unexplained ones really are unexplained by the published parameters
    for k in UNEXPLAINED:
        assert results[k].mismatches > cases_per_file // 5, k


def test_published_parameters_on_the_bundled_subset():
    check(published_profile_scores(SUBSET), 250)


@needs_shared
def test_published_parameters_on_every_published_file():
    check(published_profile_scores(HWDATA), 5000)


@pytest.mark.parametrize("gpu,fmt", [("A100", "bf16"), ("H200", "tf32"), ("V100", "fp16")])
def test_ieee_baseline_misses_many(gpu, fmt):
    for cap in load(SUBSET / gpu / fmt):
        if cap.datapath.d_type == "f32":
            r = score(cap, registry.resolve("ieee", cap.datapath, cap.gpu))
            assert r.mismatches > 25  # the obvious model is wrong on about a third of them
