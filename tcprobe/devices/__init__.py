"""Devices that execute cases: simulated silicon, MMA-Sim, replays, CUDA."""
