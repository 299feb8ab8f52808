"""Matrix products from Python: :func:`matmul` on arrays, :func:`dot` on raw words,
:func:`run` (the one pipeline) on a :class:`Problem` of words."""

from .entry import matmul
from .pipeline import Problem, run
from .words import dot

__all__ = ["Problem", "dot", "matmul", "run"]
