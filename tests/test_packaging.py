"""The installed package is the tree: every folder with an __init__.py is
listed in pyproject.toml (a missing one installs a tcprobe that does not
import), and the CUDA side is in the core dependencies."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _package_folders() -> dict[str, Path]:
    """Package name -> folder, through setuptools' package-dir mapping."""
    mapping = PROJECT["tool"]["setuptools"]["package-dir"]
    out = {}
    for name, folder in sorted(mapping.items(), key=lambda kv: kv[0].count(".")):
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            if any(p.startswith((".", "__")) or p == "build" for p in rel.parts):
                continue
            dotted = ".".join((name, *rel.parts))
            if init.parent.is_symlink() or any(q.is_symlink() for q in init.parent.relative_to(ROOT).parents
                                                if q != Path(".") and (ROOT / q).is_symlink()):
                continue  # tcprobe/models and friends: links to the top-level folders
            out.setdefault(dotted, init.parent)
    return out


def test_every_package_folder_is_installed():
    listed = set(PROJECT["tool"]["setuptools"]["packages"])
    found = set(_package_folders())
    assert found - listed == set(), "folders with __init__.py that pip would leave out"
    assert listed - found == set(), "listed packages with no folder"


def test_the_cuda_side_is_core():
    deps = PROJECT["project"]["dependencies"]
    names = {d.split(">")[0].split("=")[0].split("<")[0].strip() for d in deps}
    assert {"cuda-bindings", "nvidia-cuda-nvrtc", "nvidia-cuda-nvdisasm"} <= names
    for d in deps:
        if d.startswith(("cuda-bindings", "nvidia-cuda-")):
            assert ">=13.0,<14" in d, d  # one major version, any 13.x minor
    assert not any("cuda-python" in d for d in deps)
    assert set(PROJECT["project"]["optional-dependencies"]["peer"]) >= {"mmasim==2.1.1"}
