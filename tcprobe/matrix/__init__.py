"""Matrix products from Python: :func:`matmul` on arrays, :func:`dot` on raw words."""

from .entry import matmul
from .flow import dot, matmul_words, product_words

__all__ = ["dot", "matmul", "matmul_words", "product_words"]
