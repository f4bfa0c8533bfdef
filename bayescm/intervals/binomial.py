r"""Classical and Bayesian intervals for rates, and how often they cover the truth.

A rate such as accuracy, TPR or TNR is a proportion :math:`k / n` of successes in
:math:`n` Bernoulli trials.  :func:`binomial` gives its interval by seven methods:
four confidence intervals, and the equal-tailed and highest-density credible
intervals of a Beta posterior (Jeffreys' interval is both at once):

* ``"wald"``: the normal approximation :math:`\hat p \pm z\sqrt{\hat p(1-\hat p)/n}`;
* ``"wilson"``: Wilson's score interval (Wilson 1927);
* ``"agresti_coull"``: Wald's formula on :math:`\tilde p = (k + z^2/2)/(n + z^2)`,
  :math:`\tilde n = n + z^2` (Agresti & Coull 1998);
* ``"clopper_pearson"``: the "exact" interval from Beta quantiles (Clopper & Pearson
  1934);
* ``"jeffreys"``: the equal-tailed interval of the Jeffreys posterior
  Beta(k + 1/2, n - k + 1/2);
* ``"bayes_hdi"``: the highest-density interval of the posterior Beta(k + a, n - k + b)
  under a Beta(a, b) prior;
* ``"bayes_equal_tailed"``: the equal-tailed interval of the same posterior.

The frequentist ones come from ``statsmodels.stats.proportion.proportion_confint``
(called once on whole arrays); the HDI is exact (no sampling).

:func:`coverage` answers the frequentist question for any of them: if the true rate
is :math:`p`, how often does the interval contain it?  For binomial data this is an
exact finite sum (Brown, Cai & DasGupta 2001); Monte Carlo is offered to reproduce
simulation studies such as Morais (2023, Fig. 5).  :func:`coverage_composite` does
the same by simulation for composite metrics (F1, MCC, ...) under the three-Beta
model (Morais 2023, Fig. 6), and :func:`metric_interval` turns a fitted bayescm
model into a table of intervals to set beside the classical ones.

References
----------
Wilson, "Probable inference, the law of succession, and statistical inference",
J. Am. Stat. Assoc. (1927).
Clopper & Pearson, "The use of confidence or fiducial limits illustrated in the case
of the binomial", Biometrika (1934).
Agresti & Coull, "Approximate is better than 'exact' for interval estimation of
binomial proportions", Am. Stat. (1998).
Brown, Cai & DasGupta, "Interval estimation for a binomial proportion", Stat. Sci.
(2001).
Brownlee, "How to report classifier performance with confidence intervals" (2017).
Morais, "A Bayesian approach to machine learning model comparison" (2023).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.confusion import is_boolean
from bayescm.deprecation import renamed_kwargs
from bayescm.inference.posterior import flat, metric_draws, units_of
from bayescm.priors import Beta, Prior, named
from bayescm.stats import beta_hdi_any, check_interval_kind, credible_interval

if TYPE_CHECKING:
    import arviz as az

__all__ = ["METHODS", "binomial", "metric_interval"]

METHODS = ("wald", "wilson", "agresti_coull", "clopper_pearson", "jeffreys", "bayes_hdi",
           "bayes_equal_tailed")
"""Names accepted by :func:`binomial` and :func:`coverage`."""

_STATSMODELS = {"wald": "normal", "wilson": "wilson", "agresti_coull": "agresti_coull",
                "clopper_pearson": "beta", "jeffreys": "jeffreys"}
_BAYES = ("bayes_hdi", "bayes_equal_tailed")
_CHUNK = 2**22  # array elements held at once in the coverage computations


def _rate_prior(value: Any) -> dict[str, Any]:
    return {"rate": value}


_DEFAULT_PRIORS: dict[str, Prior] = {"rate": Beta(1, 1)}


@renamed_kwargs(level="hdi_prob", prior=("priors", _rate_prior))
def binomial(
    k: Any,
    n: Any,
    *,
    method: str = "wilson",
    hdi_prob: float = 0.95,
    priors: dict[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Interval for a binomial proportion from :math:`k` successes in :math:`n` trials.

    With :math:`\hat p = k/n`, :math:`z = \Phi^{-1}((1 + p)/2)` and
    :math:`\alpha = 1 - p` for the mass :math:`p` = ``hdi_prob``:

    * ``"wald"``: :math:`\hat p \pm z\sqrt{\hat p(1-\hat p)/n}`, **clipped to [0, 1]**.
      It collapses to the point :math:`[0, 0]` at :math:`k = 0` and :math:`[1, 1]` at
      :math:`k = n`.  This is the formula of Brownlee's tutorial (2017), which calls
      it the Wilson score interval; Wilson's interval is the next one.
    * ``"wilson"``: :math:`\frac{k + z^2/2}{n + z^2} \pm \frac{z}{n + z^2}
      \sqrt{\frac{k(n-k)}{n} + \frac{z^2}{4}}`, which lies in [0, 1] and touches 0
      at :math:`k = 0` and 1 at :math:`k = n`.
    * ``"agresti_coull"``: the Wald interval on :math:`\tilde p = (k + z^2/2)/\tilde n`
      with :math:`\tilde n = n + z^2`, clipped to [0, 1].  "Add two successes and two
      failures" (Morais 2023) is its :math:`z \approx 2` special case.
    * ``"clopper_pearson"``: :math:`[B^{-1}(\alpha/2; k, n-k+1),
      B^{-1}(1-\alpha/2; k+1, n-k)]`, with lower bound 0 at :math:`k = 0` and upper
      bound 1 at :math:`k = n`.
    * ``"jeffreys"``: statsmodels' definition, the plain equal-tailed interval
      :math:`[B^{-1}(\alpha/2; k+\tfrac12, n-k+\tfrac12),
      B^{-1}(1-\alpha/2; k+\tfrac12, n-k+\tfrac12)]` *without* the convention of
      Brown, Cai & DasGupta (2001), who set the lower bound to 0 at :math:`k = 0`
      and the upper bound to 1 at :math:`k = n`.  It is therefore identical to
      ``"bayes_equal_tailed"`` with ``priors={"rate": Beta(0.5, 0.5)}`` for every
      :math:`k`.
    * ``"bayes_hdi"``: the highest-density interval of the posterior
      :math:`\mathrm{Beta}(k + a, n - k + b)` under the prior
      :math:`\mathrm{Beta}(a, b)`, exact.  When a shape parameter is below 1 (prior
      :math:`a < 1` and :math:`k = 0`, or :math:`b < 1` and :math:`k = n`) the
      posterior density is J-shaped, unbounded at 0 (or 1), and the HDI is
      :math:`[0, B^{-1}(p)]` (or :math:`[B^{-1}(1 - p), 1]`).
      Both shapes below 1 would need :math:`n = 0`, which is rejected.
    * ``"bayes_equal_tailed"``: :math:`[B^{-1}(\alpha/2), B^{-1}(1 - \alpha/2)]` of the
      same posterior.  Morais (2023) and bob.measure's credible regions are of this
      kind (with :math:`a = b = \lambda`, 1 flat or 1/2 Jeffreys).

    Parameters
    ----------
    k, n
        Successes and trials: whole numbers, :math:`0 \le k \le n`, :math:`n \ge 1`;
        scalars or arrays, broadcast together.
    method
        One of :data:`METHODS`.
    hdi_prob
        Confidence level or credible mass, in (0, 1) (the deprecated ``level=`` is
        an alias).
    priors
        ``{"rate": prior}``: the Beta prior of the proportion for the two ``bayes_*``
        methods, anything :func:`bayescm.priors.coerce` reads as a proper Beta
        (``Beta(a, b)``, ``(a, b)``, ``scipy.stats.beta(a, b)``, a ``pymc_extras``
        ``Prior("Beta", ...)``); default Beta(1, 1) (flat).  The other methods ignore
        it.  The deprecated ``prior=(a, b)`` means ``priors={"rate": (a, b)}``.

    Returns
    -------
    lower, upper
        Float arrays of the broadcast shape of ``k`` and ``n`` (0-d for scalars).

    Raises
    ------
    ValueError
        For counts that are negative, not whole, not finite, :math:`k > n` or
        :math:`n = 0`; ``hdi_prob`` outside (0, 1); an unknown method.
    bayescm.PriorError
        For priors that are not ``{"rate": proper Beta}``.

    Examples
    --------
    >>> from bayescm import intervals
    >>> lo, hi = intervals.binomial(1, 2, method="clopper_pearson")
    >>> round(float(lo), 6), round(float(hi), 6)
    (0.012579, 0.987421)
    >>> lo, hi = intervals.binomial([0, 5, 10], 10, method="bayes_hdi")
    >>> lo.round(4).tolist(), hi.round(4).tolist()
    ([0.0, 0.2338, 0.7616], [0.2384, 0.7662, 1.0])
    """
    k_arr, n_arr = _counts(k, n)
    level = _hdi_prob(hdi_prob)
    method = _method(method)
    if k_arr.size == 0:
        return np.empty(k_arr.shape), np.empty(k_arr.shape)
    if method in _STATSMODELS:
        from statsmodels.stats.proportion import proportion_confint  # heavy: when asked

        lo, hi = proportion_confint(k_arr, n_arr, alpha=1 - level, method=_STATSMODELS[method])
        lo = np.array(lo, dtype=float).reshape(k_arr.shape)
        hi = np.array(hi, dtype=float).reshape(k_arr.shape)
        if method == "wilson":  # exact 0 and 1, not rounding residue such as 7e-18
            lo[k_arr == 0] = 0.0
            hi[k_arr == n_arr] = 1.0
        return lo, hi
    a0, b0 = _prior(priors)
    a, b = k_arr + a0, n_arr - k_arr + b0
    if method == "bayes_equal_tailed":
        return (np.asarray(special.betaincinv(a, b, (1 - level) / 2), dtype=float),
                np.asarray(special.betaincinv(a, b, (1 + level) / 2), dtype=float))
    # a, b > 0 and not both < 1 (that needs n = 0): a monotone or unimodal density
    return beta_hdi_any(a, b, hdi_prob=level)


