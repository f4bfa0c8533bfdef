r"""ROC and precision-recall curves with pointwise credible bands and area posteriors.

A scoring classifier gives each case a score :math:`s`; a case is **predicted
positive when** :math:`s \ge t`.  Sweeping the threshold :math:`t` over the scores
gives one confusion matrix :math:`(tp_t, fn_t, fp_t, tn_t)` per threshold, and so
the ROC curve :math:`(FPR_t, TPR_t)` and the precision-recall curve
:math:`(TPR_t, PPV_t)`.  Two different posteriors are reported, each for what it
can answer.

Pointwise bands (per-threshold Beta posteriors)
-----------------------------------------------
At each threshold, with a :math:`\mathrm{Beta}(a, b)` prior on each rate
(Goutte & Gaussier 2005; Morais 2023),

.. math::

    TPR_t \mid \mathcal D \sim \mathrm{Beta}(a + tp_t, b + fn_t),\quad
    FPR_t \mid \mathcal D \sim \mathrm{Beta}(a + fp_t, b + tn_t),\quad
    PPV_t \mid \mathcal D \sim \mathrm{Beta}(a + tp_t, b + fp_t).

The band at :math:`t` is the **highest-density interval** of that Beta (computed
exactly, not from draws): the narrowest interval of the requested mass.  With the
default flat prior the HDI always contains the observed rate (the posterior mode),
so the band passes through the corners (0, 0) and (1, 1) of the ROC curve, where an
equal-tailed interval would exclude them.  Where a Beta has no unique HDI
(:math:`\alpha = \beta = 1`, or a U-shaped Beta, which needs a prior below 1 and no
case in the rate's denominator) the band is equal-tailed.

Area posteriors (Bayesian bootstrap of the whole curve)
-------------------------------------------------------
A band is **pointwise**: its edge at each threshold is a quantile of a different
marginal posterior, and no posterior draw of the curve follows an edge at every
threshold (a curve at its 2.5% quantile everywhere at once is all but impossible).
The area under a band edge is therefore **not** a posterior quantile of the area
under the curve, and its error has no fixed sign.  Joining the band corners (lower
TPR at upper FPR and vice versa, as Morais 2023 reads an AUROC interval off the
bands) gives an interval about 1.8 times as wide as the AUC's HDI for 200 + 200
binormal cases; integrating only the TPR edges at the point estimate of FPR comes
close to the HDI there, by coincidence: ignoring the FPR uncertainty narrows what
the pointwise reading widens.  bayescm reports neither.

The posterior of the area comes from a joint model of the curve: the Bayesian
bootstrap (Rubin 1981; for ROC curves Gu, Ghosal & Roy 2008).  The score
distributions of positives and negatives are given weights
:math:`w \sim \mathrm{Dirichlet}(1, \dots, 1)` over the :math:`n_+` positives and
:math:`v \sim \mathrm{Dirichlet}(1, \dots, 1)` over the :math:`n_-` negatives, and the
prevalence :math:`\pi \sim \mathrm{Beta}(n_+, n_-)` (together: the Bayesian bootstrap
of all cases).  Each draw is a weighted empirical curve, monotone by construction,
and its area is

.. math::

    AUC = \sum_{i \in +} \sum_{j \in -} w_i v_j
          \left([s_i > s_j] + \tfrac12 [s_i = s_j]\right),

which equals the trapezoidal area under that draw's ROC curve (Hanley & McNeil
1982), and the average precision (step-wise area, as scikit-learn's
``average_precision_score``)

.. math::

    AP = \sum_{i \in +} w_i\, PPV(s_i),\qquad
    PPV(t) = \frac{\pi R(t)}{\pi R(t) + (1 - \pi) F(t)},

with :math:`R(t) = \sum_{i: s_i \ge t} w_i` and :math:`F(t) = \sum_{j: s_j \ge t} v_j`.
Scores are sorted once; each draw costs cumulative sums, in chunks of draws.  The
posterior mean of the AUC is exactly the empirical AUC (the weights have mean
:math:`1/n`).  The two posteriors agree where they overlap: the bootstrap's marginal
of :math:`TPR_t` is exactly :math:`\mathrm{Beta}(tp_t, fn_t)`, the band's Beta minus
the prior's pseudo-counts.

References
----------
Morais, "A Bayesian approach to machine learning model comparison", Idiap (2023).
Goutte & Gaussier, "A probabilistic interpretation of precision, recall and
F-score, with implication for evaluation", ECIR (2005).
Rubin, "The Bayesian bootstrap", Annals of Statistics (1981).
Gu, Ghosal & Roy, "Bayesian bootstrap estimation of ROC curve", Statistics in
Medicine (2008).
Hanley & McNeil, "The meaning and use of the area under a receiver operating
characteristic (ROC) curve", Radiology (1982).

Examples
--------
>>> import numpy as np
>>> from bayescm import curves
>>> rng = np.random.default_rng(0)
>>> y = np.repeat([1, 0], 100)
>>> scores = rng.normal(y, 1.0)
>>> roc = curves.roc(scores, y, random_seed=1)
>>> lo, hi = roc.auc_hdi
>>> bool(lo < roc.auc_point < hi)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data.confusion import resolve_positive
from bayescm.deprecation import renamed_kwargs
from bayescm.priors import Beta, named
from bayescm.stats import SAMPLE_DIMS, beta_hdi_any, check_hdi_prob, draw_conjugate

if TYPE_CHECKING:
    pass

from bayescm.curves.curve import _AXES, _BETA, Curve

__all__ = ["precision_recall", "roc"]
_CHUNK = 2**20  # elements per (draws x cases) work array of the bootstrap


def _prepare(scores: Any, y_true: Any, positive: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validated float scores and a boolean mask of the actual positives."""
    try:
        s = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError("scores must be numbers (one score per case, higher = more "
                         "positive).") from err
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"scores must be a non-empty 1-d array, got shape {s.shape}.")
    if not np.isfinite(s).all():
        bad = np.flatnonzero(~np.isfinite(s))
        raise ValueError(f"scores has {bad.size} NaN or infinite value(s) (first at position "
                         f"{bad[0]}); drop those cases or replace them with finite scores.")
    y = np.asarray(y_true)
    if y.ndim != 1 or y.size != s.size:
        raise ValueError(f"y_true must be 1-d with one label per score: got shape {y.shape} "
                         f"for {s.size} scores.")
    if pd.isna(y).any():
        raise ValueError("y_true contains missing labels; drop those cases first.")
    labels = np.unique(y)
    pos = resolve_positive(labels, positive)
    is_pos = y == pos
    if is_pos.all() or not is_pos.any():
        which = "positive" if is_pos.all() else "negative"
        raise ValueError(f"y_true has only {which} cases (labels {labels.tolist()}, positive = "
                         f"{pos!r}); a ROC or precision-recall curve needs both classes.")
    return s, is_pos


