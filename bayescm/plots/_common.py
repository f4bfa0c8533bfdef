"""Helpers shared by the picture modules of :mod:`bayescm.plots` (private to it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["new_axes", "require"]


def new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax``, or the Axes of a new constrained-layout figure of ``size`` inches."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def require(result: Any, attrs: Sequence[str], message: str) -> None:
    """Refuse a ``result`` without the public attributes a picture reads.

    The pictures work on analysis results by their attributes (they do not import
    :mod:`bayescm.analysis`, whose results call them from ``.plot()``), so anything with
    those attributes is drawn; anything else gets ``message``.
    """
    if not all(hasattr(result, a) for a in attrs):
        raise TypeError(message)
