"""The probe ladder: one module per step. Installed as ``tcprobe.probes``."""
