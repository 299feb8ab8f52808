"""The dispatch mode: aten's matrix products routed to tcprobe, the rest as torch runs them.

A :class:`~torch.utils._python_dispatch.TorchDispatchMode` sees the aten
ops under every module, functional and autograd backward, after torch's
decompositions: ``matmul`` reaches it as ``mm``/``bmm``/``mv`` on
expanded and reshaped views, ``linear`` as ``addmm`` (bias as a 1-D C) or
``mm``, the backward of mm/linear as ``mm`` on transposed views. Each
routed op is cut into 2-D products (a batch is a loop over its
matrices) done by :func:`.adapter.gemm` under one schedule per product:
the user's ``schedule=``, else the library atlas's for that GPU, op,
formats, layout and shape (:func:`tcprobe.atlas.lookup`: measured,
predicted or a default guess, noted in the report). Dispatch modes are
thread-local: a thread started inside the block runs plain torch.
"""

from __future__ import annotations

import re
import sys
import time

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from tcprobe.models import amd_profiles, isa_amd
from tcprobe.models.formats import ulp_distance

from .adapter import Unroutable, f32_tensor, gemm
from .devices import run_on_host, tensor_device
from .report import Record, Report
from .routes import ROUTES, UNROUTED, tf32_enabled

OUT_FORMATS = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
FORMATS = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "tf32",
           torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}
# Ops whose name says they multiply matrices (fused attention and transformer
# fast paths, packed-weight GEMMs, other overloads of routed ops): never silent.
MATRIX_NAMES = re.compile(r"(^|_)(mm|bmm|matmul|addmm|baddbmm|addbmm|addmv|mv|dot|vdot|addr|"
                          r"conv\w*|convolution\w*|linear|attention\w*)(_|$)|multi_head|"
                          r"transformer|int\dpack|grouped_mm|trilinear|bilinear")
FUSED = {"_native_multi_head_attention", "_transformer_encoder_layer_fwd",
         "_native_decoder_only_multi_head_attention", "_transformer_decoder_only_layer_fwd"}
# Ops that move or convert data without arithmetic a GPU could do otherwise
# (a float cast is RNE on both): counted apart from the unmodelled ones.
DATA_OPS = {"clone", "copy_", "copy", "_to_copy", "detach", "empty", "empty_like", "empty_strided",
            "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill_", "zero_",
            "new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided", "cat", "stack",
            "lift_fresh", "lift_fresh_copy", "_unsafe_view", "index", "index_select", "gather",
            "scatter", "constant_pad_nd", "repeat", "flip", "roll", "masked_fill", "where",
            "resize_", "set_", "_local_scalar_dense", "is_nonzero", "equal", "eq", "ne", "lt",
            "le", "gt", "ge", "arange", "randn", "rand", "randint", "normal_", "uniform_",
            "bernoulli_", "native_dropout", "sort", "topk", "argmax", "argmin", "max", "min",
            "relu", "threshold_backward", "abs", "neg", "sign", "isnan", "isinf", "any", "all",
            "logical_not", "logical_and", "logical_or", "bitwise_and", "bitwise_or", "nonzero",
            "masked_select", "tril", "triu", "embedding", "embedding_dense_backward",
            "select_scatter", "slice_scatter", "index_put_", "index_put", "_index_put_impl_",
            "select_backward", "slice_backward", "expand_copy", "permute_copy", "t_copy",
            "transpose_copy", "view_copy", "squeeze_copy", "unsqueeze_copy", "split_copy",
            "unbind_copy", "as_strided_copy", "_reshape_copy", "contiguous", "detach_",
            "unsqueeze_", "squeeze_", "t_", "transpose_", "as_strided_", "sym_numel",
            "sym_stride", "sym_storage_offset", "_unsafe_index", "scalar_tensor"}


