r"""Comparisons across folds and data sets: the difference's posterior, simplex, forest.

* :func:`fold_difference` -- a :class:`bayescm.analysis.FoldComparison`: the posterior
  density of the mean difference A − B with the region of practical equivalence
  shaded and the three probabilities in the legend (a 1-D picture: no triangle is
  needed when one data set gives one difference).
* :func:`datasets_simplex` -- a :class:`bayescm.analysis.DatasetComparison`: each
  posterior draw's probabilities that a new data set shows A better, equivalence or B
  better, as points in a triangle (Corani, Benavoli, Demšar, Mangili & Zaffalon,
  "Statistical comparison of classifiers through Bayesian hierarchical modelling",
  2017, Fig. 4; baycomp's simplex).
* :func:`datasets_forest` -- the same result's per-data-set differences: the shrunk
  posterior mean and HDI of each :math:`\delta_i` next to its observed mean (the
  shrinkage is the gap between the two marks).

The pictures read results by their public attributes; they do not import
:mod:`bayescm.analysis`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayescm.plots._common import new_axes, require
from bayescm.stats import hdi

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["datasets_forest", "datasets_simplex", "fold_difference"]


def fold_difference(result: Any, *, ax: Axes | None = None, bins: int = 80) -> Axes:
    """The posterior of the mean difference across folds, ROPE shaded.

    Parameters
    ----------
    result
        From :func:`bayescm.analysis.compare_folds`.
    ax
        Axes to draw on; default a new figure's.
    bins
        Histogram bins of the draws (with ``plug_in=True`` the exact t density is
        drawn over them).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import bayescm as bcm, matplotlib.pyplot as plt
    >>> a = bcm.ConfusionMatrix(tp=[45, 47, 44, 46, 48], fn=[5, 3, 6, 4, 2],
    ...                         fp=[4, 6, 5, 3, 4], tn=[46, 44, 45, 47, 46])
    >>> b = bcm.ConfusionMatrix(tp=[42, 44, 43, 41, 45], fn=[8, 6, 7, 9, 5],
    ...                         fp=[7, 6, 8, 5, 7], tn=[43, 44, 42, 45, 43])
    >>> ax = bcm.plots.fold_difference(bcm.analysis.compare_folds(a, b, plug_in=True))
    >>> ax.get_xlabel()
    'acc: a − b'
    >>> plt.close("all")
    """
    require(result, ("difference", "rope", "p_a_better", "p_rope", "p_b_better", "names"),
            f"fold_difference draws a bayescm.analysis.FoldComparison, got "
            f"{type(result).__name__}; make one with bcm.analysis.compare_folds(...).")
    from scipy import stats

    a, b = result.names
    ax = new_axes(ax, (6.4, 3.6))
    x = np.asarray(result.difference, dtype=float)
    lo, hi = np.quantile(x, [0.001, 0.999])
    lo, hi = min(lo, -1.5 * result.rope), max(hi, 1.5 * result.rope)
    ax.hist(x, bins=np.linspace(lo, hi, bins), density=True, color="C0", alpha=0.35,
            label="posterior draws")
    if getattr(result, "plug_in", False) and len(np.atleast_1d(result.loc)) == 1:
        grid = np.linspace(lo, hi, 400)
        ax.plot(grid, stats.t.pdf(grid, result.df, float(result.loc[0]),
                                  float(result.scale[0])), color="C0", lw=1.5)
    ax.axvspan(-result.rope, result.rope, color="orange", alpha=0.25,
               label=f"ROPE ±{result.rope:g}: P = {result.p_rope:.3f}")
    ax.axvline(0, color="0.4", lw=0.8)
    ax.plot([], [], " ", label=f"P({a} better) = {result.p_a_better:.3f}")
    ax.plot([], [], " ", label=f"P({b} better) = {result.p_b_better:.3f}")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(f"{result.metric}: {a} − {b}")
    ax.set_ylabel("posterior density")
    ax.legend(frameon=False, fontsize="small")
    return ax


def _project(points: np.ndarray) -> np.ndarray:
    """Barycentric (left, top, right) to the plane: left (0, 0), right (1, 0),
    top (1/2, √3/2)."""
    _left, top, right = points.T
    return np.column_stack([right + top / 2, top * np.sqrt(3) / 2])


def datasets_simplex(result: Any, *, ax: Axes | None = None, max_points: int = 4000) -> Axes:
    """The posterior predictive of a new data set as points in the simplex.

    Each posterior draw gives the probabilities that a new data set's difference
    is in favour of A (left corner), within the ROPE (top) or in favour of B
    (right); the inner lines split the triangle where each region is the most
    probable, and the corners carry the fractions of draws in each part (the
    decision rule of :func:`bayescm.analysis.compare_datasets`).

    Parameters
    ----------
    result
        From :func:`bayescm.analysis.compare_datasets`.
    ax
        Axes to draw on; default a new figure's.
    max_points
        At most this many draws are drawn (a random thinning, seeded).

    Returns
    -------
    matplotlib.axes.Axes
    """
    require(result, ("predictive", "p_a_better", "p_rope", "p_b_better", "names"),
            f"datasets_simplex draws a bayescm.analysis.DatasetComparison, got "
            f"{type(result).__name__}; make one with bcm.analysis.compare_datasets(...).")
    a, b = result.names
    ax = new_axes(ax, (5.2, 4.8))
    pts = np.asarray(result.predictive, dtype=float)
    if len(pts) > max_points:
        pts = pts[np.random.default_rng(0).choice(len(pts), max_points, replace=False)]
    corners = _project(np.eye(3))
    ax.plot(*np.vstack([corners, corners[:1]]).T, color="0.3", lw=1)
    centre = _project(np.full((1, 3), 1 / 3))[0]
    for mid in _project(np.array([[0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])):
        ax.plot([centre[0], mid[0]], [centre[1], mid[1]], color="orange", lw=1)
    xy = _project(pts)
    ax.scatter(xy[:, 0], xy[:, 1], s=4, alpha=0.3, color="C0", lw=0)
    ax.text(*corners[0] + [0, -0.05], f"P({a} better) = {result.p_a_better:.3f}",
            ha="center", va="top")
    ax.text(*corners[1] + [0, 0.04], f"P(rope) = {result.p_rope:.3f}", ha="center",
            va="bottom")
    ax.text(*corners[2] + [0, -0.05], f"P({b} better) = {result.p_b_better:.3f}",
            ha="center", va="top")
    ax.set_xlim(-0.25, 1.25)
    ax.set_ylim(-0.2, 1.05)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"{result.metric}: a new data set", fontsize="medium")
    return ax


def datasets_forest(result: Any, *, ax: Axes | None = None, hdi_prob: float = 0.95) -> Axes:
    """Forest of the per-data-set differences: shrunk posterior vs observed mean.

    One row per data set (first on top): the HDI of :math:`\\delta_i` as a line, its
    posterior mean as a dot, the observed mean difference as a cross; the last row
    is a new data set's predictive; the ROPE is shaded.

    Parameters
    ----------
    result
        From :func:`bayescm.analysis.compare_datasets`.
    ax
        Axes to draw on; default a new figure's.
    hdi_prob
        Mass of the HDIs.

    Returns
    -------
    matplotlib.axes.Axes
        y tick labels are the data sets and ``"new data set"``.
    """
    require(result, ("delta", "delta_new", "observed_mean", "datasets", "rope"),
            f"datasets_forest draws a bayescm.analysis.DatasetComparison, got "
            f"{type(result).__name__}; make one with bcm.analysis.compare_datasets(...).")
    delta = np.asarray(result.delta, dtype=float)
    labels = [*map(str, result.datasets), "new data set"]
    draws = np.column_stack([delta, np.asarray(result.delta_new, dtype=float)])
    low, high = hdi(draws, hdi_prob, axis=0)
    ys = np.arange(len(labels))[::-1].astype(float)
    ax = new_axes(ax, (6.4, 1.0 + 0.25 * len(labels)))
    ax.axvspan(-result.rope, result.rope, color="orange", alpha=0.2, label="ROPE")
    ax.axvline(0, color="0.4", lw=0.8)
    ax.hlines(ys, low, high, color="C0", lw=2, label=f"posterior {hdi_prob:.0%} HDI")
    ax.plot(draws.mean(axis=0), ys, "o", color="C0", ms=4, label="posterior mean (shrunk)")
    ax.plot(result.observed_mean, ys[:-1], "x", color="C3", ms=5, label="observed mean")
    ax.set_yticks(ys, labels)
    a, b = getattr(result, "names", ("a", "b"))
    ax.set_xlabel(f"{getattr(result, 'metric', 'metric')}: {a} − {b}")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=2, frameon=False,
              fontsize="small")
    return ax
