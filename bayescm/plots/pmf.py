r"""Exact predictive pmfs of a future confusion matrix: in ROC space and of a metric.

* :func:`roc_space_pmf`: every possible future confusion matrix as a point in ROC
  space, sized and coloured by its probability;
* :func:`metric_pmf`: a stem plot of the exact pmf of a metric of it, against the
  too-narrow plug-in binomial pmf.

Both after Lovell, Miller, Capra & Bradley, "Never mind the metrics -- what about the
uncertainty? Visualising binary confusion matrix metric distributions to put
performance in perspective", 2022, Figs. 4-5 and 8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayescm import exact
from bayescm import metrics as registry
from bayescm.data.confusion import ConfusionMatrix
from bayescm.plots._common import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["metric_pmf", "roc_space_pmf"]


def _single(cm: Any) -> tuple[ConfusionMatrix, str]:
    if not isinstance(cm, ConfusionMatrix):
        raise TypeError(
            f"cm must be a bayescm.ConfusionMatrix, got {type(cm).__name__}; build one with "
            "bcm.ConfusionMatrix(tp=..., fn=..., fp=..., tn=...)."
        )
    if len(cm) != 1:
        raise ValueError(
            f"cm holds {len(cm)} confusion matrices {list(cm.classifiers)}; these plots "
            f"show one, e.g. cm[{cm.classifiers[0]!r}]."
        )
    return cm, cm.classifiers[0]


def roc_space_pmf(
    cm: ConfusionMatrix,
    n_pos: int,
    n_neg: int,
    *,
    model: str = "beta_binomial",
    ax: Axes | None = None,
) -> Axes:
    r"""The exact predictive pmf of a future confusion matrix, drawn in ROC space.

    A future test set with ``n_pos`` positives and ``n_neg`` negatives has its
    confusion matrix fixed by :math:`(TP', TN')`; each of the
    :math:`(n_+ + 1)(n_- + 1)` possible matrices is the point

    .. math::

        x = FPR' = \frac{n_- - TN'}{n_-},\qquad y = TPR' = \frac{TP'}{n_+},

    with area and colour proportional to its probability from
    :func:`bayescm.exact.predictive_pmf` (Lovell et al. 2022, Figs. 4-5).  Points of
    probability exactly zero (the plug-in binomial model at a zero cell) are left out.
    The observed matrix is a star at its own :math:`(FPR, TPR)`; the dashed diagonal
    is chance.

    Parameters
    ----------
    cm
        One observed confusion matrix.
    n_pos, n_neg
        Actual positives and negatives of the future test set (whole numbers >= 1).
        The lattice has :math:`(n_+ + 1)(n_- + 1)` points; beyond some
        :math:`10^5` points a scatter plot gets slow.
    model
        ``"beta_binomial"`` (posterior predictive) or ``"binomial"`` (plug-in rates).
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        One scatter collection of lattice points (with a colour bar) and the observed
        point, the line labelled ``"observed"``.

    Raises
    ------
    TypeError, ValueError
        For a batch of matrices or a class size below 1, and as for
        :func:`bayescm.exact.predictive_pmf`.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import bayescm as bcm
    >>> from bayescm import plots
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> ax = plots.roc_space_pmf(cm, 20, 10)
    >>> len(ax.collections[0].get_offsets())  # (20 + 1) * (10 + 1) lattice points
    231
    >>> plt.close("all")
    """
    cm, name = _single(cm)
    for label, value in (("n_pos", n_pos), ("n_neg", n_neg)):
        if isinstance(value, int | np.integer) and not isinstance(value, bool) and value < 1:
            raise ValueError(f"{label} must be at least 1 to place matrices in ROC space "
                             f"(a rate needs a denominator), got {value}.")
    pmf = exact.predictive_pmf(cm, n_pos, n_neg, model=model)
    n_pos, n_neg = pmf.attrs["n_pos"], pmf.attrs["n_neg"]
    p = pmf.isel(classifier=0).values
    tp, tn = np.meshgrid(np.arange(n_pos + 1), np.arange(n_neg + 1), indexing="ij")
    keep = p > 0
    x, y, p = (n_neg - tn[keep]) / n_neg, tp[keep] / n_pos, p[keep]
    order = np.argsort(p, kind="stable")  # most probable on top
    x, y, p = x[order], y[order], p[order]

    ax = new_axes(ax, (6.0, 5.0))
    # the largest point spans about 1.3 lattice steps of a 4-inch-wide square
    step = 4 * 72 / max(n_pos, n_neg)
    s_max = min(400.0, (1.3 * step) ** 2)
    floor = 0.3 if p.size <= 2500 else 0.0  # show the lattice while it is not a carpet
    sc = ax.scatter(x, y, s=np.maximum(s_max * p / p.max(), floor), c=p, cmap="viridis",
                    vmin=0, vmax=p.max(), lw=0, zorder=2)
    ax.figure.colorbar(sc, ax=ax, label="P(TP', TN')", shrink=0.85)
    ax.plot([0, 1], [0, 1], ls="--", color="0.6", lw=1, zorder=1, label="chance")
    tp0, fn0, fp0, tn0 = (int(v) for v in cm.counts[0])
    if tp0 + fn0 > 0 and fp0 + tn0 > 0:
        ax.plot(fp0 / (fp0 + tn0), tp0 / (tp0 + fn0), "*", color="C3", mec="white", ms=16,
                ls="none", zorder=3, label=f"observed (tp={tp0}, fn={fn0}, fp={fp0}, tn={tn0})")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_aspect("equal")
    ax.set_xlabel("FPR' = (n$_-$ - TN') / n$_-$")
    ax.set_ylabel("TPR' = TP' / n$_+$")
    what = "posterior predictive" if model == "beta_binomial" else "plug-in binomial"
    ax.set_title(f"{name}: future test set of {n_pos} + {n_neg} cases ({what})",
                 fontsize="medium")
    ax.legend(loc="lower right", fontsize="small")
    return ax


def metric_pmf(
    cm: ConfusionMatrix,
    metric: str,
    n_pos: int,
    n_neg: int,
    *,
    model: str = "beta_binomial",
    compare_binomial: bool = True,
    ax: Axes | None = None,
) -> Axes:
    r"""Stem plot of the exact pmf of a metric of a future confusion matrix.

    Each stem is one value :math:`m` the metric can take on a future test set with
    ``n_pos`` positives and ``n_neg`` negatives, with height
    :math:`P(M = m) = \sum_{(i, j): M(i, n_+ - i, n_- - j, j) = m} P(TP' = i, TN' = j)`
    from :func:`bayescm.exact.metric_pmf`.  With ``compare_binomial`` the plug-in
    binomial pmf is overlaid as open circles: it is too narrow, the point of Lovell et
    al. (2022, Fig. 8).  The observed (plug-in) value is a dashed line.  Values of zero
    probability are left out; the mass where the metric is undefined or infinite is
    given in the legend.

    Parameters
    ----------
    cm
        One observed confusion matrix.
    metric
        Registry key or alias.
    n_pos, n_neg
        Actual positives and negatives of the future test set.
    model
        Model of the stems: ``"beta_binomial"`` or ``"binomial"``.
    compare_binomial
        Overlay the plug-in binomial pmf (when ``model`` is the beta-binomial and the
        observed matrix has cases of both classes).
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        A stem container labelled after ``model`` and, with ``compare_binomial``, a line
        of markers labelled ``"plug-in binomial"``.

    Raises
    ------
    KeyError, TypeError, ValueError
        As for :func:`bayescm.exact.metric_pmf`, and for a batch of matrices.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import bayescm as bcm
    >>> from bayescm import plots
    >>> cm = bcm.ConfusionMatrix(tp=31, fn=9, fp=13, tn=20)
    >>> ax = plots.metric_pmf(cm, "ba", 20, 20)
    >>> ax.containers[0].get_label()
    'beta-binomial (posterior predictive)'
    >>> plt.close("all")
    """
    cm, name = _single(cm)
    m = registry.get(metric)
    frame = exact.metric_pmf(cm, m, n_pos, n_neg, model=model).loc[name]
    n_pos, n_neg = frame.attrs["n_pos"], frame.attrs["n_neg"]
    ax = new_axes(ax, (7.0, 4.0))
    labels = {"beta_binomial": "beta-binomial (posterior predictive)",
              "binomial": "plug-in binomial"}
    values, probs, odd = _pmf_points(frame)
    ax.stem(values, probs, linefmt="C0-", markerfmt="C0o", basefmt=" ",
            label=labels[model] + _undefined(odd))
    stems = ax.containers[-1]
    stems.markerline.set_markersize(3)
    stems.stemlines.set_linewidth(1.0)
    span = [values]
    if compare_binomial and model == "beta_binomial" and cm.n_pos[0] > 0 and cm.n_neg[0] > 0:
        plug = exact.metric_pmf(cm, m, n_pos, n_neg, model="binomial").loc[name]
        bv, bp, bodd = _pmf_points(plug)
        ax.plot(bv, bp, "o", mfc="none", mec="C1", mew=1.0, ms=4.5, ls="none", zorder=3,
                label=labels["binomial"] + _undefined(bodd))
        span.append(bv[bp >= 1e-4 * bp.max()])
    with np.errstate(all="ignore"):
        observed = float(registry.evaluate(m, *cm.counts[0].astype(float)))
    if np.isfinite(observed):
        ax.axvline(observed, color="C3", ls="--", lw=1, zorder=0,
                   label=f"observed {m.key} = {observed:.3g}")
        span.append(np.array([observed]))
    # show where the mass is: values with at least 1e-4 of the largest mass, padded
    span[0] = values[probs >= 1e-4 * probs.max()] if values.size else values
    lo, hi = (f(np.concatenate(span)) for f in (np.min, np.max)) if values.size else (0, 1)
    pad = 0.04 * (hi - lo) if hi > lo else 0.05
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"{m.label} ({m.key}) of a future test set of {n_pos} + {n_neg} cases "
                  f"({name})")
    ax.set_ylabel("probability")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=2, frameon=False,
              fontsize="small", borderaxespad=0)
    return ax


def _pmf_points(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, float]:
    """(finite values, their probabilities) with mass > 0, and the undefined/infinite mass."""
    values = frame["value"].to_numpy(float)
    probs = frame["probability"].to_numpy(float)
    finite = np.isfinite(values)
    shown = finite & (probs > 0)
    return values[shown], probs[shown], float(probs[~finite].sum())


def _undefined(mass: float) -> str:
    return f", P(undefined) = {mass:.3f}" if mass >= 5e-4 else ""
