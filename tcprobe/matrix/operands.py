"""The numpy/torch edge of the matrix API: arrays in as raw words, words out as arrays.

An array's dtype names its element format (the table below); the words
are the array's own bits, never converted. torch tensors are read and
written the same way when torch is installed (it is never required).
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np

from tcprobe.models.formats import get_format
from tcprobe.names import fold

# dtype name (numpy, ml_dtypes or torch) -> element format of an A or B operand
INPUT_FORMATS = {
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "tf32",  # the tensor core reads the top 19 bits of the word
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float6_e2m3fn": "e2m3",
    "float6_e3m2fn": "e3m2",
    "float4_e2m1fn": "e2m1",
    "float8_e4m3fnuz": "e4m3fnuz",  # AMD CDNA3's fp8 (the GPU's instructions gate them)
    "float8_e5m2fnuz": "e5m2fnuz",
    "int8": "s8",
    "uint8": "u8",
}
# dtype name -> format of C (and of a bias); the chain takes only those its
# accumulator has (f32, f16, s32), which the instruction's choice checks
C_FORMATS = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "s32"}
BIAS_FORMATS = C_FORMATS
OUTPUT_FORMATS = {"float32": "f32", "float16": "f16", "int32": "s32"}
# dtype name -> output format D may be written in
OUT_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "e4m3",
             "float8_e5m2": "e5m2", "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2fnuz": "e5m2fnuz",
             "int32": "s32"}
OUT_DTYPES = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
              "e4m3fnuz": "float8_e4m3fnuz", "e5m2fnuz": "float8_e5m2fnuz"}
# dtype name -> format of a block scale
SCALE_FORMATS = {"float8_e8m0fnu": "ue8m0", "float8_e4m3fn": "ue4m3", "uint8": None}
# output format -> numpy dtype of the result
RESULT_DTYPES = {"f32": np.float32, "f16": np.float16, "s32": np.int32}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}


class MatmulError(ValueError):
    """Bad input to a matrix product; the message starts with the argument."""


class Operand(NamedTuple):
    """An array as words: ``fmt`` is None for uint8 scale codes (the datapath names them)."""

    words: np.ndarray  # uint32, the array's shape
    fmt: str | None
    torch: bool
    device: str | None = None  # a torch tensor's device other than the CPU ('cuda:0')



def has_masked_entries(x) -> bool:
    """Whether ``x`` is a numpy masked array with an entry masked (numpy.ma is
    not imported for the question: without it no array is a masked one)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(x, ma.MaskedArray) and bool(ma.getmaskarray(x).any())

