"""Encode the descriptors the smem harnesses pass to wgmma and tcgen05.mma.

Shared-memory matrix descriptors (64 bits; PTX ISA, "matrix descriptor"):

=========  ===========================================================
bits       field
=========  ===========================================================
0-13       start address >> 4 (the kernel adds the buffer's address)
16-29      leading-dimension byte offset (LBO) >> 4
32-45      stride-dimension byte offset (SBO) >> 4
46-48      tcgen05 only: the fixed version value 0b001
49-51      matrix base offset (0 for the layouts used here)
52         tcgen05 only: LBO mode (0: relative offset)
62-63      wgmma swizzle: 0 none, 1 128B, 2 64B, 3 32B
61-63      tcgen05 swizzle: 0 none, 1 128B (32B atom), 2 128B, 4 64B, 6 32B
=========  ===========================================================

The tcgen05 instruction descriptor (32 bits) carries the types, shape,
sparsity and scale choices; its field positions follow the PTX ISA tables
for kind::tf32/f16/f8f6f4/i8 and for the block-scaled kinds. The values the
tcgen05 write-up used on a B200 (tf32 0x04020910, bf16 0x04020490, s8
0x040204A0, nvfp4 M128N8 0x08020480 / 0x08820480) are the test vectors.
"""

from __future__ import annotations

from tcprobe import descriptor
from tcprobe.layout import Layout
from tcprobe.models.datapath import Datapath

WGMMA_SWIZZLE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
TCGEN05_SWIZZLE = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}

class DescriptorError(ValueError):
    """A field that does not fit its descriptor, or a layout no descriptor describes."""


def _field(value: int, bits: int, name: str) -> int:
    if not 0 <= value < (1 << bits):
        raise DescriptorError(f"{name} = {value} does not fit in {bits} bits")
    return value


def _offset16(nbytes: int, name: str) -> int:
    if nbytes % 16:
        raise DescriptorError(f"{name} = {nbytes} bytes is not a multiple of 16")
    return _field(nbytes >> 4, 14, name)


def smem_descriptor(family: str, lbo_bytes: int, sbo_bytes: int, start_bytes: int = 0,
                    swizzle: str = "none", base_offset: int = 0) -> int:
    """The 64-bit shared-memory matrix descriptor of ``family`` (wgmma or tcgen05)."""
    d = _offset16(start_bytes, "start address")
    d |= _offset16(lbo_bytes, "LBO") << 16
    d |= _offset16(sbo_bytes, "SBO") << 32
    d |= _field(base_offset, 3, "base offset") << 49
    if family == "wgmma":
        if swizzle not in WGMMA_SWIZZLE:
            raise DescriptorError(f"wgmma swizzle {swizzle!r} (known: {', '.join(WGMMA_SWIZZLE)})")
        d |= WGMMA_SWIZZLE[swizzle] << 62
    elif family == "tcgen05":
        if swizzle not in TCGEN05_SWIZZLE:
            raise DescriptorError(f"tcgen05 swizzle {swizzle!r} (known: {', '.join(TCGEN05_SWIZZLE)})")
        d |= 0b001 << 46
        d |= TCGEN05_SWIZZLE[swizzle] << 61
    else:
        raise DescriptorError(f"no matrix descriptor for family {family!r}")
    return d


def decode_smem_descriptor(desc: int, family: str) -> dict:
    """The fields of a matrix descriptor (bytes for addresses and offsets)."""
    out = {"start_bytes": (desc & 0x3FFF) << 4, "lbo_bytes": ((desc >> 16) & 0x3FFF) << 4,
           "sbo_bytes": ((desc >> 32) & 0x3FFF) << 4, "base_offset": (desc >> 49) & 7}
    if family == "tcgen05":
        out["version"] = (desc >> 46) & 7
        out["lbo_mode"] = (desc >> 52) & 1
        inv = {v: k for k, v in TCGEN05_SWIZZLE.items()}
        out["swizzle"] = inv.get((desc >> 61) & 7, f"reserved {(desc >> 61) & 7}")
    else:
        inv = {v: k for k, v in WGMMA_SWIZZLE.items()}
        out["swizzle"] = inv[(desc >> 62) & 3]
    return out


def slot_bytes(slots_per_16_bytes: int) -> float:
    return 16 / slots_per_16_bytes


def descriptor_for_layout(family: str, layout: Layout, slots_per_16_bytes: int) -> int:
    """The descriptor of a K-major, unswizzled core-matrix layout over
    (row or column, k), as :func:`tcprobe.layout.core_matrix_layout` builds:
    shape ((8, R/8), (T, K/T)), stride ((T, SBO), (1, LBO)) in slots, where T
    slots fill the 16 bytes of a core-matrix row. Offsets are converted to
    bytes; a layout of another form raises DescriptorError."""
    (rows, ks), (rs, kstr) = layout.shape, layout.stride
    rows, ks, rs, kstr = (tuple(x) if isinstance(x, tuple) else (x,) for x in (rows, ks, rs, kstr))
    t = slots_per_16_bytes
    ok = (len(rows) in (1, 2) and rows[0] == 8 and rs[0] == t and ks[0] == t and kstr[0] == 1
          and len(ks) in (1, 2))
    if not ok:
        raise DescriptorError(f"layout {layout} is not a K-major unswizzled core-matrix layout "
                              f"with {t} slots a 16-byte row")
    sbo = rs[1] if len(rows) == 2 else 8 * t
    lbo = kstr[1] if len(ks) == 2 else 8 * t
    per = 16 // t if t <= 16 else None
    if per is not None:
        lbo_b, sbo_b = lbo * per, sbo * per
    else:  # several slots a byte (packed fp4: 32 slots in 16 bytes)
        if (lbo * 16) % t or (sbo * 16) % t:
            raise DescriptorError(f"layout {layout}: offsets are not whole bytes")
        lbo_b, sbo_b = lbo * 16 // t, sbo * 16 // t
    return smem_descriptor(family, lbo_b, sbo_b)


def instruction_descriptor(dp: Datapath, m: int, n: int, *, sparse_id2: int = 0,
                           negate_a: bool = False, negate_b: bool = False,
                           a_major_mn: bool = False, b_major_mn: bool = False,
                           scale_a_id: int = 0, scale_b_id: int = 0, max_shift: int = 0) -> int:
    """The 32-bit tcgen05 instruction descriptor of datapath ``dp`` at shape
    M x N, in the harness's spelling of the fields (the encoder itself is
    :mod:`tcprobe.descriptor`)."""
    if dp.family != "tcgen05":
        raise DescriptorError(f"{dp.id} is not a tcgen05 datapath")
    if m not in (64, 128, 256) or n % 8 or not 8 <= n <= 256:
        raise DescriptorError(f"no tcgen05 shape M={m}, N={n}")
    try:
        return descriptor.encode(dp, m=m, n=n, sparse_selector=sparse_id2, negate_a=negate_a,
                                 negate_b=negate_b, transpose_a=a_major_mn,
                                 transpose_b=b_major_mn, a_sf_id=scale_a_id,
                                 b_sf_id=scale_b_id, max_shift=max_shift)
    except ValueError as e:  # the encoder's DescriptorError, or a ModelError for the types
        raise DescriptorError(str(e)) from None