class Emulate(TorchDispatchMode):
    """``with emulate(gpu=...):`` every routed aten op as ``gpu``'s tensor cores
    compute it. ``instr``, ``model``: as :func:`tcprobe.matmul`; ``schedule``:
    one schedule for every product (None or 'auto', as tcprobe.matmul's: the
    atlas's per product).
    ``strict=True``: an op that cannot be routed, or a product whose
    schedule is only a default guess, raises a ValueError naming it;
    ``strict="routes"`` refuses only the ops that cannot be routed.
    ``report``: a :class:`Report`. ``backend``: where the products' chains
    run (tcprobe.matmul's: None, 'cpu', 'cuda' or 'host'). Tensors on a GPU
    are routed too: their words are read on the host, the chains run where
    ``backend`` says, and D goes back to their device (an out= or in-place
    target there is written in place: :mod:`.devices`)."""

    def __init__(self, gpu, instr=None, schedule=None, model=None, strict=False, report=None,
                 backend=None):
        super().__init__()
        from tcprobe.matrix import choice

        self.gpu = choice.gpu_name(gpu)
        self.amd = self.gpu in isa_amd.GPU_ARCH
        if report is not None and not isinstance(report, Report):
            raise ValueError(f"report must be a tcprobe.torch.Report, not {type(report).__name__}")
        from tcprobe.flags import check_flag

        strict = check_flag(strict, "strict", ("routes",))
        self.instr = _check_instr(self.gpu, self.amd, instr)
        self.schedule = None
        from tcprobe.matrix.entry import is_auto

        if schedule is not None and not is_auto(schedule):  # 'auto': the atlas's, as None
            from tcprobe.matrix.schedule import from_value

            self.schedule = from_value(schedule)  # a bad schedule is one error here
            if self.schedule.instr is not None:  # an instruction the GPU lacks, here too
                _check_instr(self.gpu, self.amd, self.schedule.instr)
                from tcprobe.matrix.entry import agreed_instr

                agreed_instr(self.instr, self.schedule)  # instr='mma' beside wgmma's schedule
        self.model = _check_model(model, self.gpu, self.amd)
        from tcprobe.matrix.mainloop import check_backend_name

        backend = check_backend_name(backend)
        if backend == "cuda":
            import torch as _torch

            if not _torch.cuda.is_available():
                raise ValueError("backend: 'cuda' needs a CUDA GPU, and torch sees none "
                                 "('host' runs the same kernel source on this CPU)")
        self.backend = backend
        self.strict = strict
        self.report = report if report is not None else Report()
        self._pairs: list | None = None
        from tcprobe.compile_notes import announce_compiles

        announce_compiles()  # a cold first product says it is compiling, on stderr

    def __enter__(self):
        from . import threads

        out = super().__enter__()
        threads.entered(self.report)  # a thread started inside is counted (Report.threads)
        return out

    def __exit__(self, *exc):
        from . import threads

        threads.left(self.report)
        return super().__exit__(*exc)

    def __call__(self, fn):
        """``@emulate(gpu=...)`` on a function: each call runs inside the
        block, as ``torch.no_grad()`` decorates (the one mode, its report
        shared by every call; a recursive call re-enters it)."""
        import functools
        import inspect

        if not callable(fn):
            raise ValueError(f"emulate(...) decorates a function, not {type(fn).__name__}")
        if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn) or \
                inspect.isasyncgenfunction(fn):  # its body runs after the call has returned
            raise ValueError(f"emulate(...) decorates a plain function, and {fn.__name__} is a "
                            "generator or coroutine function whose body would run outside the "
                            "block: put 'with emulate(...):' inside it")

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch would wrap __torch_dispatch__ in torch._disable_dynamo, whose first call
        # imports torch._dynamo (5 s of a first block's 5.5 s, silent); below, only a
        # process that has loaded dynamo (torch.compile) pays for keeping it out
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if "torch._dynamo" in sys.modules:  # torch.compile is in play: as torch would
            return self._dispatch_no_dynamo(func, types, args, kwargs)
        return self._dispatch(func, types, args, kwargs)

    def _dispatch(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = ROUTES.get(func)
        name = str(func.overloadpacket.__name__)
        if route is None and _composite(func):
            # under torch.inference_mode torch hands a mode its composite ops (matmul,
            # linear, conv2d, einsum) undecomposed: decomposed here, as autograd mode does,
            # so their products reach this mode (sub-ops included) and route
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        if route is None:
            overload = func._overloadname
            if func in UNROUTED or name in UNROUTED or MATRIX_NAMES.search(name):
                what = name if overload == "default" else f"{name}.{overload}"
                why = (f"aten.{what} is a fused fast path whose GEMMs tcprobe does not see "
                       "(torch takes it in eval mode under no_grad)" if name in FUSED
                       else f"aten.{what} has no tensor-core route here")
                return self._fallback(func, args, kwargs, why)
            self.report.count_torch(name, name in DATA_OPS or func.is_view)
            return func(*args, **kwargs)
        if func not in OWN_CHECKS:
            _torch_checks(func, args, kwargs)  # torch's own refusal (shapes, batch, dtypes)
        self._pairs = [] if self.report.compare else None
        theirs_args = _clone_written(func, args, kwargs) if self.report.compare else None
        start = time.perf_counter()
        try:
            # every mode off: an outer emulate (or any mode) below this one sees the op the
            # block ran, never the torch calls tcprobe makes to compute it
            with _disable_current_modes():
                device = tensor_device(args, kwargs)  # a GPU's tensors: read here, D back there
                if device is None:
                    out = route(self, name, *args, **kwargs)
                else:
                    out = run_on_host(lambda *a, **k: route(self, name, *a, **k), args, kwargs,
                                      device)
        except Unroutable as e:
            return self._fallback(func, args, kwargs, str(e))
        stats = self.report.stats(name)
        stats.routed += 1
        stats.seconds += time.perf_counter() - start
        if self.report.compare:
            with _disable_current_modes():  # plain torch, not an outer emulation
                theirs = func(*theirs_args[0], **theirs_args[1])
                self._compare(stats, out, theirs)
        return out

    # torch's own wrapping (Dynamo kept out of the mode's frames), for a process with dynamo
    _dispatch_no_dynamo = (torch._disable_dynamo(_dispatch, recursive=True)
                           if hasattr(torch, "_disable_dynamo") else _dispatch)

    def _fallback(self, func, args, kwargs, reason: str):
        name = str(func.overloadpacket.__name__)
        if self.strict:
            raise ValueError(f"strict: aten.{name} cannot run on {self.gpu}'s tensor cores: "
                             f"{reason}")
        self.report.stats(name).fallback += 1
        self.report.fallbacks.append((name, reason))
        return func(*args, **kwargs)

    def _compare(self, stats, ours: torch.Tensor, theirs: torch.Tensor) -> None:
        if ours.numel() == 0 or ours.dtype not in OUT_FORMATS:
            return
        fmt = OUT_FORMATS[ours.dtype]
        view = torch.int32 if fmt == "f32" else torch.int16
        mask = 0xFFFFFFFF if fmt == "f32" else 0xFFFF
        ours, theirs = ours.cpu(), theirs.cpu()  # a GPU's tensors compared here
        w = [t.contiguous().view(view).numpy().astype(np.int64) & mask for t in (ours, theirs)]
        stats.max_ulp = max(stats.max_ulp, int(np.abs(ulp_distance(fmt, w[0], w[1])).max()))
        if self._pairs:
            denom = torch.cat([(a.double().abs() @ b.double().abs()).ravel()
                               for a, b in self._pairs]).reshape(ours.shape)
            diff = (ours.double() - theirs.double()).abs() / denom.clamp_min(1e-300)
            diff = diff[torch.isfinite(diff)]
            if diff.numel():
                stats.max_rel = max(stats.max_rel, float(diff.max()))

    # -- the schedule of one product -----------------------------------------------------

    def plan(self, op: str, a, b, form: str, batch: int = 1):
        """(schedule or None, Lookup) of one 2-D product: the user's, or the atlas's."""
        from tcprobe.atlas import query as atlas

        m, k = a.shape
        n = b.shape[1]
        if self.schedule is not None:
            return self.schedule, atlas.Lookup(self.schedule, _axes(self.schedule), "given",
                                               reason="emulate(schedule=...)")
        fmt = FORMATS.get(a.dtype)
        if m == 0 or n == 0 or k == 0:  # no arithmetic to schedule: +0, or C as given
            found = atlas.Lookup(atlas.from_value({}), {}, "exact",
                                 reason="an empty product (+0 or C)")
        elif fmt is None:
            found = atlas.Lookup(atlas.from_value({}), {}, "default guess",
                                 reason=f"{a.dtype} products have no atlas")
        else:
            layout = "/".join("row" if t.stride(-1) == 1 else "col" for t in (a, b))
            try:
                found = atlas.lookup(self.gpu, "scaled_mm" if form.startswith("scaled") else
                                     "gemm", fmt, m, n, k, form=form, layout=layout, batch=batch)
            except atlas.AtlasError as e:  # a format the GPU has no instruction for (bf16, V100)
                if str(e).startswith("dtypes:"):
                    raise Unroutable(str(e)) from None
                raise
        axes = dict(found.axes)
        if self.instr is not None:  # the user's instruction runs (mma, wgmma: same words here)
            axes.pop("instr", None)
        if found.provenance == "default guess" and self.strict is True:
            raise ValueError(f"strict: aten.{op} {m}x{n}x{k} {fmt or a.dtype} on {self.gpu}: "
                             f"no measured or predicted schedule ({found.reason}); give "
                             "schedule= or strict='routes'")
        return (axes or None), found

    # -- the 2-D product every route goes through ----------------------------------------

    def product(self, op: str, a, b, c=None, alpha=1, beta=1, *, bias=None, form="plain",
                out_dtype=None, batch: int = 1) -> np.ndarray:
        """D words of one 2-D product (adapter.gemm), noted in the report."""
        from tcprobe.matrix.operands import MatmulError

        instr = self.instr
        if instr is None and self.amd and a.dtype == torch.float32 and tf32_enabled():
            xf32 = amd_profiles.xf32_datapath(self.gpu)  # MI300X: hipBLASLt's xf32 MFMA
            instr = None if xf32 is None else xf32.id
        schedule, found = self.plan(op, a, b, form, batch)
        if schedule is None and a.dtype == torch.float32 and self.amd:
            schedule = {}  # hipBLASLt hands f32 operands to the MFMA unrounded
        try:
            words = gemm(a, b, c, gpu=self.gpu, instr=instr, model=self.model,
                         schedule=schedule, alpha=alpha, beta=beta, bias=bias,
                         out_dtype=out_dtype, backend=self.backend)
        except MatmulError as e:
            if str(e).startswith(("A:", "B:", "C:", "instr:", "backend:")):
                raise Unroutable(str(e)) from None
            raise
        stats = self.report.stats(op)
        stats.shapes.append((tuple(a.shape), tuple(b.shape)))
        stats.note(tuple(a.shape) + (b.shape[1],), form, found)
        if self._pairs is not None:
            self._pairs.append((a, b))
        if self.report.record:
            d = (f32_tensor(words) if a.dtype.is_floating_point
                 else torch.from_numpy(words.view(np.int32).copy()))
            self.report.records.append(Record(op, a.clone(), b.clone(),
                                              None if c is None else c.clone(), alpha, beta, d,
                                              None if bias is None else bias.clone(),
                                              dict(found.axes), found.provenance,
                                              out_dtype))
        return words


# Routed ops whose GPU rules tcprobe checks itself (_int_mm's shapes, _scaled_mm's
# scales); torch's meta checks of the rest run before a route (_torch_checks).
OWN_CHECKS = {torch.ops.aten._int_mm.default, torch.ops.aten._int_mm.out,
              torch.ops.aten._scaled_mm.default, torch.ops.aten._scaled_mm.out}


def _composite(func) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(
        func.name(), torch._C.DispatchKey.CompositeImplicitAutograd)


def _torch_checks(func, args, kwargs) -> None:
    """torch's own checks of a routed op's arguments, run on meta tensors of
    the same shapes, strides and dtypes (no arithmetic): a shape, batch or
    dtype torch refuses raises torch's own error, in CPU torch's words, before
    a route could compute something of it (bmm of batches 2 and 3 ran 2
    products; mm of 8x16 and 15x8 raised tcprobe's ValueError, not torch's
    RuntimeError). Ops without a meta kernel, and sparse or nested
    operands, are left to the route."""
    from torch.utils._pytree import tree_flatten, tree_map

    leaves = tree_flatten((args, kwargs))[0]
    if any(isinstance(t, torch.Tensor) and (t.layout != torch.strided or t.is_nested
                                            or t.device.type == "meta") for t in leaves):
        return

    def meta(t):
        if isinstance(t, torch.Tensor):
            return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
        return t
    with _disable_current_modes():
        try:
            func(*tree_map(meta, args), **tree_map(meta, kwargs))
        except NotImplementedError:
            return
        except TypeError:  # a meta decomposition broken for the overload (baddbmm.dtype_out)
            return
        except (RuntimeError, ValueError, IndexError) as e:  # torch's own refusal
            try:
                func(*args, **kwargs)  # in CPU torch's words where CPU torch refuses too
            except NotImplementedError:  # no CPU kernel for it: the meta's words
                raise e from None
            raise


def _axes(schedule) -> dict:
    from tcprobe.matrix.schedule import Schedule

    default = Schedule()
    return {k: v for k, v in schedule.to_dict().items() if getattr(default, k) != v}


def _clone_written(func, args, kwargs):
    """(args, kwargs) for torch's own run beside ours, taken before ours runs:
    every argument the op writes (out=, and the target of an in-place op
    such as ``addmm_``, whose value ours replaces) copied, so that torch's
    run reads the values the block gave and never writes the block's tensors."""
    written = {a.name for a in func._schema.arguments
               if a.alias_info is not None and a.alias_info.is_write}
    names = [a.name for a in func._schema.arguments]

    def copy(name, v):
        return v.clone() if name in written and isinstance(v, torch.Tensor) else v
    return ([copy(names[i] if i < len(names) else "", v) for i, v in enumerate(args)],
            {k: copy(k, v) for k, v in kwargs.items()})


def _check_instr(gpu: str, amd: bool, instr):
    """``instr`` checked once, at emulate(): a family or datapath id ``gpu`` has."""
    if instr is None:
        return None
    from tcprobe.matrix import choice
    from tcprobe.models.datapath import Datapath

    if not isinstance(instr, str) or not instr.strip():
        raise ValueError(f"instr must name a family or a datapath id, not {instr!r}")
    fams = ("mfma",) if amd else tuple(choice.families(gpu))
    text = instr.strip()
    family = (text.split(".")[0] if "." in text else text).lower()
    if family not in fams:
        raise ValueError(f"instr: {gpu} has no {family!r} (it has {', '.join(fams)})")
    if "." in text:
        try:
            dp = Datapath.parse(text)
        except ValueError as e:
            raise ValueError(f"instr: {e}") from None
        choice.check_datapath(dp, gpu)  # the ISA gate of every surface: mma.bf16.f32.k7 is none
        return text
    return family


def _check_model(model, gpu: str, amd: bool):
    """``model=`` checked at emulate(), as instr= is: a name that names no
    model (a blank one included), or an AMD model beside an NVIDIA GPU (and
    the reverse), is one error here, not at the first GEMM (a block without
    one accepted it)."""
    from tcprobe.model_file import is_model_file

    if isinstance(model, str) and not is_model_file(model):
        from tcprobe.models import isa_amd
        from tcprobe.models.registry import PROFILES, ModelError, check_name

        try:
            key = check_name(model)
        except ModelError as e:
            raise ValueError(f"model: {e}") from None
        amd_model = key in {g.lower() for g in isa_amd.GPU_ARCH}
        if amd_model and not amd:
            raise ValueError(f"model: {model!r} models AMD v_mfma datapaths, and {gpu} runs none")
        if amd and key in PROFILES:
            raise ValueError(f"model: {model!r} is an NVIDIA profile, and {gpu} runs only mfma")
    return model


def emulate(gpu, instr=None, schedule=None, model=None, strict=False, report=None,
            backend=None) -> Emulate:
    """A context manager running the block's matrix products as ``gpu``'s
    tensor cores compute them (module doc; :class:`Emulate` for the
    arguments). Without ``schedule`` each product's schedule comes from the
    library atlas (tcprobe.atlas) and its provenance is in the report."""
    return Emulate(gpu, instr=instr, schedule=schedule, model=model, strict=strict,
                   report=report, backend=backend)
