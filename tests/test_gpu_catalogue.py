"""The GPU catalogue (models/gpus.py) and every list of GPUs derived from it.

A new GPU profile is one catalogue row (and, for new arithmetic, its
parameters in models/profiles.py); these tests check that the lists the
code and the docs show agree with the rows.
"""

import re
from pathlib import Path

import pytest

from tcprobe.devices import registry
from tcprobe.devices.sim import SimDevice
from tcprobe.devices.sim_profile import AMD_BUILTIN, BUILTIN
from tcprobe.models import emulated, gpus, isa, isa_amd
from tcprobe.models.profiles import PROFILES, profile_for_gpu

ROOT = Path(__file__).resolve().parents[1]
NVIDIA = gpus.gpus("nvidia")
AMD = gpus.gpus("amd")


def test_names_and_sim_names_are_unique():
    names = [n for g in gpus.GPUS for n in (g.name, *g.also)]
    assert len(names) == len(set(names))
    sims = [g.sim for g in gpus.GPUS if g.sim]
    assert len(sims) == len(set(sims))


@pytest.mark.parametrize("gpu", NVIDIA, ids=lambda g: g.name)
def test_every_name_of_a_row_resolves_to_its_profile(gpu):
    for name in (gpu.name, *gpu.also):
        assert profile_for_gpu(name).name == gpu.profile
        assert profile_for_gpu(f"NVIDIA {name}").name == gpu.profile


def test_the_profiles_name_exactly_the_catalogues_gpus():
    assert {p.name: set(p.gpus) for p in PROFILES.values()} == {
        g.profile: {n for r in NVIDIA if r.profile == g.profile for n in (r.name, *r.also)}
        for g in NVIDIA}


def test_arch_gpus_are_the_rows_of_each_harness_architecture():
    assert set(isa.ARCH_GPUS) == set(isa.ARCH_FAMILIES)
    for arch, names in isa.ARCH_GPUS.items():
        assert set(names) == {g.name for g in NVIDIA if arch in g.archs}
    # a row's harness architectures are the ISA table's, or its profile's own (sm_70)
    for g in NVIDIA:
        for arch in g.archs:
            assert arch in isa.ARCH_FAMILIES or arch == PROFILES[g.profile].arch
    assert isa.arch_gpu("sm_90a") == "H100" and isa.arch_gpu("sm_86") is None
    assert isa_amd.ARCH_GPUS == {a: tuple(g.name for g in AMD if a in g.archs)
                                 for a in isa_amd.ARCHS}
    assert isa_amd.GPU_ARCH == {"MI100": "CDNA1", "MI250X": "CDNA2", "MI300X": "CDNA3"}


def test_the_emulation_profiles_cover_their_hmma_profiles_gpus():
    for p in emulated.EMULATED.values():
        assert set(p.gpus) == {n for g in NVIDIA if g.profile == p.hmma.name
                               for n in (g.name, *g.also)}


@pytest.mark.parametrize("gpu", [g for g in gpus.GPUS if g.sim], ids=lambda g: g.sim)
def test_each_builtin_sim_runs_what_its_row_says(gpu):
    table = BUILTIN if gpu.vendor == "nvidia" else AMD_BUILTIN
    assert table[gpu.sim] == (gpu.name, gpu.families)
    dev = SimDevice.builtin(gpu.sim)
    assert dev.families == gpu.families and dev.gpu == gpu.name
    if gpu.vendor == "nvidia":  # a sim runs only families its architecture's harness runs
        fams = {f for a in gpu.archs for f in isa.ARCH_FAMILIES.get(a, ("mma",))}
        assert set(gpu.families) <= fams


def test_the_default_sim_of_each_family_runs_it():
    assert set(registry.DEFAULT_SIM) == set(isa.FAMILIES)
    for family, sim in registry.DEFAULT_SIM.items():
        assert family in BUILTIN[sim][1]
    assert registry.DEFAULT_SIM == {"mma": "b200", "wgmma": "h200", "tcgen05": "b200"}


def test_the_readmes_lists_are_the_catalogues():
    readme = (ROOT / "README.md").read_text()
    # the spans scripts/readme_figures.py writes from the catalogue
    fig = dict(re.findall(r"<!-- fig:(\w+) -->(.*?)<!-- /fig -->", readme, re.S))
    assert re.findall(r"`(\w+)`", fig["sims"]) == list(BUILTIN)
    measured = {g.name: PROFILES[g.profile].measured for g in NVIDIA}
    assert fig["gpus"].split(", ") == [n for g in NVIDIA if measured[g.name]
                                       for n in (g.name, *g.also)]
    assert fig["gpus_mmasim"].split(", ") == [n for g in NVIDIA if not measured[g.name]
                                              for n in (g.name, *g.also)]
    amd = re.search(r"((?:`sim:mi\w+`,? ?(?:and )?)+) run the profiles", readme).group(1)
    assert set(re.findall(r"sim:(\w+)", amd)) == set(AMD_BUILTIN)


def test_the_sim_profile_docs_table_is_the_catalogues():
    doc = (ROOT / "docs" / "sim-profiles.md").read_text()
    table = doc.split("## Built-in profiles", 1)[1].split("\n\n", 2)[1]
    rows = [r for r in table.splitlines() if r.startswith("| `sim:")]
    named = {n for r in rows for n in re.findall(r"`sim:(\w+)`", r.split("|")[1])}
    assert named == set(BUILTIN)
    for r in rows:  # each row's profile column names the catalogue's profile of its sims
        for n in re.findall(r"`sim:(\w+)`", r.split("|")[1]):
            profile = next(g.profile for g in NVIDIA if g.sim == n)
            assert r.split("|")[2].strip().startswith(profile), (n, r)
