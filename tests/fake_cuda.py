"""The stand-in CUDA driver for tests: tcprobe.devices.standin_driver, under
the names the tests use."""

from tcprobe.devices.standin_driver import KernelStandIn, StandInDriver, d_word, unpack_smem_words

FakeDriver = StandInDriver

__all__ = ["FakeDriver", "KernelStandIn", "StandInDriver", "d_word", "unpack_smem_words"]
