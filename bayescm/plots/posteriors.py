r"""Posteriors of a metric per classifier: a forest of HDIs or a ridge of densities.

:func:`metric_posterior` draws a metric's posterior per classifier, with the plug-in
value marked and a no-skill reference line (:data:`NO_SKILL`), in the style of Tötsch &
Hoffmann, "Classifier uncertainty: evidence, potential impact, and probabilistic
treatment", 2021, Figs. 3-5.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.confusion import unit_of
from bayescm.inference.posterior import flat, metric_draws, units_of
from bayescm.plots._common import new_axes
from bayescm.stats import hdi
from bayescm.summary import select_classifiers

if TYPE_CHECKING:
    import arviz as az
    from matplotlib.axes import Axes

__all__ = ["NO_SKILL", "metric_posterior", "plain"]

NO_SKILL: dict[str, float] = {
    "bm": 0.0, "mcc": 0.0, "kappa": 0.0, "mk": 0.0, "mcc_bal": 0.0, "log_dor": 0.0,
    "ba": 0.5, "dor": 1.0, "lr_pos": 1.0, "lr_neg": 1.0,
}
"""Value of a metric for a classifier no better than guessing, where it is a constant;
:func:`metric_posterior` draws a reference line there."""

_INNER = 0.5  # mass of the thick inner interval of the forest


def plain(text: str) -> str:
    r"""``text`` shown as written by matplotlib: a user's name is never TeX, so each
    ``$`` is escaped (two of them would start mathtext, which fails on most names).

    >>> plain("cost $5 or $6")
    'cost \\$5 or \\$6'
    """
    return str(text).replace("$", r"\$")


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
        Key or alias of the registry that answers for the fit
        (:func:`bayescm.metrics.registry_for`): binary keys (``"mcc"``,
        ``"informedness"``, ...) or, for a K-class fit, the multiclass ones: overall
        (``"acc"``, ``"kappa"``), averaged (``"f1_macro"``, ``"tpr_weighted"``, ...) and
        per class (``"tpr"``: one row per classifier and class).
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
        If ``idata`` is not an InferenceData or ``ax`` not an Axes.
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
    if ax is not None and not hasattr(ax, "hlines"):
        raise TypeError(f"ax must be a matplotlib Axes (or None for a new figure), got "
                        f"{type(ax).__name__}.")
    if not idata_mod.is_inference_data(idata):
        raise TypeError(
            f"idata must be an arviz.InferenceData from bayescm.fit, got {type(idata).__name__}; "
            "for counts fit them first, e.g. bcm.fit(bcm.models.three_beta(cm), "
            "sampler='exact')."
        )
    reg = registry.registry_for(idata)  # binary keys, or K-class ones (f1_macro, ...)
    m = reg.get(metric)
    da = metric_draws(idata, m.key)
    da = select_classifiers(da, classifiers)
    units = units_of(da)
    rows = flat(da, units).reshape(-1, da.sizes["chain"] * da.sizes["draw"])
    coords = [[str(v) for v in da[u].values] for u in units]
    labels = ["/".join(k) for k in pd.MultiIndex.from_product(coords)] if units else [m.key]
    plugs = _plug_in(idata, m.key, da, units, reg) if plug_in else None

    n = len(labels)
    ax = new_axes(ax, (6.4, 1.4 + (0.42 if kind == "forest" else 0.75) * n))
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
    if m.key in NO_SKILL and not (reg.multiclass and NO_SKILL[m.key]):  # 1/K-dependent
        handles.append(ax.axvline(NO_SKILL[m.key], color="0.45", ls="--", lw=1, zorder=0,
                                  label=f"no skill ({NO_SKILL[m.key]:g})"))
    ax.set_yticks(ys, [plain(t) for t in labels])
    top = n - 1 + (0.95 if kind == "ridge" else 0.6)
    ax.set_ylim(-0.6 if kind == "forest" else -0.35, top)
    ax.set_xlabel(f"{m.label} ({m.key})")
    ax.grid(axis="x", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.01), ncol=len(handles),
              frameon=False, fontsize="small", handlelength=1.5, columnspacing=1.0,
              borderaxespad=0)
    return ax


def _plug_in(idata: az.InferenceData, key: str, da: Any, units: list[str],
             reg: Any) -> np.ndarray | None:
    """Plug-in values per row of ``da``, or None without labelled counts."""
    if not idata_mod.has_group(idata, "observed_data"):
        return None
    obs = idata_mod.group(idata, "observed_data").get("counts")
    if obs is None:
        return None
    table = {"actual", "predicted"} if reg.multiclass else {"cell"}
    if not table <= set(obs.dims) or set(obs.dims) - table != set(units) - {"class"}:
        return None
    unit = unit_of(obs)
    if unit in units:
        obs = obs.sel({unit: da[unit].values})
    with np.errstate(all="ignore"):
        values = reg.compute(obs, [key])[key]
    if set(values.dims) != set(units):
        return None
    return np.asarray(values.transpose(*units).values, dtype=float).ravel()


def _ridge(ax: Axes, x: np.ndarray, y: float, lo: float, hi: float, color: str) -> None:
    if np.ptp(x) == 0:  # a point mass: a spike
        ax.vlines(x[0], y, y + 0.85, color=color, lw=1.5)
        return
    import arviz as az  # ArviZ's KDE, imported when a ridge is drawn

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
