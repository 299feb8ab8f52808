"""benchmarks/speed_table.py's table and its README rewrite (the figures
themselves are the benchmark's, measured by running it, never by a test)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("speed_table", ROOT / "benchmarks" /
                                                  "speed_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rows_render_with_ratio_and_verdict():
    st = _module()
    rows = [st._row("slow thing", "2.0 s", "ref 0.5 s", 4.0, "<= 5x", True),
            st._row("fast thing", "1 ns", "peer 40 ns", 1 / 40, ">= 30x faster", True, "equal"),
            st._row("unmeasured", "-", "-", None, "<= 1.3x", None, "no floor here")]
    text = st.markdown(rows, "header line")
    lines = text.splitlines()
    assert lines[0] == "header line"
    assert "| slow thing | 2.0 s | ref 0.5 s | 4x | <= 5x | yes |" in lines
    assert "| fast thing (equal) | 1 ns | peer 40 ns | 40x faster | >= 30x faster | yes |" in lines
    assert "| unmeasured (no floor here) | - | - | - | <= 1.3x | - |" in lines


def test_rewrite_replaces_only_the_marked_block(tmp_path):
    st = _module()
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{st.BEGIN}\nold table\n{st.END}\nafter\n")
    st.rewrite(readme, "new table")
    assert readme.read_text() == f"intro\n{st.BEGIN}\nnew table\n{st.END}\nafter\n"
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    with pytest.raises(SystemExit, match="no .* block"):
        st.rewrite(bare, "x")


def test_the_readme_has_the_block():
    st = _module()
    text = (ROOT / "README.md").read_text()
    assert text.count(st.BEGIN) == 1 and text.count(st.END) == 1
