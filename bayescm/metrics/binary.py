r"""The one registry of binary confusion-matrix metrics.

Every metric is written once, as a function of the four cells
:math:`(tp, fn, fp, tn)`.  All of them are ratios whose numerator and denominator
have the same degree, so the same formula gives

* the **posterior** of a metric when fed confusion probabilities
  :math:`\theta = (\theta_{tp}, \theta_{fn}, \theta_{fp}, \theta_{tn})`, and
* the **plug-in** point value when fed observed counts,

and it broadcasts over NumPy arrays and xarray objects alike.

Degenerate denominators
-----------------------
One convention everywhere: **a metric whose denominator is zero is undefined and
evaluates to NaN** (e.g. ``ppv`` when nothing was predicted positive, ``dor``
when ``fp * fn == 0``, ``mcc`` when a row or column of the matrix is empty).
Posterior draws of :math:`\theta` are strictly inside the simplex, so this only
affects plug-in values of tables with empty cells.  scikit-learn instead returns
0 (with a warning) in those cases; away from them the point values agree with
scikit-learn's.  Logarithms of zero are :math:`-\infty`, as in mathematics.

References
----------
Tötsch & Hoffmann, "Classifier uncertainty: evidence, potential impact, and
probabilistic treatment", PeerJ Computer Science (2021).
Lovell, Miller, Capra & Bradley, "Never mind the metrics -- what about the
uncertainty? Visualising binary confusion matrix metric distributions to put
performance in perspective" (2022), Appendix A.
Powers, "Evaluation: from precision, recall and F-measure to ROC, informedness,
markedness and correlation", J. Mach. Learn. Technol. (2011).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data.confusion import CELLS

__all__ = [
    "ALIASES",
    "LOWER_IS_BETTER",
    "REGISTRY",
    "Metric",
    "cells_from_rates",
    "compute",
    "div",
    "evaluate",
    "fbeta",
    "get",
    "higher_is_better",
    "names",
    "plug_in",
    "resolve",
]


def _is_xr(*xs: Any) -> bool:
    return any(isinstance(x, xr.DataArray | xr.Dataset) for x in xs)


def div(num: Any, den: Any) -> Any:
    """``num / den`` with NaN where ``den == 0`` (the registry's one convention)."""
    if _is_xr(num, den):
        with np.errstate(divide="ignore", invalid="ignore"):
            return xr.where(den == 0, np.nan, num / den)
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(np.divide(num, den))
    zero = den == 0
    if zero.any():  # rare outside plug-in values of tables with empty cells
        out = np.where(zero, np.nan, out)
    return out


def _sqrt(x: Any) -> Any:
    with np.errstate(invalid="ignore"):
        return np.sqrt(x)


def _log(x: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x)


@dataclass(frozen=True)
class Metric:
    """A confusion-matrix metric.

    Attributes
    ----------
    key
        Short lower-case name used everywhere (variable names, ``summary``).
    label
        Readable name for tables and plots.
    formula
        ``f(tp, fn, fp, tn)``; degree-0 homogeneous, so counts or probabilities.
    bounds
        Range of the metric ``(lower, upper)``.
    prevalence_dependent
        True when the value changes with class balance at fixed tpr and tnr.
    math
        The definition, for documentation.
    """

    key: str
    label: str
    formula: Callable[[Any, Any, Any, Any], Any]
    bounds: tuple[float, float]
    prevalence_dependent: bool
    math: str

    def __call__(self, tp: Any, fn: Any, fp: Any, tn: Any) -> Any:
        return self.formula(tp, fn, fp, tn)


def _tpr(tp, fn, fp, tn):
    return div(tp, tp + fn)


def _tnr(tp, fn, fp, tn):
    return div(tn, tn + fp)


def _ppv(tp, fn, fp, tn):
    return div(tp, tp + fp)


def _npv(tp, fn, fp, tn):
    return div(tn, tn + fn)


def _mcc(tp, fn, fp, tn):
    return div(tp * tn - fp * fn, _sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))


def _fm(tp, fn, fp, tn):
    return _sqrt(_ppv(tp, fn, fp, tn) * _tpr(tp, fn, fp, tn))


def _jaccard(tp, fn, fp, tn):
    return div(tp, tp + fn + fp)


