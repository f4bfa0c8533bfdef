r"""Closed-form posteriors of the conjugate models (no sampling).

For the three-Beta model the multinomial likelihood factorises into
Binomial(N, φ) for the positives, Binomial(P, TPR) for tp and Binomial(N − P,
TNR) for tn, so with Beta priors

.. math::

    \phi \mid D \sim \mathrm{Beta}(a_\phi + tp + fn,\ b_\phi + fp + tn),\quad
    \mathrm{TPR} \mid D \sim \mathrm{Beta}(a_+ + tp,\ b_+ + fn),\quad
    \mathrm{TNR} \mid D \sim \mathrm{Beta}(a_- + tn,\ b_- + fp),

independently.  For the Dirichlet-multinomial model
:math:`\theta \mid D \sim \mathrm{Dirichlet}(\alpha + \text{counts})`.

Parameters are read from the model's ``pm.Data`` containers, so a model updated
with ``pm.set_data`` is honoured.

Exact posterior predictive pmfs
-------------------------------
:func:`predictive_pmf` and :func:`metric_pmf` answer "what would a future test set
with :math:`n_+` positives and :math:`n_-` negatives *observe*?" without sampling
(Lovell, Miller, Capra & Bradley, "Never mind the metrics -- what about the
uncertainty? Visualising binary confusion matrix metric distributions to put
performance in perspective", 2022/2023, §6-8; Tötsch & Hoffmann 2021).

With the class sizes fixed, the future confusion matrix is determined by
:math:`(TP', TN')`, since :math:`FN' = n_+ - TP'` and :math:`FP' = n_- - TN'`.  Given
the rates, :math:`TP' \sim \mathrm{Binomial}(n_+, \mathrm{TPR})` and
:math:`TN' \sim \mathrm{Binomial}(n_-, \mathrm{TNR})` independently.  Integrating a
binomial over a :math:`\mathrm{Beta}(\alpha, \beta)` rate gives the beta-binomial pmf

.. math::

    \mathrm{BetaBin}(k;\, n, \alpha, \beta)
    = \binom{n}{k}\frac{B(k + \alpha,\ n - k + \beta)}{B(\alpha, \beta)},
    \qquad k = 0, \dots, n,

so with the posteriors above (priors :math:`\mathrm{Beta}(a_\pm, b_\pm)`, independent
given the data) the posterior predictive of the lattice point :math:`(i, j)` is

.. math::

    P(TP' = i, TN' = j \mid D)
    = \mathrm{BetaBin}(i;\, n_+, a_+ + tp, b_+ + fn)\,
      \mathrm{BetaBin}(j;\, n_-, a_- + tn, b_- + fp),

an outer product of two marginals.  The masses are computed in log space by the
ratio recurrence

.. math::

    \frac{P(k + 1)}{P(k)} = \frac{(n - k)(k + \alpha)}{(k + 1)(n - k - 1 + \beta)},

anchored at the mode and normalised.  For :math:`n` around 1,000 this keeps every
mass within about :math:`10^{-13}` (relative) of exact rational arithmetic and the
total within :math:`10^{-15}` of one; ``scipy.stats.betabinom.pmf``, which subtracts
``betaln`` terms in the thousands, is off by up to :math:`3 \times 10^{-11}` there and
its total by :math:`10^{-11}`.

The **plug-in binomial model** replaces the rates by their point estimates,
:math:`P(i, j) = \mathrm{Bin}(i;\, n_+, \widehat{\mathrm{TPR}})\,
\mathrm{Bin}(j;\, n_-, \widehat{\mathrm{TNR}})` with
:math:`\widehat{\mathrm{TPR}} = tp/(tp + fn)`, :math:`\widehat{\mathrm{TNR}} =
tn/(tn + fp)`.  It is too narrow: by the law of total variance the predictive
variance is

.. math::

    \mathrm{Var}[TP'] = n_+\,\mathrm{E}[r(1 - r)] + n_+^2\,\mathrm{Var}[r],
    \qquad r = \mathrm{TPR} \mid D,

while the plug-in's :math:`n_+ \hat r (1 - \hat r)` is about the first term alone.
For the beta-binomial the sum is :math:`n_+ \bar r (1 - \bar r)(\alpha + \beta +
n_+)/(\alpha + \beta + 1)`, where :math:`\alpha = a_+ + tp`, :math:`\beta = b_+ + fn`
and :math:`\bar r = \alpha / (\alpha + \beta)`: with a future test set as large as
the observed one the variance is about twice the binomial's, and the missing
:math:`n_+^2` term dominates for larger test sets.  At a zero cell the plug-in is
certain: with :math:`fn = 0` it puts all mass on :math:`TP' = n_+` after any number
of cases.

A metric's pmf sums the joint pmf along the metric's contours through the lattice
(:func:`metric_pmf`, whose notes say how the arithmetic of :math:`n_\pm` shapes it).
Lattices over the memory bound (:mod:`bayescm.inference.budget`) are refused at once.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayescm import metrics as metric_registry
from bayescm import priors as prior_specs
from bayescm.data.confusion import CELLS, ConfusionMatrix
from bayescm.deprecation import renamed_kwargs
from bayescm.family import default_family
from bayescm.inference import budget
from bayescm.priors import PriorError

# -- exact posterior predictive pmfs (Lovell et al.) ------------------------------------------
PREDICTIVE_MODELS = ("beta_binomial", "binomial")

__all__ = [
    "PREDICTIVE_MODELS",
    "metric_pmf",
    "predictive_pmf",
]
_TOO_LARGE = ("Use a smaller future test set (10^6 matrices, e.g. 999 positives and 999 "
              "negatives, take a few tenths of a second), or for a large one the sampled "
              "predictive, bcm.fit(model, predictive_n=n): close to the metric's posterior.")
# the rates of a future matrix with given class sizes: successes and failures of each
# (the binomial model's plug-in rate; the Beta posteriors are the family's)
_PMF_RATES = {"tpr": ("tp", "fn"), "tnr": ("tn", "fp")}


def _class_size(value: Any, name: str) -> int:
    """A whole, non-negative number of future cases."""
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be a whole number of cases, got {value!r}.")
    try:
        n = operator.index(value)
    except TypeError:
        if isinstance(value, float | np.floating) and float(value).is_integer():
            n = int(value)
        else:
            raise ValueError(
                f"{name} must be a whole number of cases (an int), got {value!r}."
            ) from None
    if n < 0:
        raise ValueError(f"{name} is {n}; the number of future cases must be >= 0.")
    return int(n)


def _predictive_args(cm: Any, n_pos: Any, n_neg: Any, model: str, *, per_point: int = 1
                     ) -> tuple[int, int]:  # per_point: lattice arrays besides the pmf's
    if not isinstance(cm, ConfusionMatrix):
        raise TypeError(
            f"cm must be a bayescm.ConfusionMatrix, got {type(cm).__name__}; build one with "
            "bcm.ConfusionMatrix(tp=..., fn=..., fp=..., tn=...)."
        )
    if model not in PREDICTIVE_MODELS:
        raise ValueError(f"model must be one of {PREDICTIVE_MODELS}, got {model!r}.")
    n_pos, n_neg = _class_size(n_pos, "n_pos"), _class_size(n_neg, "n_neg")
    if n_pos == 0 and n_neg == 0:
        raise ValueError(
            "n_pos and n_neg are both 0: the future test set has no cases; give at least one."
        )
    points = (n_pos + 1) * (n_neg + 1)
    budget.check_memory(8.0 * points * (len(cm) + per_point), (
        f"The exact pmf of a future test set of {n_pos:,} positives and {n_neg:,} negatives "
        f"({points:,} possible matrices x {len(cm):,} classifier(s))"), _TOO_LARGE)
    return n_pos, n_neg


def _rate_posteriors(
    cm: ConfusionMatrix, priors: Mapping[str, Any] | None
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], str]:
    """Posterior Beta parameters of tpr and tnr per classifier, and the priors as JSON:
    the binary default family's update (:meth:`bayescm.family.Family.rate_posteriors`)."""
    family = default_family("binary")
    priors = prior_specs.check_names(
        priors, {k: family.default_priors[k] for k in _PMF_RATES}, where="predictive_pmf",
        hints={"prevalence": "the class sizes n_pos and n_neg are given, so prevalence plays "
                             "no role"})
    resolved = prior_specs.resolve(family.name, priors, cm.classifiers)
    chosen = {k: resolved[k] for k in _PMF_RATES}
    post = family.rate_posteriors({c: cm.cell(c) for c in CELLS}, {
        k: (np.array([p.alpha for p in per]), np.array([p.beta for p in per]))
        for k, per in chosen.items()})
    for name in _PMF_RATES:
        a, b = post[name]
        bad = np.flatnonzero((a <= 0) | (b <= 0))
        if bad.size:
            raise PriorError(
                f"The posterior of {name!r} for {cm.unit} {cm.classifiers[bad[0]]!r} is "
                "improper (a posterior parameter is zero); use a proper prior such as "
                "Beta(1, 1)."
            )
    return {k: post[k] for k in _PMF_RATES}, prior_specs.to_attrs(chosen, cm.classifiers)


