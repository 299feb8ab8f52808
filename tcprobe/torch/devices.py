"""Routed ops on tensors that live on another device (a CUDA GPU's).

The words are read on the host and the product runs where ``backend=``
says (the CPU engine; ``'cuda'``: the CUDA kernel on the GPU torch sees);
D goes back to the device the operands came from, and an out= or in-place
target on that device is written in place. The words do not depend on
where the tensors live: a device tensor's bits are copied exactly.
"""

from __future__ import annotations

import torch
from torch.utils import _pytree as pytree

from .adapter import Unroutable


def tensor_device(args, kwargs) -> torch.device | None:
    """The one device other than the CPU that the tensor arguments live on
    (None: all on the CPU). Unroutable where they live on several devices,
    or on one whose tensors hold no values (``meta``)."""
    tensors = [t for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    found = {t.device for t in tensors if t.device.type != "cpu"}
    if not found:
        return None
    if len(found) > 1 or any(t.device.type == "cpu" and t.dim() > 0 for t in tensors):
        where = sorted({str(t.device) for t in tensors})
        raise Unroutable(f"operands on several devices ({', '.join(where)})")
    device = found.pop()
    if device.type == "meta":
        raise Unroutable("meta tensors hold no values")
    return device


def run_on_host(route, args, kwargs, device: torch.device, copy=torch.Tensor.cpu):
    """``route(*args, **kwargs)`` with every tensor argument on ``device``
    copied to the host (``copy``); its result back on ``device``: written
    into the original of an out= or in-place target (the route returns the
    host copy it wrote), else moved there."""
    originals: dict[int, torch.Tensor] = {}

    def to_host(x):
        if isinstance(x, torch.Tensor) and x.device == device:
            host = copy(x)
            originals[id(host)] = x
            return host
        return x

    host_args, host_kwargs = pytree.tree_map(to_host, (args, kwargs))
    out = route(*host_args, **host_kwargs)
    target = originals.get(id(out))
    if target is None:
        return out.to(device)
    if target.shape != out.shape:
        target.resize_(out.shape)
    target.copy_(out)
    return target
