r"""Pictures of classifier uncertainty, for people who would rather look than read.

Every function draws into a matplotlib ``Axes`` (a new figure's when ``ax=None``) and
returns it, so figures compose with ArviZ plots and with each other:

* :func:`metric_posterior`: a metric's posterior per classifier, as a forest of HDIs
  or a ridge of densities, with the plug-in value marked (Tötsch & Hoffmann,
  "Classifier uncertainty: evidence, potential impact, and probabilistic treatment",
  2021, Figs. 3-5);
* :func:`roc_space_pmf` and :func:`metric_pmf`: the exact predictive distribution of
  a future confusion matrix in ROC space and of a metric of it (Lovell, Miller, Capra
  & Bradley, "Never mind the metrics -- what about the uncertainty? Visualising
  binary confusion matrix metric distributions to put performance in perspective",
  2022, Figs. 4-5 and 8);
* :func:`leaderboard`: rank probabilities of a probabilistic leaderboard as a heat map
  (Tötsch & Hoffmann 2021, Fig. 6);
* :func:`sample_size_curve`: HDI width against test-set size (Tötsch & Hoffmann
  2021, Fig. 7);
* :func:`coverage` and :func:`curve_bands`: interval coverage and ROC/PR curves with
  credible bands (Morais, "A Bayesian approach to machine learning model comparison",
  2023, Figs. 5, 7-8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import arviz as az
import numpy as np
import pandas as pd

from bayescm import exact
from bayescm import metrics as registry
from bayescm.analysis import Leaderboard, SampleSizePlan, sample_size_rule
from bayescm.analysis.posterior import flat, metric_draws, units_of
from bayescm.curves import Curve
from bayescm.data import ConfusionMatrix
from bayescm.summary import hdi, select_classifiers

if TYPE_CHECKING:
    from matplotlib.axes import Axes

NO_SKILL: dict[str, float] = {
    "bm": 0.0, "mcc": 0.0, "kappa": 0.0, "mk": 0.0, "mcc_bal": 0.0, "log_dor": 0.0,
    "ba": 0.5, "dor": 1.0, "lr_pos": 1.0, "lr_neg": 1.0,
}
"""Value of a metric for a classifier no better than guessing, where it is a constant;
:func:`metric_posterior` draws a reference line there."""

_INNER = 0.5  # mass of the thick inner interval of the forest


def _new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


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


# -- posteriors ---------------------------------------------------------------------------


def metric_posterior(
    idata: az.InferenceData,
    metric: str,
    *,
    classifiers: str | Sequence[str] | None = None,
    kind: str = "forest",
    hdi_prob: float = 0.95,
    plug_in: bool = True,
    ax: Axes | None = None,
) -> Axes:
    r"""Posterior of one metric for one or many classifiers, with HDI and plug-in value.

    One row per classifier (``"population/classifier"`` for latent-class fits), first
    classifier on top, in the style of Tötsch & Hoffmann (2021, Figs. 3-5):

    * ``kind="forest"``: the ``hdi_prob`` highest-density interval as a thin line, the
      50% HDI as a thick one, the posterior mean as a dot;
    * ``kind="ridge"``: a kernel density estimate of the draws (``arviz.kde``, with
      boundary correction), each scaled to the same height, the HDI shaded and the
      mean as a dot on the baseline.

    The plug-in value :math:`M(tp, fn, fp, tn)` of the observed counts is an ``x``
    (for labelled data only: latent-class models have none).  Metrics with a
    constant no-skill value (:data:`NO_SKILL`: 0 for ``bm``, ``mcc``, ``kappa``, ...)
    get a dashed reference line there.  Draws where the metric is undefined or
    infinite (``dor`` at a zero cell) are left out, as in :func:`bayescm.summary`.

    Parameters
    ----------
    idata
        Result of :func:`bayescm.fit` holding ``metric`` in its posterior.
    metric
        Registry key or alias (``"mcc"``, ``"informedness"``, ...).
    classifiers
        Classifier name(s) to show, in this order; default all.
    kind
        ``"forest"`` or ``"ridge"``.
    hdi_prob
        Mass of the highest-density interval, in (0, 1).
    plug_in
        Mark the plug-in value of the observed counts.
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        y tick labels are the classifiers; the plug-in markers are the line labelled
        ``"plug-in"``.

    Raises
    ------
    TypeError
        If ``idata`` is not an InferenceData.
    KeyError
        Unknown metric, metric not in the posterior, or unknown classifier.
    ValueError
        Unknown ``kind``, ``hdi_prob`` outside (0, 1), or ``classifiers`` given for a
        metric without a classifier dim.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import bayescm as bcm
    >>> from bayescm import plots
    >>> cms = bcm.ConfusionMatrix(tp=[26, 31], fn=[0, 9], fp=[2, 13], tn=[6, 20],
    ...                           classifier=["cocaine", "mid"])
    >>> idata = bcm.fit(bcm.models.three_beta(cms), sampler="exact", random_seed=1)
    >>> ax = plots.metric_posterior(idata, "mcc")
    >>> [t.get_text() for t in ax.get_yticklabels()]  # from the top
    ['cocaine', 'mid']
    >>> ax = plots.metric_posterior(idata, "tnr", kind="ridge", hdi_prob=0.9)
    >>> plt.close("all")
    """
    if kind not in ("forest", "ridge"):
        raise ValueError(f"kind must be 'forest' or 'ridge', got {kind!r}.")
    if not 0 < hdi_prob < 1:
        raise ValueError(f"hdi_prob must lie in (0, 1), got {hdi_prob!r}.")
    if not isinstance(idata, az.InferenceData):
        raise TypeError(
            f"idata must be an arviz.InferenceData from bayescm.fit, got {type(idata).__name__}; "
            "for counts fit them first, e.g. bcm.fit(bcm.models.three_beta(cm), "
            "sampler='exact')."
        )
    m = registry.get(metric)
    da = metric_draws(idata, m.key)
    da = select_classifiers(da, classifiers)
    units = units_of(da)
    rows = flat(da, units).reshape(-1, da.sizes["chain"] * da.sizes["draw"])
    coords = [[str(v) for v in da[u].values] for u in units]
    labels = ["/".join(k) for k in pd.MultiIndex.from_product(coords)] if units else [m.key]
    plugs = _plug_in(idata, m.key, da, units) if plug_in else None

    n = len(labels)
    ax = _new_axes(ax, (6.4, 1.4 + (0.42 if kind == "forest" else 0.75) * n))
    color = "C0"
    ys = np.arange(n)[::-1].astype(float)
    handles = []
    for y, row in zip(ys, rows, strict=True):
        x = row[np.isfinite(row)]
        if x.size < 2:
            continue
        lo, hi = (v[0] for v in hdi(x[None], hdi_prob))
        if kind == "forest":
            ax.hlines(y, lo, hi, color=color, lw=1.5)
            if hdi_prob > _INNER:
                lo50, hi50 = (v[0] for v in hdi(x[None], _INNER))
                ax.hlines(y, lo50, hi50, color=color, lw=5)
        else:
            _ridge(ax, x, y, lo, hi, color)
        ax.plot(x.mean(), y, "o", color="white", mec=color, mew=1.5, ms=6, zorder=3)
    if kind == "forest":
        handles.append(_proxy(color, 1.5, f"{hdi_prob:.0%} HDI"))
    else:
        from matplotlib.patches import Patch

        handles.append(Patch(color=color, alpha=0.4, lw=0, label=f"{hdi_prob:.0%} HDI"))
    if kind == "forest" and hdi_prob > _INNER:
        handles.append(_proxy(color, 5, f"{_INNER:.0%} HDI"))
    handles.append(ax.plot([], [], "o", color="white", mec=color, mew=1.5, ms=6,
                           label="posterior mean")[0])
    if plugs is not None and np.isfinite(plugs).any():
        (mark,) = ax.plot(plugs, ys, "x", color="C3", ms=8, mew=2, ls="none", zorder=4,
                          label="plug-in")
        handles.append(mark)
    if m.key in NO_SKILL:
        handles.append(ax.axvline(NO_SKILL[m.key], color="0.45", ls="--", lw=1, zorder=0,
                                  label=f"no skill ({NO_SKILL[m.key]:g})"))
    ax.set_yticks(ys, labels)
    top = n - 1 + (0.95 if kind == "ridge" else 0.6)
    ax.set_ylim(-0.6 if kind == "forest" else -0.35, top)
    ax.set_xlabel(f"{m.label} ({m.key})")
    ax.grid(axis="x", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.01), ncol=len(handles),
              frameon=False, fontsize="small", handlelength=1.5, columnspacing=1.0,
              borderaxespad=0)
    return ax


def _plug_in(idata: az.InferenceData, key: str, da: Any, units: list[str]) -> np.ndarray | None:
    """Plug-in values per row of ``da``, or None without labelled counts."""
    if "observed_data" not in idata.groups() or "counts" not in idata.observed_data:
        return None
    obs = idata.observed_data["counts"]
    if "cell" not in obs.dims or set(obs.dims) - {"cell"} != set(units):
        return None
    if "classifier" in units:
        obs = obs.sel(classifier=da["classifier"].values)
    with np.errstate(all="ignore"):
        values = registry.compute(obs, [key])[key]
    return np.asarray(values.transpose(*units).values, dtype=float).ravel()


def _ridge(ax: Axes, x: np.ndarray, y: float, lo: float, hi: float, color: str) -> None:
    if np.ptp(x) == 0:  # a point mass: a spike
        ax.vlines(x[0], y, y + 0.85, color=color, lw=1.5)
        return
    grid, pdf = az.kde(x)
    height = y + 0.85 * pdf / pdf.max()
    ax.fill_between(grid, y, height, color=color, alpha=0.12, lw=0)
    inside = (grid >= lo) & (grid <= hi)
    ax.fill_between(grid, y, height, where=inside, color=color, alpha=0.4, lw=0)
    ax.plot(grid, height, color=color, lw=1.2)
    ax.hlines(y, grid[0], grid[-1], color=color, lw=0.8)


def _proxy(color: str, lw: float, label: str) -> Any:
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, lw=lw, label=label)


# -- exact predictive pmfs (Lovell et al.) ---------------------------------------------------


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

    ax = _new_axes(ax, (6.0, 5.0))
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
    ax = _new_axes(ax, (7.0, 4.0))
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


# -- decisions -----------------------------------------------------------------------------


def leaderboard(board: Leaderboard, *, top: int = 10, ax: Axes | None = None) -> Axes:
    r"""Heat map of the rank probabilities of the top submissions of a leaderboard.

    Cell :math:`(i, r)` is :math:`P(R_i = r)`, the share of joint posterior draws in
    which submission :math:`i` holds rank :math:`r` (Tötsch & Hoffmann 2021, Fig. 6),
    for the ``top`` submissions by posterior mean and ranks ``1..top``; cells of at
    least 0.01 are annotated.  With prizes, the expected prize of each submission is
    written in a column on the right.

    Parameters
    ----------
    board
        A :class:`bayescm.analysis.Leaderboard`.
    top
        Submissions and ranks shown (fewer when the board has fewer).
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        One image of shape ``(top, top)`` and a colour bar.

    Raises
    ------
    TypeError
        If ``board`` is not a Leaderboard.
    ValueError
        If ``top`` is not a whole number >= 1.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import bayescm as bcm
    >>> from bayescm import plots
    >>> cms = bcm.ConfusionMatrix(tp=[45, 40, 30], fn=[5, 10, 20], fp=[3, 4, 9],
    ...                           tn=[47, 46, 41], classifier=["a", "b", "c"])
    >>> board = bcm.analysis.leaderboard(cms, "ba", prizes=[100, 50], random_seed=1)
    >>> ax = plots.leaderboard(board)
    >>> ax.images[0].get_array().shape
    (3, 3)
    >>> plt.close("all")
    """
    if not isinstance(board, Leaderboard):
        raise TypeError(f"board must be a bayescm.analysis.Leaderboard (from "
                        f"bcm.analysis.leaderboard), got {type(board).__name__}.")
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
        raise ValueError(f"top must be a whole number >= 1, got {top!r}.")
    probs = board.rank_probabilities.iloc[:top, :top]
    k, r = probs.shape
    ax = _new_axes(ax, (1.6 + 0.55 * r, 1.4 + 0.42 * k))
    table = probs.to_numpy(float)
    vmax = max(float(table.max()), 1e-9)
    im = ax.imshow(table, cmap="Blues", vmin=0, vmax=vmax, aspect="auto")
    for (i, j), value in np.ndenumerate(table):
        if value >= 0.01:
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize="x-small",
                    color="white" if value > 0.6 * vmax else "black")
    ax.set_xticks(range(r), [str(c) for c in probs.columns])
    ax.set_yticks(range(k), [str(i) for i in probs.index])
    ax.set_xlabel("rank")
    ax.set_ylabel(str(probs.index.name or "submission"))
    ax.set_title(f"P(rank) by {board.label}", fontsize="medium")
    prizes = "prize_share" in board.summary
    if prizes:
        shares = board.summary["prize_share"].iloc[:k].to_numpy(float)
        right = ax.secondary_yaxis("right")
        right.set_yticks(range(k), [f"{v:,.0f}" if v >= 100 else f"{v:.3g}" for v in shares])
        right.set_ylabel("expected prize")
        right.tick_params(length=0)
    ax.figure.colorbar(im, ax=ax, label="P(rank)", pad=0.02, shrink=0.9)
    return ax


def sample_size_curve(plan: SampleSizePlan, *, ax: Axes | None = None) -> Axes:
    r"""HDI width against test-set size, with the target and the chosen :math:`N`.

    The solid line is the ``assurance`` quantile of the simulated HDI widths at each
    evaluated :math:`N` (a share ``assurance`` of studies is at least this precise),
    the thin one their median; the target width is a horizontal line and the smallest
    :math:`N` reaching it a star (Tötsch & Hoffmann 2021, Fig. 7).  For rates the
    normal rule of :func:`bayescm.analysis.sample_size_rule` at :math:`p = 1/2`
    (about :math:`4 / \mathrm{MU}^2`, converted to the whole test set for TPR and TNR)
    is drawn dotted for comparison: width :math:`\mu(N)` solving
    :math:`N = c / \mu^2` (:math:`c = z^2 \approx 3.84` for accuracy at 95%, divided
    by the class fraction for TPR and TNR).
    Composite metrics have no such rule.  Both axes are logarithmic.

    Parameters
    ----------
    plan
        A :class:`bayescm.analysis.SampleSizePlan` from
        :func:`bayescm.analysis.sample_size`.
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        Lines labelled ``"target ..."``, ``"rule ..."`` (rates) and ``"N = ..."``.

    Raises
    ------
    TypeError
        If ``plan`` is not a SampleSizePlan.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayescm import analysis, plots
    >>> plan = analysis.sample_size(0.1, random_seed=1)
    >>> ax = plots.sample_size_curve(plan)
    >>> ax.get_xscale()
    'log'
    >>> plt.close("all")
    """
    if not isinstance(plan, SampleSizePlan):
        raise TypeError(f"plan must be a bayescm.analysis.SampleSizePlan (from "
                        f"bcm.analysis.sample_size), got {type(plan).__name__}.")
    curve = plan.curve
    n = curve.index.to_numpy(float)
    ax = _new_axes(ax, (6.4, 4.4))
    q = f"{plan.assurance:.0%}"
    ax.plot(n, curve["width_quantile"], "-", color="C0", lw=2,
            label=f"{q} quantile of the {plan.hdi_prob:.0%} HDI width")
    ax.plot(n, curve["median_width"], "-", color="C0", lw=1, alpha=0.6,
            label="median HDI width")
    ax.axhline(plan.target_width, color="C3", ls="--", lw=1,
               label=f"target width {plan.target_width:g}")
    if plan.n_rule is not None:
        # the rule for the whole test set: N = factor * sample_size_rule(width) = c / width^2
        factor = plan.n_rule / sample_size_rule(plan.target_width, hdi_prob=plan.hdi_prob)
        c = plan.n_rule * plan.target_width**2
        widths = np.geomspace(np.sqrt(c / n.max()), min(0.999, np.sqrt(c / n.min())), 200)
        rule_n = factor * sample_size_rule(widths, hdi_prob=plan.hdi_prob)
        ax.plot(rule_n, widths, ":", color="0.3", lw=1.5,
                label=f"normal rule N = {c:.3g} / width$^2$ (N = {plan.n_rule:.0f} at the "
                      "target)")
    if plan.n_required is not None:
        w = float(curve.loc[plan.n_required, "width_quantile"])
        ax.axvline(plan.n_required, color="C2", lw=1, alpha=0.7, zorder=0)
        ax.plot(plan.n_required, w, "*", color="C2", ms=14, mec="white", ls="none", zorder=3,
                label=f"N = {plan.n_required} ({q} of studies reach the target)")
    else:
        ax.text(0.98, 0.98, f"target not reached up to N = {int(n.max())}",
                transform=ax.transAxes, ha="right", va="top", color="C3")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [t * 10.0**e for e in range(-4, 1) for t in (1, 2, 5)]
    low, high = ax.get_ylim()
    ax.set_yticks([t for t in ticks if low <= t <= high])
    ax.set_yticks([], minor=True)
    ax.yaxis.set_major_formatter("{x:g}")
    ax.set_xlabel("test-set size N")
    ax.set_ylabel(f"{plan.hdi_prob:.0%} HDI width of {plan.metric}")
    ax.grid(which="major", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    ax.legend(loc="lower left", fontsize="small")
    return ax


# -- intervals and curves ------------------------------------------------------------------


def coverage(
    frames: Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame] | pd.DataFrame,
    *,
    level: float = 0.95,
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
    level
        Nominal level, drawn as a dashed line.
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
        ``level`` outside (0, 1).

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
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}.")
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
    ax = _new_axes(ax, (7.0, 4.4))
    for label, frame in frames.items():
        p = frame.index.to_numpy(float)
        cov = frame["coverage"].to_numpy(float)
        (line,) = ax.plot(p, cov, lw=1.2, label=str(label))
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
    ax = _new_axes(ax, (6.0, 6.0))
    lines = []
    for i, (label, curve) in enumerate(curves.items()):
        curve.plot(ax, label=label or None, reference=i == 0)
        lines.append(ax.get_lines()[-1] if i else ax.get_lines()[0])
    reference = ax.get_lines()[1]
    handles = [*lines, reference]
    if ax.collections:
        from matplotlib.patches import Patch

        level = next(iter(curves.values())).level
        handles.append(Patch(color="0.6", alpha=0.35, label=f"{level:.0%} pointwise bands"))
    ax.legend(handles=handles, loc="lower right" if kinds == {"roc"} else "lower left",
              fontsize="small")
    return ax