def _options(kind: str, hdi_prob: float, draws: int, priors: Any) -> dict[str, Beta]:
    check_hdi_prob(hdi_prob)
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 100:
        raise ValueError(f"draws must be a whole number >= 100 (an HDI from fewer draws is "
                         f"noise), got {draws!r}.")
    rates = {key: Beta(1, 1) for key in _AXES[kind][0]}
    return named(priors, rates, where="curves." + ("roc" if kind == "roc" else
                                                   "precision_recall"), proper=True)


def _thresholds(scores: np.ndarray, thresholds: Any) -> np.ndarray:
    if thresholds is None:
        return np.concatenate([[np.inf], np.unique(scores)[::-1]])
    t = np.asarray(thresholds, dtype=float)
    if t.ndim != 1 or t.size == 0 or np.isnan(t).any():
        raise ValueError(f"thresholds must be a non-empty 1-d array without NaN, got {t!r}.")
    return np.unique(t)[::-1]


def _counts(scores: np.ndarray, is_pos: np.ndarray, thresholds: np.ndarray
            ) -> dict[str, np.ndarray]:
    """Counts with ``score >= threshold`` predicted positive, at each threshold."""
    out = {}
    for cls, (hit, miss) in ((is_pos, ("tp", "fn")), (~is_pos, ("fp", "tn"))):
        s = np.sort(scores[cls])
        above = s.size - np.searchsorted(s, thresholds, side="left")
        out[hit], out[miss] = above, s.size - above
    return out


# -- pointwise bands ---------------------------------------------------------------
def _bands(counts: Mapping[str, np.ndarray], priors: Mapping[str, Beta],
           hdi_prob: float) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Exact HDI of each rate's Beta posterior (:func:`bayescm.stats.beta_hdi_any`)."""
    lower, upper = {}, {}
    for key, prior in priors.items():
        hit, miss = _BETA[key]
        lower[key], upper[key] = beta_hdi_any(prior.alpha + counts[hit],
                                              prior.beta + counts[miss], hdi_prob=hdi_prob)
        lower[key].setflags(write=False)
        upper[key].setflags(write=False)
    return lower, upper


