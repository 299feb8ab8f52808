"""The tiles layer: the physical vocabulary devices, probes and flows share.

- :mod:`.layout`: (shape):(stride) layouts, their composition and reorderings;
  the documented register-fragment and core-matrix layouts.
- :mod:`.spec`: ``TileSpec`` (buffer sizes of one tile) and ``PhysicalBatch``
  (the buffers of T tiles).
- :mod:`.harness`: ``Harness``, how one logical case travels through a tile.
- :mod:`.tables`: the documented harness of each family (``harness_for``).
- :mod:`.descriptors`: the shared-memory matrix descriptors and the tcgen05
  instruction descriptor.

It imports the ground floor (``tcprobe.models``) and nothing else.
"""
