r"""Prior sensitivity as a forest: each alternative's interval next to the baseline's.

:func:`prior_sensitivity` draws a :class:`bayescm.analysis.PriorSensitivity`: one row
per parameter and unit, in it one short line per alternative (its HDI, its posterior
mean as a dot), the baseline on top in black.  Rows whose lines line up are robust
to the priors; a row whose lines part says which prior carries the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bayescm.plots._common import new_axes, require

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from bayescm.analysis import PriorSensitivity

__all__ = ["prior_sensitivity"]

_BAND = 0.7  # share of a row's height the alternatives' lines spread over


def prior_sensitivity(result: PriorSensitivity, *, ax: Axes | None = None) -> Axes:
    """Forest plot of a prior-sensitivity analysis.

    One row per parameter and unit (labelled ``parameter[unit]``, first on top);
    within a row, from the top, the baseline (black) and each alternative (colours
    ``C0``, ``C1``, ...): a line from ``hdi_lower`` to ``hdi_upper`` and a dot at the
    posterior mean.  Alternatives that did not converge are drawn dashed.

    Parameters
    ----------
    result
        From :func:`bayescm.analysis.prior_sensitivity`.
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        y tick labels are the rows; the legend names the alternatives.

    Examples
    --------
    An expert's prior on the TPR, against flat (exact draws); ``sens.plot()`` draws the
    same:

    >>> import bayescm as bcm, matplotlib.pyplot as plt
    >>> model = bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6),
    ...                               priors={"tpr": bcm.priors.Beta(20, 4)})
    >>> sens = bcm.analysis.prior_sensitivity(model, "flat", scale=None, sampler="exact",
    ...                                       draws=200, random_seed=1)
    >>> ax = bcm.plots.prior_sensitivity(sens)
    >>> [t.get_text() for t in ax.get_yticklabels()]  # from the top
    ['tpr[cm]', 'tnr[cm]', 'prevalence[cm]']
    >>> plt.close("all")
    """
    require(result, ("table", "alternatives", "baseline"),
            f"prior_sensitivity draws a bayescm.analysis.PriorSensitivity, got "
            f"{type(result).__name__}; make one with bcm.analysis.prior_sensitivity(model).")
    baseline = result.baseline
    table = result.table
    names = list(result.alternatives.index)
    rows = list(table.loc[baseline].index)
    labels = [f"{p}[{u}]" if u else p for p, u in rows]
    k = len(names)
    ax = new_axes(ax, (6.4, 1.2 + 0.18 * len(rows) * max(k, 2)))
    ys = np.arange(len(rows))[::-1].astype(float)
    offsets = (np.linspace(_BAND / 2, -_BAND / 2, k) if k > 1 else np.zeros(1))
    converged = result.alternatives["converged"].astype(bool)
    for i, name in enumerate(names):
        color = "black" if name == baseline else f"C{i - 1}"
        part = table.loc[name].reindex(rows)
        y = ys + offsets[i]
        style = "-" if converged[name] else "--"
        ax.hlines(y, part["hdi_lower"], part["hdi_upper"], color=color, lw=2,
                  linestyles=style, label=name)
        ax.plot(part["mean"], y, "o", color="white", mec=color, mew=1.5, ms=5, zorder=3)
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    for y in ys[:-1] - 0.5:
        ax.axhline(y, color="0.9", lw=0.8, zorder=0)
    ax.set_xlabel(f"posterior mean and {result.hdi_prob:.0%} HDI")
    ax.grid(axis="x", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=min(k, 4), frameon=False,
              fontsize="small", handlelength=1.5, columnspacing=1.0, borderaxespad=0)
    return ax