def is_torch(x) -> bool:
    """Whether ``x`` is a torch tensor (a subclass of torch.Tensor included);
    torch is not imported for the question."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return True
    return type(x).__module__.startswith("torch")


def torch_dense(x, what: str):
    """``x`` (a torch tensor) as a plain dense CPU tensor whose words can be
    read, or MatmulError naming what it is instead: a meta tensor (no
    values), a sparse or nested one (no strided words), a tensor wrapped by
    torch.func (vmap, grad: its words are not this tensor's storage), or one
    whose storage torch cannot hand out (a fake or functional tensor)."""
    import torch

    if x.device.type == "meta":
        raise MatmulError(f"{what}: a meta tensor holds no values (no words to read)")
    if getattr(x, "is_nested", False):
        raise MatmulError(f"{what}: a nested tensor has no one shape: pass its dense "
                          "components one by one (x.unbind())")
    if x.layout != torch.strided:
        raise MatmulError(f"{what}: a {str(x.layout).removeprefix('torch.')} tensor: pass its "
                          f"dense words ({what}.to_dense())")
    functorch = getattr(torch._C, "_functorch", None)
    if functorch is not None and functorch.is_functorch_wrapped_tensor(x):
        raise MatmulError(f"{what}: a tensor wrapped by torch.func (vmap, grad, jvp): "
                          "tcprobe reads raw words, which torch.func cannot trace: call it "
                          "outside the transform, or loop over the batch")
    t = x.detach().resolve_neg()  # a negative view (torch._neg_view, -x of a conj): its values
    if type(t) is not torch.Tensor:
        t = t.as_subclass(torch.Tensor)  # a subclass's words are its storage's
    try:
        return t.cpu().contiguous()  # a GPU's tensor: its words, copied exactly
    except (RuntimeError, NotImplementedError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise MatmulError(f"{what}: torch cannot hand out this tensor's words ({first})") \
            from None


def dtype_name(x) -> str:
    """The dtype's name without its module: 'bfloat16', 'float8_e4m3fn', ..."""
    return str(x.dtype).removeprefix("torch.")


def _numpy(x, what: str) -> np.ndarray:
    if is_torch(x):
        t = torch_dense(x, what)
        size = t.element_size()
        if size not in _UNSIGNED:
            raise MatmulError(f"{what}: torch dtype {t.dtype} has no format here")
        import torch

        signed = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[size]
        return t.view(signed).numpy().view(_UNSIGNED[size])
    if has_masked_entries(x):
        raise MatmulError(f"{what}: a masked array with masked entries (whose words would be "
                          f"used as they are): pass {what}.filled(value)")
    a = np.asarray(x)
    if not a.dtype.isnative:  # the same format in the other byte order: the same words
        a = a.astype(a.dtype.newbyteorder("="))
    if a.dtype.itemsize not in _UNSIGNED:
        raise MatmulError(f"{what}: dtype {a.dtype} has no tensor-core format")
    return np.ascontiguousarray(a).view(_UNSIGNED[a.dtype.itemsize])


def read(x, what: str, table: dict, ndim: int = 2) -> Operand:
    """The words of array ``x`` (argument ``what``) and the format its dtype
    names in ``table``; ValueError naming the argument otherwise."""
    if not hasattr(x, "dtype"):
        raise MatmulError(f"{what} must be a numpy array or torch tensor, not {type(x).__name__}")
    if is_torch(x) and (getattr(x, "is_nested", False) or x.device.type == "meta"):
        torch_dense(x, what)  # no one shape, or no values: named before the shape is read
    name = dtype_name(x)
    if not is_torch(x) and not x.dtype.isnative:  # >f2 is float16 in the other byte order
        name = x.dtype.newbyteorder("=").name
    if name not in table:
        raise MatmulError(f"{what}: dtype {name} is not one of {', '.join(table)}")
    if len(x.shape) != ndim:
        raise MatmulError(f"{what} must be {ndim}-D, not of shape {tuple(x.shape)}")
    fmt = table[name]
    raw = _numpy(x, what)
    words = raw.astype(np.uint32)
    if fmt is not None:
        limit = get_format(fmt).word_mask
        if words.size and int(words.max()) > limit:
            raise MatmulError(f"{what}: a word does not fit {fmt}")
    device = str(x.device) if is_torch(x) and x.device.type != "cpu" else None
    return Operand(words, fmt, is_torch(x), device)


def result_device(*operands: Operand | None) -> str | None:
    """The device D goes to: the one device other than the CPU that torch
    operands live on (None: the host); MatmulError where they live on two."""
    found = {o.device for o in operands if o is not None and o.device is not None}
    if len(found) > 1:
        raise MatmulError(f"A, B: the operands live on several devices ({', '.join(sorted(found))})")
    return found.pop() if found else None


def result(words: np.ndarray, fmt: str, as_torch: bool):
    """Output words as an array of the output's dtype (a torch tensor if asked)."""
    dtype = RESULT_DTYPES[get_format(fmt).name]
    size = np.dtype(dtype).itemsize
    arr = np.ascontiguousarray(words).astype(_UNSIGNED[size]).view(dtype)
    if as_torch:
        import torch

        return torch.from_numpy(arr.copy())
    return arr


def output_format(out) -> str:
    """The output format that ``out=`` names: a dtype, a dtype name or a format name."""
    if isinstance(out, str):
        name = out
    elif type(out).__module__.startswith("torch"):
        name = str(out).removeprefix("torch.")
    else:
        try:
            name = np.dtype(out).name
        except TypeError:
            name = str(out)
    name = fold(name)  # any case (tcprobe.names)
    if name in OUTPUT_FORMATS:
        return OUTPUT_FORMATS[name]
    if name in RESULT_DTYPES:
        return name
    raise MatmulError(f"dtype: {out!r} names no output type (float32, float16, int32)")


def out_name(out) -> str:
    """The output format ``dtype=`` names: a dtype, its name or a format name."""
    if not isinstance(out, type | str) and hasattr(out, "shape") and hasattr(out, "dtype") \
            and not isinstance(out, np.dtype):  # an array or tensor, not a dtype (or its class)
        raise MatmulError(f"dtype: names D's type (a dtype such as float32, or 'f16'), not an "
                          f"array ({type(out).__name__} of shape {tuple(out.shape)}): matmul "
                          "returns D and writes into no array")
    name = out if isinstance(out, str) else str(getattr(out, "__name__", None) or out)
    name = name.removeprefix("torch.")
    if not isinstance(out, str) and not name.startswith("torch") and name not in OUT_NAMES:
        try:
            name = np.dtype(out).name
        except (TypeError, ValueError):
            pass
    name = fold(name)  # any case (tcprobe.names)
    if name in OUT_NAMES:
        return OUT_NAMES[name]
    if name in OUT_NAMES.values():
        return name
    try:  # a format's other spellings (fp16, half, ...: models/formats' aliases)
        fmt = get_format(name).name
    except (KeyError, ValueError):
        fmt = None
    if fmt in OUT_NAMES.values():
        return fmt
    raise MatmulError(f"dtype: {out!r} names no output type ({', '.join(OUT_NAMES)})")


def result_array(words: np.ndarray, fmt: str, as_torch: bool, device: str | None = None):
    """D words as an array of the output's dtype (ml_dtypes for bf16 and fp8;
    a torch tensor if asked, on ``device`` where given: the operands' GPU)."""
    if device is not None:
        return result_array(words, fmt, True).to(device)
    if fmt not in OUT_DTYPES:
        return result(words, fmt, as_torch)
    import ml_dtypes

    width = get_format(fmt).width
    raw = np.ascontiguousarray(words).astype(np.uint16 if width == 16 else np.uint8)
    if as_torch:
        import torch

        t = torch.from_numpy(raw.view(np.int16 if width == 16 else np.int8).copy())
        return t.view(getattr(torch, OUT_DTYPES[fmt]))
    return raw.view(getattr(ml_dtypes, OUT_DTYPES[fmt]))