@renamed_kwargs(level="hdi_prob")
def metric_interval(
    idata: az.InferenceData,
    metric: str,
    *,
    hdi_prob: float = 0.95,
    kind: str = "hdi",
) -> pd.DataFrame:
    r"""Credible interval of a metric for every classifier of a fitted model.

    The metric's posterior draws :math:`m^{(s)} = f(\theta^{(s)})` (all chains
    pooled) give either the highest-density interval (``kind="hdi"``: the
    narrowest window holding a share ``hdi_prob`` of the sorted draws,
    :func:`bayescm.stats.hdi`, as in :func:`bayescm.summary` and ``arviz.hdi``) or
    the equal-tailed interval (``kind="equal_tailed"``: the
    :math:`(1 \mp p)/2` quantiles for :math:`p` = ``hdi_prob``).  Set it
    beside :func:`binomial` for the classical intervals of the same rate.

    Parameters
    ----------
    idata
        Result of :func:`bayescm.fit` on a bayescm model.
    metric
        Registry key or alias (``"tpr"``, ``"f1"``, ``"mcc"``, ...) computed in the fit.
    hdi_prob
        Credible mass, in (0, 1) (the deprecated ``level=`` is an alias).
    kind
        ``"hdi"`` or ``"equal_tailed"``.

    Returns
    -------
    pandas.DataFrame
        One row per classifier (index ``classifier``; ``(population, classifier)``
        for latent-class models), columns ``lower``, ``upper``, ``width``;
        ``attrs`` record metric, hdi_prob and kind.

    Raises
    ------
    TypeError
        If ``idata`` is not an ``arviz.InferenceData``.
    KeyError
        For an unknown metric or one the fit did not compute.
    ValueError
        For ``hdi_prob`` outside (0, 1) or an unknown kind.

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm import intervals
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)
    >>> table = intervals.metric_interval(idata, "tpr")
    >>> list(table.columns), float(table.loc["cm", "upper"]) > 0.99
    (['lower', 'upper', 'width'], True)
    """
    if not idata_mod.is_inference_data(idata):
        raise TypeError(
            f"metric_interval needs the arviz.InferenceData returned by bayescm.fit, got "
            f"{type(idata).__name__}; for counts use intervals.binomial(k, n, method=...)."
        )
    level = _hdi_prob(hdi_prob)
    check_interval_kind(kind)  # before the draws are read
    da = metric_draws(idata, metric)
    units = units_of(da)
    values = flat(da, units)
    values = values.reshape(-1, values.shape[-1])
    lower, upper = credible_interval(values, level, kind)
    if units:
        index = pd.MultiIndex.from_product([[str(v) for v in da[u].values] for u in units],
                                           names=units)
        if len(units) == 1:
            index = index.get_level_values(0)
    else:
        index = pd.Index([registry.get(metric).key], name="metric")
    out = pd.DataFrame({"lower": lower, "upper": upper, "width": upper - lower}, index=index)
    out.attrs.update(metric=registry.get(metric).key, hdi_prob=level, kind=kind)
    return out


