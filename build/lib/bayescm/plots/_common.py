"""Helpers shared by the picture modules of :mod:`bayescm.plots` (private to it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["new_axes"]


def new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax``, or the Axes of a new constrained-layout figure of ``size`` inches."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax
