r"""Pictures of slices: disparity forests and monitoring timelines.

:func:`disparity` draws a :class:`bayescm.analysis.Disparity`: one row per group,
its difference from the reference (the rest, the best group, or a named group) as
an HDI line with a dot at the posterior mean, the band of differences smaller than
the threshold shaded.  :func:`alert_timeline` draws a
:class:`bayescm.analysis.Alerts`: per series the posterior median of the metric per
window with its HDI band, the threshold as a dashed line and the first alert marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bayescm.plots._common import new_axes, require

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from bayescm.analysis.alerts import Alerts
    from bayescm.analysis.disparity import Disparity

__all__ = ["alert_timeline", "disparity"]


def disparity(result: Disparity, *, ax: Axes | None = None) -> Axes:
    """Forest of each group's metric minus its reference's.

    Parameters
    ----------
    result
        A :class:`~bayescm.analysis.Disparity` (:func:`bayescm.analysis.disparity`);
        its groups without cases are left out of the picture as of the gaps.
    ax
        Where to draw; None opens a figure whose height follows the number of groups.

    Returns
    -------
    matplotlib.axes.Axes
        One row per group with cases (first on top), the band ``|difference| <= threshold``
        shaded; the title gives P(largest gap > threshold).

    Examples
    --------
    >>> import numpy as np, bayescm as bcm, matplotlib.pyplot as plt
    >>> cm = bcm.ConfusionMatrix.from_predictions(
    ...     [1, 1, 0, 1, 1, 0, 1, 0], [1, 0, 0, 1, 1, 1, 1, 0],
    ...     groups={"site": list("aabbccdd")})
    >>> fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=200, random_seed=1)
    >>> ax = bcm.plots.disparity(bcm.analysis.disparity(fit, "acc", threshold=0.1))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['site=a', 'site=b', 'site=c', 'site=d']
    >>> plt.close("all")
    """
    require(result, ("to_frame", "metric", "reference", "groups", "threshold", "hdi_prob"),
            f"disparity draws a bayescm.analysis.Disparity, got {type(result).__name__}; make "
            "one with bcm.analysis.disparity(fit).")
    frame = result.to_frame().xs(f"{result.metric} vs {result.reference}", level="measure")
    frame = frame[~result.groups.loc[frame.index, "empty"].to_numpy()]
    ax = new_axes(ax, (6.4, 1.4 + 0.3 * len(frame)))
    ys = np.arange(len(frame))[::-1].astype(float)
    t = result.threshold
    ax.axvspan(-t, t, color="0.9", zorder=0, label=f"|difference| <= {t:g}")
    ax.axvline(0, color="0.5", lw=0.8)
    ax.hlines(ys, frame["hdi_lower"], frame["hdi_upper"], color="C0", lw=2,
              label=f"{result.hdi_prob:.0%} HDI")
    ax.plot(frame["mean"], ys, "o", color="C0", label="posterior mean")
    ax.set_yticks(ys, frame.index.tolist())
    ax.set_xlabel(f"{result.metric} minus {result.reference}")
    ax.set_title(f"P({result.metric} gap > {t:g}) = {result.probability('gap'):.3f}")
    ax.legend(loc="best", fontsize="small")
    return ax


def alert_timeline(result: Alerts, *, ax: Axes | None = None) -> Axes:
    """Timeline of a monitored metric: median, HDI band, threshold, first alert.

    Parameters
    ----------
    result
        An :class:`~bayescm.analysis.Alerts` (:func:`bayescm.analysis.alerts`); every
        series it holds is drawn in its own colour, empty windows skipped.
    ax
        Target Axes, or None for a new 7.2 x 3.6 inch figure.

    Returns
    -------
    matplotlib.axes.Axes
        The windows on x, the metric on y: per series a line of medians in its HDI
        band and its first alert as a dotted vertical line; the threshold dashed.

    Examples
    --------
    >>> import numpy as np, pandas as pd, bayescm as bcm, matplotlib.pyplot as plt
    >>> rng = np.random.default_rng(0)
    >>> t = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 28, 800), "D")
    >>> y = rng.random(800) < 0.5
    >>> cm = bcm.ConfusionMatrix.from_predictions(y, y ^ (rng.random(800) < 0.1), time=t,
    ...                                           window="7D")
    >>> fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=200, random_seed=1)
    >>> ax = bcm.plots.alert_timeline(bcm.analysis.alerts(fit, "tpr", threshold=0.8))
    >>> len(ax.get_lines()) >= 2  # the median line and the threshold
    True
    >>> plt.close("all")
    """
    require(result, ("table", "threshold"),
            f"alert_timeline draws a bayescm.analysis.Alerts, got {type(result).__name__}; "
            "make one with bcm.analysis.alerts(fit).")
    ax = new_axes(ax, (7.2, 3.6))
    table = result.table
    for i, (series, part) in enumerate(table.groupby("series", sort=False)):
        color = f"C{i}"
        part = part[~part["empty"]]
        name = series or result.metric
        ax.fill_between(part["window"], part["hdi_lower"], part["hdi_upper"], color=color,
                        alpha=0.25, lw=0)
        ax.plot(part["window"], part["median"], "o-", color=color, label=f"{name} median")
        when = result.first.get(series)
        if when is not None and not (isinstance(when, float) and np.isnan(when)) and \
                str(when) != "NaT":
            ax.axvline(when, color=color, ls=":", lw=1.5, label=f"{name}: first alert")
    ax.axhline(result.threshold, color="black", ls="--", lw=1,
               label=f"threshold {result.threshold:g}")
    ax.set_xlabel(result.window)
    ax.set_ylabel(result.metric)
    # full dates ("2025-02-17") overlap after a few windows: matplotlib's concise labels
    if np.issubdtype(np.asarray(table["window"]).dtype, np.datetime64):
        import matplotlib.dates as mdates

        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_title(f"P({result.event}) >= {result.prob:g} raises an alert "
                 f"({result.hdi_prob:.0%} HDI band)")
    ax.legend(loc="best", fontsize="small")
    return ax