def _fbeta(beta: float) -> Callable[[Any, Any, Any, Any], Any]:
    b2 = float(beta) ** 2

    def f(tp, fn, fp, tn):
        return div((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)

    return f


def _balanced(f: Callable) -> Callable:
    # The metric of the same classifier on a test set with prevalence 1/2:
    # theta = (tpr, fnr, fpr, tnr) / 2 (the factor cancels).
    def g(tp, fn, fp, tn):
        tpr, tnr = _tpr(tp, fn, fp, tn), _tnr(tp, fn, fp, tn)
        return f(tpr, 1 - tpr, 1 - tnr, tnr)

    return g


def _dor(tp, fn, fp, tn):
    return div(tp * tn, fp * fn)


def _pt(tp, fn, fp, tn):
    tpr, fpr = _tpr(tp, fn, fp, tn), div(fp, fp + tn)
    return div(_sqrt(tpr * fpr) - fpr, tpr - fpr)


_ALL = [
    Metric("prevalence", "Prevalence", lambda tp, fn, fp, tn: div(tp + fn, tp + fn + fp + tn),
           (0, 1), True, "(tp + fn) / n"),
    Metric("bias", "Predicted positive rate (bias)",
           lambda tp, fn, fp, tn: div(tp + fp, tp + fn + fp + tn), (0, 1), True, "(tp + fp) / n"),
    Metric("tpr", "True positive rate (sensitivity, recall)", _tpr, (0, 1), False,
           "tp / (tp + fn)"),
    Metric("tnr", "True negative rate (specificity)", _tnr, (0, 1), False, "tn / (tn + fp)"),
    Metric("fpr", "False positive rate", lambda tp, fn, fp, tn: div(fp, fp + tn), (0, 1), False,
           "fp / (fp + tn)"),
    Metric("fnr", "False negative rate", lambda tp, fn, fp, tn: div(fn, tp + fn), (0, 1), False,
           "fn / (tp + fn)"),
    Metric("ppv", "Positive predictive value (precision)", _ppv, (0, 1), True, "tp / (tp + fp)"),
    Metric("npv", "Negative predictive value", _npv, (0, 1), True, "tn / (tn + fn)"),
    Metric("fdr", "False discovery rate", lambda tp, fn, fp, tn: div(fp, tp + fp), (0, 1), True,
           "fp / (tp + fp)"),
    Metric("for", "False omission rate", lambda tp, fn, fp, tn: div(fn, fn + tn), (0, 1), True,
           "fn / (fn + tn)"),
    Metric("acc", "Accuracy", lambda tp, fn, fp, tn: div(tp + tn, tp + fn + fp + tn), (0, 1),
           True, "(tp + tn) / n"),
    Metric("err", "Error rate", lambda tp, fn, fp, tn: div(fp + fn, tp + fn + fp + tn), (0, 1),
           True, "(fp + fn) / n"),
    Metric("ba", "Balanced accuracy",
           lambda tp, fn, fp, tn: (_tpr(tp, fn, fp, tn) + _tnr(tp, fn, fp, tn)) / 2, (0, 1), False,
           "(tpr + tnr) / 2"),
    Metric("f1", "F1 score", _fbeta(1.0), (0, 1), True, "2 tp / (2 tp + fn + fp)"),
    Metric("f2", "F2 score", _fbeta(2.0), (0, 1), True, "5 tp / (5 tp + 4 fn + fp)"),
    Metric("f05", "F0.5 score", _fbeta(0.5), (0, 1), True,
           "1.25 tp / (1.25 tp + 0.25 fn + fp)"),
    Metric("mcc", "Matthews correlation coefficient", _mcc, (-1, 1), True,
           "(tp tn - fp fn) / sqrt((tp + fp)(tp + fn)(tn + fp)(tn + fn))"),
    Metric("bm", "Bookmaker informedness (Youden's J)",
           lambda tp, fn, fp, tn: _tpr(tp, fn, fp, tn) + _tnr(tp, fn, fp, tn) - 1, (-1, 1), False,
           "tpr + tnr - 1"),
    Metric("mk", "Markedness",
           lambda tp, fn, fp, tn: _ppv(tp, fn, fp, tn) + _npv(tp, fn, fp, tn) - 1, (-1, 1), True,
           "ppv + npv - 1"),
    Metric("jaccard", "Jaccard index (threat score, critical success index)", _jaccard, (0, 1),
           True, "tp / (tp + fn + fp)"),
    Metric("fm", "Fowlkes-Mallows index", _fm, (0, 1), True, "sqrt(ppv tpr)"),
    Metric("gmean", "Geometric mean of tpr and tnr",
           lambda tp, fn, fp, tn: _sqrt(_tpr(tp, fn, fp, tn) * _tnr(tp, fn, fp, tn)), (0, 1),
           False, "sqrt(tpr tnr)"),
    Metric("lr_pos", "Positive likelihood ratio",
           lambda tp, fn, fp, tn: div(_tpr(tp, fn, fp, tn), div(fp, fp + tn)), (0, np.inf), False,
           "tpr / fpr"),
    Metric("lr_neg", "Negative likelihood ratio",
           lambda tp, fn, fp, tn: div(div(fn, tp + fn), _tnr(tp, fn, fp, tn)), (0, np.inf), False,
           "fnr / tnr"),
    Metric("dor", "Diagnostic odds ratio", _dor, (0, np.inf), False, "(tp tn) / (fp fn)"),
    Metric("log_dor", "Log diagnostic odds ratio",
           lambda tp, fn, fp, tn: _log(_dor(tp, fn, fp, tn)), (-np.inf, np.inf), False,
           "log((tp tn) / (fp fn))"),
    Metric("kappa", "Cohen's kappa",
           lambda tp, fn, fp, tn: div(2 * (tp * tn - fn * fp),
                                      (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)),
           (-1, 1), True,
           "(acc - p_e) / (1 - p_e), p_e = prevalence bias + (1 - prevalence)(1 - bias)"),
    Metric("pt", "Prevalence threshold", _pt, (0, 1), False,
           "(sqrt(tpr fpr) - fpr) / (tpr - fpr)"),
    Metric("mcc_bal", "Balanced Matthews correlation coefficient", _balanced(_mcc), (-1, 1), False,
           "mcc at prevalence 1/2: (tpr + tnr - 1) / sqrt((tpr + fpr)(fnr + tnr))"),
    Metric("fm_bal", "Balanced Fowlkes-Mallows index", _balanced(_fm), (0, 1), False,
           "fm at prevalence 1/2"),
    Metric("jaccard_bal", "Balanced threat score", _balanced(_jaccard), (0, 1), False,
           "jaccard at prevalence 1/2: tpr / (1 + fpr)"),
    Metric("ppv_bal", "Balanced positive predictive value", _balanced(_ppv), (0, 1), False,
           "tpr / (tpr + fpr)"),
    Metric("npv_bal", "Balanced negative predictive value", _balanced(_npv), (0, 1), False,
           "tnr / (tnr + fnr)"),
]

REGISTRY: dict[str, Metric] = {m.key: m for m in _ALL}
"""All metrics by key, in a stable display order."""

ALIASES: dict[str, str] = {
    "sensitivity": "tpr", "recall": "tpr", "hit_rate": "tpr",
    "specificity": "tnr", "selectivity": "tnr",
    "precision": "ppv", "fallout": "fpr", "miss_rate": "fnr",
    "accuracy": "acc", "balanced_accuracy": "ba", "error_rate": "err",
    "informedness": "bm", "youden": "bm", "markedness": "mk",
    "threat_score": "jaccard", "csi": "jaccard", "ts": "jaccard",
    "f1_score": "f1", "matthews": "mcc", "cohen_kappa": "kappa",
    "prevalence_threshold": "pt", "predicted_positive_rate": "bias",
}


LOWER_IS_BETTER: frozenset[str] = frozenset({"fpr", "fnr", "fdr", "for", "err", "lr_neg"})
"""Metrics for which a smaller value is better; for every other metric larger is better.

Leaderboards rank these smallest first and comparisons report P(A better than B) as
P(metric_A < metric_B - margin)."""


def higher_is_better(metric: str | Metric) -> bool:
    """Whether a larger value of ``metric`` (key, alias or Metric) is better.

    Examples
    --------
    >>> higher_is_better("mcc"), higher_is_better("fallout")  # fallout = fpr
    (True, False)
    """
    key = metric.key if isinstance(metric, Metric) else get(metric).key
    return key not in LOWER_IS_BETTER


def cells_from_rates(prevalence: Any, tpr: Any, tnr: Any) -> tuple[Any, Any, Any, Any]:
    r"""Confusion probabilities :math:`(\theta_{tp}, \theta_{fn}, \theta_{fp}, \theta_{tn})`.

    .. math::

        \theta = \bigl(TPR\,\phi,\ (1 - TPR)\,\phi,\ (1 - TNR)(1 - \phi),\
                 TNR\,(1 - \phi)\bigr)

    (Tötsch & Hoffmann 2021, eqs. 8–11), in cell order ``tp, fn, fp, tn``;
    broadcasts over NumPy arrays and xarray objects.

    Examples
    --------
    >>> from bayescm import metrics
    >>> [round(float(x), 3) for x in metrics.cells_from_rates(0.25, 0.8, 0.9)]
    [0.2, 0.05, 0.075, 0.675]
    """
    neg = 1 - prevalence
    return tpr * prevalence, (1 - tpr) * prevalence, (1 - tnr) * neg, tnr * neg


def names() -> list[str]:
    """Keys of every registered metric, in display order."""
    return list(REGISTRY)


def get(name: str) -> Metric:
    """Look up a metric by key or alias (case-insensitive).

    Raises
    ------
    KeyError
        Naming the unknown metric and listing the known keys.
    """
    key = ALIASES.get(name.lower(), name.lower()) if isinstance(name, str) else name
    if key not in REGISTRY:
        raise KeyError(f"Unknown metric {name!r}. Known metrics: {', '.join(REGISTRY)}.")
    return REGISTRY[key]


def resolve(metrics: str | Iterable[str] | None) -> list[Metric]:
    """Metrics for a name, a list of names or aliases, or ``None`` (= all); no repeats."""
    if metrics is None:
        return list(REGISTRY.values())
    if isinstance(metrics, str):
        metrics = [metrics]
    found = {}
    for m in metrics:
        metric = get(m)
        found.setdefault(metric.key, metric)
    return list(found.values())


def fbeta(beta: float) -> Metric:
    r"""The F-beta score :math:`(1+\beta^2) tp / ((1+\beta^2) tp + \beta^2 fn + fp)`.

    Examples
    --------
    >>> from bayescm import metrics
    >>> round(float(metrics.fbeta(2.0)(26, 0, 2, 6)), 4)
    0.9848
    """
    if not beta > 0:
        raise ValueError(f"beta must be positive, got {beta}.")
    return Metric(f"f{beta:g}".replace(".", ""), f"F{beta:g} score", _fbeta(beta), (0, 1), True,
                  f"(1 + {beta:g}^2) tp / ((1 + {beta:g}^2) tp + {beta:g}^2 fn + fp)")


def evaluate(metric: str | Metric, tp: Any, fn: Any, fp: Any, tn: Any) -> Any:
    """Evaluate one metric on cells (counts or probabilities), broadcasting.

    Examples
    --------
    >>> from bayescm import metrics
    >>> float(metrics.evaluate("tnr", 26, 0, 2, 6))
    0.75
    >>> round(float(metrics.evaluate("mcc", 0.4, 0.1, 0.1, 0.4)), 12)
    0.6
    """
    m = metric if isinstance(metric, Metric) else get(metric)
    return m(tp, fn, fp, tn)


def compute(
    cells: xr.DataArray,
    metrics: str | Sequence[str] | None = None,
    *,
    dim: str = "cell",
    dtype: Any = np.float64,
) -> xr.Dataset:
    """Every requested metric of an array with a named ``cell`` dim.

    :func:`bayescm.metrics.compute` takes K×K tables too (dims ``actual`` and
    ``predicted``) and hands them to :func:`bayescm.metrics.compute_multiclass`.

    Parameters
    ----------
    cells
        Confusion probabilities (posterior ``theta``) or counts, with dim ``dim``
        holding coords ``tp, fn, fp, tn`` in any order.
    metrics
        Keys to compute; all registered metrics by default.
    dim
        Name of the cell dim.
    dtype
        Floating type of the results (evaluation is always in float64).

    Returns
    -------
    xarray.Dataset
        One variable per metric, with the other dims of ``cells``.
    """
    if dim not in cells.dims:
        raise ValueError(f"Array has no {dim!r} dim (dims: {cells.dims}).")
    missing = [c for c in CELLS if c not in cells[dim].values.tolist()]
    if missing:
        raise ValueError(f"Cells {missing} are missing from dim {dim!r}.")
    # Evaluate on plain arrays (xarray's per-operation bookkeeping costs more than the
    # arithmetic for large batches) and label once; NumPy releases the GIL, so
    # metrics run in two threads.
    template = cells.isel({dim: 0}, drop=True)
    parts = [cells.sel({dim: c}, drop=True).transpose(*template.dims).values.astype(float)
             for c in CELLS]
    chosen = resolve(metrics)
    with ThreadPoolExecutor(2) as pool:
        values = list(pool.map(lambda m: np.asarray(m(*parts), dtype=dtype), chosen))
    out = {}
    for m, v in zip(chosen, values, strict=True):
        if v.shape != template.shape:
            v = np.broadcast_to(v, template.shape).copy()
        out[m.key] = (template.dims, v, {"label": m.label, "formula": m.math})
    # one set of coords for all: per-metric DataArrays were aligned with each other,
    # which cost more than the arithmetic of a small fit
    return xr.Dataset(out, coords=template.coords)


def plug_in(counts: Any, metrics: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Plug-in point values from counts.

    Parameters
    ----------
    counts
        A ``ConfusionMatrix`` (anything with ``to_xarray()`` giving dims
        ``(classifier, cell)``) or such a DataArray.

    Returns
    -------
    pandas.DataFrame
        Index ``classifier``, one column per metric.

    Examples
    --------
    >>> import bayescm as bcm
    >>> frame = bcm.metrics.plug_in(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6), ["tpr", "tnr"])
    >>> frame.loc["cm"].to_dict()
    {'tpr': 1.0, 'tnr': 0.75}
    """
    arr = counts.to_xarray() if hasattr(counts, "to_xarray") and not _is_xr(counts) else counts
    if "cell" not in arr.dims:
        raise TypeError("plug_in takes binary counts (dim 'cell'); for K×K tables use "
                        "bayescm.metrics.compute_multiclass.")
    ds = compute(arr, metrics)
    return ds.to_dataframe()[list(ds.data_vars)]
