"""Benchmark results item by item: each model's accuracy with shared item difficulty.

The family's folder holds its builder and hooks (``model``), the choice of centred
or non-centred cluster effects (``centring``) and its private parts
(``quadrature``: a new item's expected score; ``kernel``: the compiled density;
``newset``: the accuracy a new set of items would show).
"""

from bayescm.models.items.model import Items, items

__all__ = ["Items", "items"]