# -- the Bayesian bootstrap ----------------------------------------------------------
def _areas(pos: np.ndarray, neg: np.ndarray, w: np.ndarray, v: np.ndarray, pi: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """AUC and average precision of weighted cases, one per row of weights.

    ``pos`` and ``neg`` are the scores of the positives and negatives, **sorted
    ascending**; ``w`` (draws, n_pos) and ``v`` (draws, n_neg) are non-negative case
    weights (normalised here, per class) and ``pi`` (draws,) the prevalence.
    """
    d = w.shape[0]
    cw = np.zeros((d, pos.size + 1))
    np.cumsum(w, axis=1, out=cw[:, 1:])
    cv = np.zeros((d, neg.size + 1))
    np.cumsum(v, axis=1, out=cv[:, 1:])
    total_w, total_v = cw[:, -1:], cv[:, -1:]
    below = cv[:, np.searchsorted(neg, pos, side="left")]  # negatives scoring below s_i
    tied = cv[:, np.searchsorted(neg, pos, side="right")] - below
    auc = np.einsum("dk,dk->d", w, below + tied / 2) / (total_w[:, 0] * total_v[:, 0])
    recall = (total_w - cw[:, np.searchsorted(pos, pos, side="left")]) / total_w
    fpr = (total_v - below) / total_v
    pi = np.asarray(pi, dtype=float).reshape(-1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = pi * recall / (pi * recall + (1 - pi) * fpr)
    ap = np.einsum("dk,dk->d", w, np.where(w > 0, precision, 0.0)) / total_w[:, 0]
    return auc, ap


def _bootstrap(scores: np.ndarray, is_pos: np.ndarray, draws: int, kind: str,
               rng: np.random.Generator) -> np.ndarray:
    """Draws of the area under the curve from the Bayesian bootstrap of the cases."""
    pos, neg = np.sort(scores[is_pos]), np.sort(scores[~is_pos])
    chunk = max(1, _CHUNK // (scores.size + 1))
    out = np.empty(draws)
    for start in range(0, draws, chunk):
        d = min(chunk, draws - start)
        # flat Dirichlet weights are normalised Exp(1) draws (exchangeable, so they are
        # drawn directly in sorted order)
        w = rng.standard_exponential((d, pos.size))
        v = rng.standard_exponential((d, neg.size))
        pi = draw_conjugate(rng, (d,), betas={"pi": (pos.size, neg.size)})["pi"]
        auc, ap = _areas(pos, neg, w, v, pi)
        out[start:start + d] = auc if kind == "roc" else ap
    return out


def _curve(kind: str, scores: Any, y_true: Any, positive: Any, thresholds: Any,
           hdi_prob: float, draws: int, priors: Any, random_seed: Any) -> Curve:
    s, is_pos = _prepare(scores, y_true, positive)
    rate_priors = _options(kind, hdi_prob, draws, priors)
    t = _thresholds(s, thresholds)
    counts = _counts(s, is_pos, t)
    lower, upper = _bands(counts, rate_priors, hdi_prob)
    rng = np.random.default_rng(random_seed)
    name = "auc" if kind == "roc" else "average_precision"
    area = xr.DataArray(_bootstrap(s, is_pos, draws, kind, rng)[None, :], dims=SAMPLE_DIMS,
                        name=name, attrs={"method": "Bayesian bootstrap (Rubin 1981)"})
    pos, neg = np.sort(s[is_pos]), np.sort(s[~is_pos])
    point = _areas(pos, neg, np.ones((1, pos.size)), np.ones((1, neg.size)),
                   np.array([pos.size / s.size]))[0 if kind == "roc" else 1]
    for arr in (t, *counts.values()):
        arr.setflags(write=False)
    return Curve(kind, t, counts["tp"], counts["fp"], counts["fn"], counts["tn"],
                 MappingProxyType(lower), MappingProxyType(upper), area, float(point[0]),
                 float(hdi_prob), MappingProxyType(rate_priors))


@renamed_kwargs(level="hdi_prob", prior=("priors", lambda v: {"tpr": v, "fpr": v}))
def roc(
    scores: Any,
    y_true: Any,
    *,
    positive: Any = None,
    thresholds: Any = None,
    hdi_prob: float = 0.95,
    draws: int = 4000,
    priors: Mapping[str, Any] | None = None,
    random_seed: int | np.random.Generator | None = None,
) -> Curve:
    r"""ROC curve with pointwise credible bands and the posterior of the AUC.

    At each threshold :math:`t` (a case is predicted positive when its score is
    :math:`\ge t`) the band of :math:`TPR_t` is the HDI of
    :math:`\mathrm{Beta}(a + tp_t, b + fn_t)` and that of :math:`FPR_t` the HDI of
    :math:`\mathrm{Beta}(a + fp_t, b + tn_t)`.  The AUC posterior comes from the
    Bayesian bootstrap of the cases (Dirichlet(1, ..., 1) weights over positives and
    over negatives), each draw's AUC being the trapezoidal area under its weighted
    empirical ROC curve,
    :math:`\sum_{i \in +}\sum_{j \in -} w_i v_j ([s_i > s_j] + \tfrac12 [s_i = s_j])`.
    The area between band edges is not a posterior of the AUC (the edges are
    pointwise; no draw follows them): see :mod:`bayescm.curves`.

    Parameters
    ----------
    scores
        One finite score per case; higher means more likely positive.
    y_true
        True labels, any two distinct values; both classes must occur.
    positive
        The positive label; may be omitted for labels ``{0, 1}`` or ``{False, True}``.
    thresholds
        Thresholds of the curve (sorted descending, repeats dropped).  Default: every
        distinct score and ``+inf``, so the curve runs from (0, 0) to (1, 1) (the
        smallest score already predicts every case positive).  The AUC posterior uses
        all cases whatever the thresholds.
    hdi_prob
        Probability mass of the pointwise bands and of the AUC's HDI (the deprecated
        ``level=`` is an alias).
    draws
        Number of Bayesian-bootstrap draws of the AUC (i.i.d., one chain: the total).
    priors
        ``{"tpr": prior, "fpr": prior}`` (``{"tpr": ..., "ppv": ...}`` for
        :func:`precision_recall`): the proper Beta prior of each pointwise rate, as
        anything :func:`bayescm.priors.coerce` reads (``Beta(a, b)``, ``(a, b)``,
        ``scipy.stats.beta(a, b)``, a ``pymc_extras`` ``Prior("Beta", ...)``); rates
        left out keep Beta(1, 1) (flat).  The deprecated ``prior=(a, b)`` sets every
        rate's.
    random_seed
        Seed or generator of the bootstrap.

    Returns
    -------
    Curve
        ``kind="roc"``: counts, point estimates ``fpr``/``tpr``, bands
        (``band("tpr")``), the AUC draws ``auc`` with ``auc_mean``, ``auc_hdi``,
        ``plot()`` and ``to_frame()``.

    Raises
    ------
    ValueError
        For non-finite or non-numeric scores, labels of another length, missing
        labels, more than two labels, an unclear positive label, a single class, or
        invalid options.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescm import curves
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat(["ill", "well"], 50)
    >>> scores = rng.normal(np.where(y == "ill", 1.0, 0.0), 1.0)
    >>> curve = curves.roc(scores, y, positive="ill", random_seed=1)
    >>> curve.fpr[0], curve.tpr[0], curve.fpr[-1], curve.tpr[-1]
    (np.float64(0.0), np.float64(0.0), np.float64(1.0), np.float64(1.0))
    >>> lo, hi = curve.band("tpr")
    >>> bool(np.all((lo <= curve.tpr) & (curve.tpr <= hi)))
    True
    >>> 0.6 < curve.auc_mean < 0.9
    True
    """
    return _curve("roc", scores, y_true, positive, thresholds, hdi_prob, draws, priors,
                  random_seed)


@renamed_kwargs(level="hdi_prob", prior=("priors", lambda v: {"tpr": v, "ppv": v}))
def precision_recall(
    scores: Any,
    y_true: Any,
    *,
    positive: Any = None,
    thresholds: Any = None,
    hdi_prob: float = 0.95,
    draws: int = 4000,
    priors: Mapping[str, Any] | None = None,
    random_seed: int | np.random.Generator | None = None,
) -> Curve:
    r"""Precision-recall curve with pointwise credible bands and the posterior of the AP.

    At each threshold the band of precision is the HDI of
    :math:`\mathrm{Beta}(a + tp_t, b + fp_t)` and that of recall the HDI of
    :math:`\mathrm{Beta}(a + tp_t, b + fn_t)` (Goutte & Gaussier 2005).  Precision
    is undefined (NaN) where nothing is predicted positive; its band there is the
    prior's.  The posterior of the area under the curve is that of the average
    precision :math:`\sum_k (R_k - R_{k-1}) P_k` (step-wise, as scikit-learn's
    ``average_precision_score``) under the Bayesian bootstrap of the cases:
    Dirichlet(1, ..., 1) weights within each class and the prevalence
    :math:`\pi \sim \mathrm{Beta}(n_+, n_-)`.  Precision depends on the prevalence,
    so the curve and its area describe a population with the test set's class
    balance.

    Parameters
    ----------
    scores, y_true, positive, thresholds, hdi_prob, draws, priors, random_seed
        As for :func:`roc` (``priors`` named ``"tpr"`` and ``"ppv"``).

    Returns
    -------
    Curve
        ``kind="pr"``: point estimates ``recall``/``precision``, bands
        (``band("precision")``), the average precision's draws in ``auc``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescm import curves
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1, 0], [30, 70])
    >>> curve = curves.precision_recall(rng.normal(y, 1.0), y, random_seed=1)
    >>> lo, hi = curve.auc_hdi
    >>> bool(0.3 < lo < curve.auc_point < hi < 1)
    True
    """
    return _curve("pr", scores, y_true, positive, thresholds, hdi_prob, draws, priors,
                  random_seed)