def _betabinom_pmf(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """BetaBinomial(n, a, b) pmf at k = 0..n, one row per (a, b); rows sum to 1.

    Log masses by the ratio recurrence, anchored at the mode (so partial sums near
    the mode stay small), then exponentiated and normalised.
    """
    a, b = np.asarray(a, float)[:, None], np.asarray(b, float)[:, None]
    if n == 0:
        return np.ones((a.shape[0], 1))
    i = np.arange(n, dtype=float)
    # log P(i + 1) / P(i), i = 0..n-1
    step = np.log(((n - i) * (i + a)) / ((i + 1.0) * (n - i - 1.0 + b)))
    zeros = np.zeros((a.shape[0], 1))
    mode = np.argmax(np.concatenate([zeros, np.cumsum(step, axis=-1)], axis=-1), axis=-1)
    below = i < mode[:, None]
    up = np.concatenate([zeros, np.cumsum(np.where(below, 0.0, step), axis=-1)], axis=-1)
    down = np.concatenate(
        [np.cumsum(np.where(below, step, 0.0)[:, ::-1], axis=-1)[:, ::-1], zeros], axis=-1)
    p = np.exp(up - down)
    return p / p.sum(axis=-1, keepdims=True)


def _binom_pmf(n: int, r: np.ndarray) -> np.ndarray:
    """Binomial(n, r) pmf at k = 0..n, one row per rate; rows sum to 1."""
    p = stats.binom.pmf(np.arange(n + 1)[None, :], n, np.asarray(r, float)[:, None])
    return p / p.sum(axis=-1, keepdims=True)


def _contours(values: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group equal metric values: (value per group ascending, group of each point, sizes).

    Sorted neighbours closer than ``tol`` (relative to the value beyond 1) are one
    group, so values that differ by rounding noise only are merged without the
    boundary effects of rounding; NaNs (sorted last) are one group, infinities one each.
    """
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    lo, hi = ranked[:-1], ranked[1:]
    with np.errstate(invalid="ignore"):
        gap = hi - lo  # NaN next to NaN or between equal infinities, inf next to inf
        near = np.isfinite(gap) & (gap <= tol * np.maximum(1.0, np.maximum(abs(lo), abs(hi))))
    same = (hi == lo) | near | (np.isnan(hi) & np.isnan(lo))
    starts = np.concatenate([[True], ~same])
    group = np.cumsum(starts) - 1
    inverse = np.empty(values.size, dtype=np.int64)
    inverse[order] = group
    first = np.flatnonzero(starts)
    sizes = np.diff(np.append(first, values.size))
    return ranked[first] + 0.0, inverse, sizes.astype(np.int64)  # + 0.0: -0.0 -> 0.0


@renamed_kwargs(prior="priors")
def predictive_pmf(
    cm: ConfusionMatrix,
    n_pos: int,
    n_neg: int,
    *,
    priors: Mapping[str, Any] | None = None,
    model: str = "beta_binomial",
) -> xr.DataArray:
    r"""Exact posterior predictive pmf of a future confusion matrix with fixed class sizes.

    A future test set has ``n_pos`` actual positives and ``n_neg`` actual negatives, so
    its confusion matrix is fixed by :math:`(TP', TN')`
    (:math:`FN' = n_+ - TP'`, :math:`FP' = n_- - TN'`).  Under the beta-binomial model
    (Tötsch & Hoffmann 2021; Lovell, Miller, Capra & Bradley 2022/2023, §6-7)

    .. math::

        P(TP' = i, TN' = j \mid D)
        = \mathrm{BetaBin}(i;\, n_+,\ a_+ + tp,\ b_+ + fn)\,
          \mathrm{BetaBin}(j;\, n_-,\ a_- + tn,\ b_- + fp),

    with :math:`\mathrm{BetaBin}(k; n, \alpha, \beta) = \binom{n}{k}
    B(k + \alpha, n - k + \beta) / B(\alpha, \beta)`: the binomial counts of the
    future set averaged over the Beta posteriors of TPR and TNR (independent given the
    data).  No sampling; see the module notes for the numerics.

    Parameters
    ----------
    cm
        Observed confusion matrix (one or a batch, dim ``classifier``).
    n_pos, n_neg
        Actual positives and negatives of the future test set (whole numbers >= 0,
        not both zero).
    priors
        Beta priors of the rates by name, ``{"tpr": ..., "tnr": ...}`` (either may be
        left out; default Beta(1, 1) each).  Values are anything
        :func:`bayescm.priors.coerce` accepts (``Beta(a, b)``, ``"beta:a,b"``,
        ``(a, b)``, ``scipy.stats.beta(a, b)``, ``pymc_extras`` ``Prior``...) or a
        mapping ``classifier -> prior``.  ``prior=`` is a deprecated alias.
    model
        ``"beta_binomial"`` (default, the posterior predictive) or ``"binomial"``: the
        plug-in model :math:`\mathrm{Bin}(i; n_+, tp/(tp + fn))\,
        \mathrm{Bin}(j; n_-, tn/(tn + fp))` that Lovell et al. compare it with.  The
        plug-in ignores the uncertainty in the rates and is too narrow (module notes);
        it takes no prior.

    Returns
    -------
    xarray.DataArray
        ``pmf`` with dims ``("classifier", "tp", "tn")`` (the classifier dim is kept for
        a single matrix), coords ``tp = 0..n_pos`` and ``tn = 0..n_neg``; each
        classifier's values sum to one.  ``attrs`` say what it is: ``description``,
        ``model``, ``n_pos``, ``n_neg`` and (beta-binomial) the ``priors`` used.

    Raises
    ------
    TypeError
        If ``cm`` is not a :class:`~bayescm.data.ConfusionMatrix`.
    ValueError
        For negative or non-integer class sizes, both zero, an unknown ``model``, a
        ``priors`` given to the binomial model, or the binomial model asked to predict
        a class that ``cm`` has no cases of (the plug-in rate is 0/0).
    bayescm.priors.PriorError
        For unknown prior names or a prior that leaves the posterior improper.

    Notes
    -----
    The array holds ``n_classifiers * (n_pos + 1) * (n_neg + 1)`` float64 values: 8 MB
    per classifier at :math:`10^6` lattice points; a lattice over the memory bound
    (:mod:`bayescm.inference.budget`) raises ``SizeError`` first.  Its marginals are the
    beta-binomial pmfs of :math:`TP'` and :math:`TN'` (``pmf.sum("tn")``,
    ``pmf.sum("tp")``).

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.exact import predictive_pmf
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> pmf = predictive_pmf(cm, 26, 8)
    >>> pmf.dims, pmf.shape
    (('classifier', 'tp', 'tn'), (1, 27, 9))
    >>> round(float(pmf.sum()), 12)
    1.0
    >>> plug_in = predictive_pmf(cm, 26, 8, model="binomial")
    >>> float(plug_in.sel(tp=26).sum())  # fn = 0: the plug-in is sure TP' = 26
    1.0
    >>> round(float(pmf.sel(tp=26).sum()), 3)  # the beta-binomial is not
    0.509
    """
    n_pos, n_neg = _predictive_args(cm, n_pos, n_neg, model)
    attrs: dict[str, Any] = {"model": model, "n_pos": n_pos, "n_neg": n_neg}
    if model == "beta_binomial":
        post, attrs["priors"] = _rate_posteriors(cm, priors)
        p_pos = _betabinom_pmf(n_pos, *post["tpr"])
        p_neg = _betabinom_pmf(n_neg, *post["tnr"])
        what = "posterior predictive (beta-binomial model)"
    else:
        if priors is not None:
            raise ValueError(
                "model='binomial' plugs in the observed rates and uses no prior; drop "
                "priors=... or use model='beta_binomial'."
            )
        marginals = []
        for name, n, (succ, fail), cls in (("tpr", n_pos, _PMF_RATES["tpr"], "positives"),
                                           ("tnr", n_neg, _PMF_RATES["tnr"], "negatives")):
            s, f = cm.cell(succ).astype(float), cm.cell(fail).astype(float)
            empty = np.flatnonzero(s + f == 0)
            if empty.size and n > 0:
                raise ValueError(
                    f"{cm.unit.capitalize()} {cm.classifiers[empty[0]]!r} has no actual {cls} "
                    f"({succ} + {fail} = 0), so its plug-in {name} is 0/0 and the binomial "
                    f"model cannot predict {succ.upper()}'; use model='beta_binomial', "
                    "whose prior covers the missing class."
                )
            marginals.append(_binom_pmf(n, np.divide(s, s + f, out=np.zeros_like(s),
                                                     where=s + f > 0)))
        p_pos, p_neg = marginals
        what = "plug-in binomial model (rates fixed at tp/(tp+fn), tn/(tn+fp))"
    attrs["description"] = (
        f"P(TP'=tp, TN'=tn) of a future test set with n_pos={n_pos} positives and "
        f"n_neg={n_neg} negatives: {what}; FN'=n_pos-tp, FP'=n_neg-tn"
    )
    return xr.DataArray(
        p_pos[:, :, None] * p_neg[:, None, :],
        dims=(cm.unit, "tp", "tn"),
        coords={cm.unit: list(cm.classifiers), "tp": np.arange(n_pos + 1),
                "tn": np.arange(n_neg + 1)},
        name="pmf",
        attrs=attrs,
    )


@renamed_kwargs(prior="priors")
def metric_pmf(
    cm: ConfusionMatrix,
    metric: str | metric_registry.Metric,
    n_pos: int,
    n_neg: int,
    *,
    priors: Mapping[str, Any] | None = None,
    model: str = "beta_binomial",
    decimals: int = 12,
) -> pd.DataFrame:
    r"""Exact posterior predictive pmf of a metric of a future confusion matrix.

    The metric of the future matrix :math:`(TP', n_+ - TP', n_- - TN', TN')` takes one
    value per lattice point :math:`(i, j)`; its pmf sums the joint pmf of
    :func:`predictive_pmf` along each contour of the metric (Lovell, Miller, Capra &
    Bradley 2022/2023, §8):

    .. math::

        P(M = m) = \sum_{(i, j)\,:\, M(i,\, n_+ - i,\, n_- - j,\, j) = m}
        P(TP' = i, TN' = j \mid D).

    Exact: no sampling.  The metric is evaluated once on the whole lattice with
    :func:`bayescm.metrics.evaluate`, values that agree to ``decimals`` decimals are
    one contour (this merges floating-point noise such as :math:`0.1 + 0.2 \ne 0.3`),
    and the masses are summed per contour.

    Parameters
    ----------
    cm
        Observed confusion matrix (one or a batch).
    metric
        Registry key or alias (``"mcc"``, ``"f1"``, ``"ba"``, ...) or a
        :class:`~bayescm.metrics.Metric`.
    n_pos, n_neg
        Actual positives and negatives of the future test set.
    priors, model
        As for :func:`predictive_pmf` (``prior=`` is a deprecated alias).
    decimals
        Metric values that agree to this many decimals are one value: neighbours in
        sorted order closer than :math:`10^{-\text{decimals}}` (relative to the value
        where it exceeds 1, for ``dor`` and ``lr_pos``) are merged.  Unlike rounding,
        this never splits equal values that straddle a rounding boundary.  The
        default 12 lies far above the rounding noise of the registry's formulas and
        below the gaps between distinct values at the sizes this is meant for: the
        closest distinct MCC values on the :math:`10^6`-point lattice of
        ``n_pos = n_neg = 999`` differ by :math:`3.6 \times 10^{-11}` (the tests check
        the contours against exact rational arithmetic; float equality would split
        about half the BA contours).

    Returns
    -------
    pandas.DataFrame
        Index ``(classifier, contour)``, columns ``value`` (the metric, ascending),
        ``probability`` and ``n_points`` (how many lattice points lie on the contour:
        Lovell et al.'s contour counts; the same for every classifier, summing to
        :math:`(n_+ + 1)(n_- + 1)`).  Lattice points where the metric is undefined
        (a zero denominator, e.g. ``ppv`` at :math:`TP' + FP' = 0`) form one last row
        with value NaN.  A contour's ``value`` is the metric at one of its points.
        Contours the model gives no mass stay in the table with probability 0.
        ``frame.loc[name]`` is one classifier's pmf; ``frame.reset_index()`` a long
        table with a ``classifier`` column.  ``frame.attrs`` record the metric, model,
        class sizes and ``decimals``.

    Raises
    ------
    KeyError
        For an unknown metric (the message lists the known ones).
    TypeError, ValueError, bayescm.priors.PriorError
        As for :func:`predictive_pmf`, and for a non-integer ``decimals``.

    Notes
    -----
    Cost: one metric evaluation, one sort and one weighted count per classifier over
    the :math:`(n_+ + 1)(n_- + 1)` lattice points; a few tenths of a second at
    :math:`10^6` points (``benchmarks/bench_exact_pmf.py``).
    Even prevalence-independent metrics (``ba``, ``bm``) depend on the lattice: at
    :math:`n_+ = 20, n_- = 40` up to 21 points share a balanced accuracy, at
    :math:`n_- = 41` at most 2.

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.exact import metric_pmf
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> ba = metric_pmf(cm, "ba", 20, 40)
    >>> round(float(ba["probability"].sum()), 12), int(ba["n_points"].sum())
    (1.0, 861)
    >>> int(ba["n_points"].max())  # 21 lattice points on the contour BA = 1/2
    21
    >>> ppv = metric_pmf(cm, "ppv", 20, 40).loc["cm"]
    >>> ppv.tail(1)[["value", "n_points"]].to_dict("records")  # TP' = FP' = 0
    [{'value': nan, 'n_points': 1}]
    """
    m = metric if isinstance(metric, metric_registry.Metric) else metric_registry.get(metric)
    if isinstance(decimals, bool) or not isinstance(decimals, int | np.integer):
        raise ValueError(f"decimals must be an int (e.g. 12), got {decimals!r}.")
    _predictive_args(cm, n_pos, n_neg, model, per_point=9)  # the contours' arrays too
    pmf = predictive_pmf(cm, n_pos, n_neg, priors=priors, model=model)
    n_pos, n_neg = pmf.attrs["n_pos"], pmf.attrs["n_neg"]
    tp = np.arange(n_pos + 1, dtype=float)[:, None]
    tn = np.arange(n_neg + 1, dtype=float)[None, :]
    with np.errstate(all="ignore"):
        values = np.asarray(metric_registry.evaluate(m, tp, n_pos - tp, n_neg - tn, tn),
                            dtype=float)
    values = np.broadcast_to(values, (n_pos + 1, n_neg + 1)).ravel()
    value, inverse, n_points = _contours(values, 10.0 ** -int(decimals))
    masses = pmf.values.reshape(pmf.shape[0], -1)
    probability = np.stack(
        [np.bincount(inverse, weights=row, minlength=value.size) for row in masses])
    index = pd.MultiIndex.from_product(
        [list(cm.classifiers), np.arange(value.size)], names=[cm.unit, "contour"])
    frame = pd.DataFrame(
        {"value": np.tile(value, len(cm)), "probability": probability.ravel(),
         "n_points": np.tile(n_points.astype(np.int64), len(cm))},
        index=index,
    )
    frame.attrs = {
        "metric": m.key, "label": m.label, "model": model, "n_pos": n_pos, "n_neg": n_neg,
        "decimals": int(decimals),
        "description": (
            f"pmf of {m.label} of a future test set with n_pos={n_pos} positives and "
            f"n_neg={n_neg} negatives ({model} model): mass summed over the lattice "
            "points (TP', TN') on each contour of the metric; value NaN = undefined"
        ),
    }
    return frame
