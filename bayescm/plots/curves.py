r"""Curves with uncertainty bands: interval coverage, and ROC/PR curves with credible bands.

* :func:`coverage`: coverage of interval methods against the true proportion, with
  the nominal level;
* :func:`curve_bands`: one or several ROC or precision-recall curves with pointwise
  credible bands on one Axes.

After Morais, "A Bayesian approach to machine learning model comparison", 2023,
Figs. 5, 7-8.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescm.curves.curve import Curve
from bayescm.deprecation import renamed_kwargs
from bayescm.plots._common import new_axes
from bayescm.plots.posteriors import plain
from bayescm.stats import check_hdi_prob

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["coverage", "curve_bands"]


@renamed_kwargs(level="hdi_prob")
def coverage(
    frames: Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame] | pd.DataFrame,
    *,
    hdi_prob: float = 0.95,
    ax: Axes | None = None,
) -> Axes:
    r"""Coverage of interval methods against the true proportion, with the nominal level.

    One line per frame of :func:`bayescm.intervals.coverage`: the coverage
    :math:`C(p)` (exact or simulated) at each true proportion :math:`p`, saw-toothed
    because the data are discrete (Morais 2023, Fig. 5; Brown, Cai & DasGupta,
    "Interval estimation for a binomial proportion", 2001).  Simulated frames get a
    band of :math:`\pm 2` Monte Carlo standard errors.

    Parameters
    ----------
    frames
        A dict label -> frame, a list of frames (labelled by their method) or one frame.
    hdi_prob
        Nominal mass of the intervals, drawn as a dashed line (``level=`` is a
        deprecated alias).
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        One line per frame, then the nominal line.

    Raises
    ------
    ValueError
        For no frames, a frame without index ``p`` and column ``coverage``, or
        ``hdi_prob`` outside (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> from bayescm import intervals, plots
    >>> grid = np.linspace(0.01, 0.99, 99)
    >>> ax = plots.coverage({m: intervals.coverage(m, 30, grid) for m in ("wald", "wilson")})
    >>> len(ax.get_lines())
    3
    >>> plt.close("all")
    """
    level = check_hdi_prob(hdi_prob)
    if isinstance(frames, pd.DataFrame):
        frames = [frames]
    if not isinstance(frames, Mapping):
        frames = {str(f.attrs.get("method", f"frame {i}")): f for i, f in enumerate(frames)}
    if not frames:
        raise ValueError("frames is empty: pass frames of bayescm.intervals.coverage.")
    for label, frame in frames.items():
        if frame.index.name != "p" or "coverage" not in frame:
            raise ValueError(
                f"Frame {label!r} is not a result of bayescm.intervals.coverage (index 'p', "
                f"column 'coverage'); got index {frame.index.name!r} and columns "
                f"{list(frame.columns)}."
            )
    ax = new_axes(ax, (7.0, 4.4))
    for label, frame in frames.items():
        p = frame.index.to_numpy(float)
        cov = frame["coverage"].to_numpy(float)
        (line,) = ax.plot(p, cov, lw=1.2, label=plain(label))
        se = frame["coverage_se"].to_numpy(float) if "coverage_se" in frame else None
        if se is not None and (se > 0).any():
            ax.fill_between(p, cov - 2 * se, np.minimum(cov + 2 * se, 1), color=line.get_color(),
                            alpha=0.15, lw=0)
    ax.axhline(level, color="0.2", ls="--", lw=1, label=f"nominal {level:.0%}")
    sizes = {int(v) for f in frames.values() if "n" in f for v in np.unique(f["n"])}
    ax.set_xlabel("true proportion p")
    ax.set_ylabel("coverage")
    if len(sizes) == 1:
        ax.set_title(f"Coverage of {level:.0%} intervals, n = {sizes.pop()}", fontsize="medium")
    ax.set_xlim(0, 1)
    ax.set_ylim(top=1.005)
    ax.grid(color="0.92", lw=0.8)
    ax.set_axisbelow(True)
    ax.legend(loc="lower center", fontsize="small", ncol=min(4, len(frames) + 1))
    return ax


def curve_bands(
    curves: Curve | Sequence[Curve] | Mapping[str, Curve],
    *,
    ax: Axes | None = None,
) -> Axes:
    r"""Draw one or several ROC or precision-recall curves with their bands on one Axes.

    Delegates to :meth:`bayescm.curves.Curve.plot` for each curve (pointwise HDI band of
    the y-axis rate shaded, bars for the x-axis rate, the area's posterior in the
    legend; Morais 2023, Figs. 7-8); the chance line (ROC) or no-skill line (PR) is
    drawn once, for the first curve.  The legend lists each curve with its area.

    Parameters
    ----------
    curves
        A :class:`bayescm.curves.Curve`, a list of them (named ``"curve 1"``, ... when
        more than one) or a dict label -> Curve; all of one kind.
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        One line per curve, then the reference line.

    Raises
    ------
    TypeError
        For anything that is not a Curve.
    ValueError
        For no curves, or ROC and PR curves mixed.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> from bayescm import curves, plots
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1, 0], 100)
    >>> a = curves.roc(rng.normal(y, 1.0), y, draws=200, random_seed=1)
    >>> b = curves.roc(rng.normal(0.5 * y, 1.0), y, draws=200, random_seed=1)
    >>> ax = plots.curve_bands({"strong": a, "weak": b})
    >>> len(ax.get_lines())
    3
    >>> plt.close("all")
    """
    if isinstance(curves, Curve):
        curves = [curves]
    if not isinstance(curves, Mapping):
        curves = list(curves)
        curves = ({"": curves[0]} if len(curves) == 1
                  else {f"curve {i + 1}": c for i, c in enumerate(curves)})
    if not curves:
        raise ValueError("curves is empty: pass one or more bayescm.curves.Curve objects.")
    bad = [str(k) for k, c in curves.items() if not isinstance(c, Curve)]
    if bad:
        raise TypeError(f"Not bayescm.curves.Curve objects: {bad}; make them with "
                        "bayescm.curves.roc or bayescm.curves.precision_recall.")
    kinds = {c.kind for c in curves.values()}
    if len(kinds) > 1:
        raise ValueError("ROC and precision-recall curves share no axes; plot them apart.")
    ax = new_axes(ax, (6.0, 6.0))
    lines = []
    for i, (label, curve) in enumerate(curves.items()):
        curve.plot(ax, label=plain(label) if label else None, reference=i == 0)
        lines.append(ax.get_lines()[-1] if i else ax.get_lines()[0])
    reference = ax.get_lines()[1]
    handles = [*lines, reference]
    if ax.collections:
        from matplotlib.patches import Patch

        level = next(iter(curves.values())).hdi_prob
        handles.append(Patch(color="0.6", alpha=0.35, label=f"{level:.0%} pointwise bands"))
    ax.legend(handles=handles, loc="lower right" if kinds == {"roc"} else "lower left",
              fontsize="small")
    return ax