def _method(method: Any) -> str:
    if method not in METHODS:
        raise ValueError(f"Unknown method {method!r}. Known methods: {', '.join(METHODS)}.")
    return method


def _hdi_prob(hdi_prob: Any) -> float:
    try:
        value = float(hdi_prob)
    except (TypeError, ValueError) as err:
        raise ValueError(f"hdi_prob must be a number in (0, 1), got {hdi_prob!r}.") from err
    if not 0 < value < 1:
        hint = f" (a percentage? use {value / 100:g})" if 1 < value < 100 else ""
        raise ValueError(f"hdi_prob must lie in (0, 1), got {hdi_prob!r}{hint}.")
    return value


def _prior(priors: Any) -> tuple[float, float]:
    """``(a, b)`` of the proper Beta prior of the rate."""
    return named(priors, _DEFAULT_PRIORS, where="intervals", proper=True)["rate"].params


def _counts(k: Any, n: Any) -> tuple[np.ndarray, np.ndarray]:
    if is_boolean(k) or is_boolean(n):
        raise ValueError(f"k and n are counts, not booleans; got {k!r}, {n!r}.")
    try:
        k_arr = np.asarray(k, dtype=float)
        n_arr = np.asarray(n, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"k and n must be numbers or arrays of counts, got {k!r}, {n!r}.") from err
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError as err:
        raise ValueError(
            f"k (shape {k_arr.shape}) and n (shape {n_arr.shape}) do not broadcast together."
        ) from err
    for name, arr in (("k", k_arr), ("n", n_arr)):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} holds NaN or infinite values; counts must be finite.")
        if (arr < 0).any():
            raise ValueError(f"{name} holds negative values ({arr[arr < 0][0]:g}); counts "
                             "are >= 0.")
        if (arr != np.round(arr)).any():
            bad = arr[arr != np.round(arr)][0]
            raise ValueError(f"{name} must hold whole numbers of cases, got {bad:g}; counts "
                             "come from a confusion matrix, not from rates.")
    if (n_arr == 0).any():
        raise ValueError("n = 0 trials: a proportion of nothing has no interval; drop those "
                         "entries.")
    if (k_arr > n_arr).any():
        i = np.flatnonzero(k_arr > n_arr)[0]
        raise ValueError(f"k > n (k = {k_arr.flat[i]:g}, n = {n_arr.flat[i]:g}): successes "
                         "cannot exceed trials; is n the number of trials (e.g. tp + fn)?")
    return np.array(k_arr), np.array(n_arr)


def _whole(value: Any, name: str, *, minimum: int) -> int:
    if (isinstance(value, bool) or not isinstance(value, int | np.integer | float)
            or not np.isfinite(value) or value != int(value) or value < minimum):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}.")
    return int(value)


def _proportions(values: Any, name: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence of proportions.")
    if not (np.isfinite(arr).all() and (arr >= 0).all() and (arr <= 1).all()):
        raise ValueError(f"{name} must hold true proportions in [0, 1], got {arr}.")
    return arr
