"""Format codecs, the fixed-point accumulator engine and named GPU profiles.

Installed as ``tcprobe.models``. Everything here is integer and bit
arithmetic on raw words; floats appear only when printing.
"""

from . import kernel_cache as _kernel_cache

_kernel_cache.configure()  # before any kernel is made: numba reads the folder then
