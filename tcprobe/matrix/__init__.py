"""Matrix products from Python: :func:`matmul` on arrays, :func:`dot` on raw words."""

from .flow import dot, matmul, product_words

__all__ = ["dot", "matmul", "product_words"]
