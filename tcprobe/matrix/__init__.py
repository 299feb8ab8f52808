"""Matrix products from Python: :func:`matmul` on arrays, :func:`dot` on raw words."""

from .entry import matmul
from .flow import matmul_words, product_words
from .words import dot

__all__ = ["dot", "matmul", "matmul_words", "product_words"]
