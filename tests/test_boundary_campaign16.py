"""Campaign 16 (docs/campaign-16.md): tcprobe.torch.emulate under the torch a
model runs. Expected values by hand: a sum of 16 products of ones is 16.0
(f16 word 0x4C00); torch refuses a bmm of batches 2 and 3 and an mm of
8x16 by 15x8 with a RuntimeError (CPU torch's words)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import tcprobe.torch as tt  # noqa: E402

H16 = 0x4C00


def h(*shape):
    return torch.ones(*shape, dtype=torch.float16)


def words16(t):
    return sorted(set(t.contiguous().view(torch.int16).flatten().tolist()))


def stack_empty():
    return torch._C._len_torch_dispatch_stack() == 0


def test_bmm_batch_mismatch_is_torchs_error_not_two_products():
    with pytest.raises(RuntimeError), tt.emulate(gpu="H100"):
        torch.bmm(h(2, 8, 16), h(3, 16, 8))  # silently ran batch 2 before
    assert stack_empty()


@pytest.mark.parametrize("call", [
    lambda: torch.baddbmm(h(3, 8, 8), h(2, 8, 16), h(2, 16, 8)),
    lambda: torch.addmm(h(8, 9), h(8, 16), h(16, 8)),
    lambda: torch.mv(h(8, 16), h(15)),
    lambda: F.conv2d(h(1, 3, 5, 5), h(2, 2, 3, 3)),
])
def test_shapes_torch_refuses_are_refused_as_torch_does(call):
    with pytest.raises(RuntimeError), tt.emulate(gpu="H100"):
        call()


def test_mm_shape_mismatch_raises_torchs_runtime_error():
    with pytest.raises(RuntimeError, match="cannot be multiplied"), tt.emulate(gpu="H100"):
        h(8, 16) @ h(15, 8)


def test_inference_mode_routes_linear_and_matmul():
    rep = tt.Report()
    with torch.inference_mode(), tt.emulate(gpu="H100", report=rep):
        y = F.linear(h(4, 16), h(8, 16))
        z = h(2, 1, 8, 16) @ h(3, 16, 8)
    assert words16(y) == [H16] and words16(z) == [H16]
    assert rep.routed == 2 and rep.fallback == 0, rep.rows()


def test_nested_outer_report_counts_only_what_the_block_ran():
    outer, inner = tt.Report(), tt.Report()
    a, b = h(8, 16), h(16, 8)
    with tt.emulate(gpu="A100", report=outer), tt.emulate(gpu="H100", report=inner):
        y = F.conv1d(h(1, 4, 8), h(2, 4, 3))
        z = a @ b
    assert inner.routed == 2 and outer.routed == 0
    assert set(outer.torch_ops) <= {"ones"}, outer.torch_ops  # was to/view/detach/im2col...
    assert words16(z) == [H16] and float(y[0, 0, 0]) == 12


def test_emulate_as_a_decorator():
    rep = tt.Report()

    @tt.emulate(gpu="H100", report=rep)
    def f(a, b):
        if a is None:
            raise KeyError("x")
        return a @ b
    assert f.__name__ == "f"
    assert words16(f(h(8, 16), h(16, 8))) == [H16]
    f(h(8, 16), h(16, 8))
    assert rep.routed == 2 and stack_empty()
    with pytest.raises(KeyError):
        f(None, None)
    assert stack_empty()
    with pytest.raises(ValueError, match="decorates a function"):
        tt.emulate(gpu="H100")(3)
    with pytest.raises(ValueError, match="generator"):  # its body would run outside the block
        tt.emulate(gpu="H100")(lambda: (yield h(8, 16) @ h(16, 8)))


def test_cdist_mm_path_is_an_unrouted_gemm():
    x, y = torch.zeros(40, 8), torch.zeros(30, 8)
    with pytest.raises(ValueError, match="_euclidean_dist"), tt.emulate(gpu="H100",
                                                                       strict="routes"):
        torch.cdist(x, y, compute_mode="use_mm_for_euclid_dist")
    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        d = torch.cdist(x, y, compute_mode="use_mm_for_euclid_dist")
    assert float(d.abs().max()) == 0 and rep.ops["_euclidean_dist"].fallback == 1


# python -m tcprobe.capture.torch_gemm: a manifest with no cases or an unknown GPU, and
# arguments past DIR [--fit], were found only after torch's import (or ignored)

def _manifest(tmp_path, **change):
    import json

    import numpy as np

    base = {"gpu": "H100", "format": "f16", "m": 8, "n": 8, "k": 64, "seed": 0,
            "cases": [{"name": "random", "alpha": 1.0, "beta": 0.0, "a": "random.a.npy",
                       "b": "random.b.npy", "c_format": None}]}
    base.update(change)
    np.save(tmp_path / "random.a.npy", np.ones((8, 64), np.uint16))
    np.save(tmp_path / "random.b.npy", np.ones((64, 8), np.uint16))
    (tmp_path / "manifest.json").write_text(json.dumps(base))
    return tmp_path


@pytest.mark.parametrize("change, needle", [({"cases": []}, "'cases' is empty"),
                                            ({"gpu": "nosuch"}, "unknown GPU 'nosuch'")])
def test_capture_refuses_empty_cases_and_unknown_gpu(tmp_path, change, needle):
    from tcprobe.capture.torch_gemm import ManifestError, check_manifest

    folder = _manifest(tmp_path, **change)
    import json

    with pytest.raises(ManifestError, match=needle):
        check_manifest(folder, json.loads((folder / "manifest.json").read_text()))


@pytest.mark.parametrize("extra", [["--fit", "--fit"], ["other"], ["--fti"]])
def test_capture_refuses_arguments_past_dir_and_fit(tmp_path, capsys, extra):
    from tcprobe.capture import torch_gemm

    folder = _manifest(tmp_path)
    assert torch_gemm.main([str(folder), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: unexpected argument"), err
