r"""How often an interval covers the truth: exact sums and simulation.

:func:`coverage` gives, for a true rate :math:`p`, the probability that an interval
of :func:`bayescm.intervals.binomial` contains it: an exact finite sum over the
binomial outcomes (Brown, Cai & DasGupta, "Interval estimation for a binomial
proportion", 2001), or Monte Carlo to reproduce simulation studies (Morais, "A
Bayesian approach to machine learning model comparison", 2023, Fig. 5).
:func:`coverage_composite` does the same by simulation for composite metrics (F1,
MCC, ...) under the three-Beta model (Morais 2023, Fig. 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from bayescm import metrics as registry
from bayescm.deprecation import renamed_kwargs
from bayescm.family import default_family
from bayescm.stats import draw_conjugate, hdi

if TYPE_CHECKING:
    pass

from bayescm.intervals.binomial import (
    _BAYES,
    _CHUNK,
    _hdi_prob,
    _method,
    _prior,
    _proportions,
    _rate_prior,
    _whole,
    binomial,
)

__all__ = ["coverage", "coverage_composite"]


@renamed_kwargs(level="hdi_prob", prior=("priors", _rate_prior))
def coverage(
    method: str,
    n: int,
    p_grid: Sequence[float] | np.ndarray,
    *,
    hdi_prob: float = 0.95,
    n_sims: int | None = None,
    priors: dict[str, Any] | None = None,
    random_seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    r"""Coverage and expected width of a binomial interval at each true proportion.

    The interval :math:`[L(k), U(k)]` of :func:`binomial` depends on the data only
    through :math:`k \in \{0, \dots, n\}`, so the :math:`n + 1` intervals are
    computed once.  With ``n_sims=None`` the coverage and the expected width are
    the exact sums

    .. math::

        C(p) = \sum_{k=0}^{n} \binom{n}{k} p^k (1-p)^{n-k}\,
        \mathbf{1}[L(k) \le p \le U(k)],\qquad
        W(p) = \sum_{k=0}^{n} \binom{n}{k} p^k (1-p)^{n-k}\,(U(k) - L(k)),

    evaluated as a (len(p_grid), n + 1) matrix product (intervals are closed: an
    endpoint equal to :math:`p` covers it).  With ``n_sims`` given,
    ``n_sims`` studies :math:`k_s \sim \mathrm{Bin}(n, p)` are simulated per
    :math:`p` and :math:`C, W` are estimated by their Monte Carlo means (the design
    of simulation studies such as Morais 2023, Fig. 5, which used 100 values of
    :math:`p` and 10,000 studies each); the exact mode has no Monte Carlo error and
    is the better choice except to check a simulation.

    Because :math:`k` is discrete, :math:`C(p)` is a saw-tooth in :math:`p` (Brown,
    Cai & DasGupta 2001): Clopper–Pearson's never drops below the level, Wald's
    falls far below it near 0 and 1, and the others oscillate around the level.

    Parameters
    ----------
    method
        One of :data:`METHODS`.
    n
        Trials per study (a whole number >= 1).
    p_grid
        True proportions in [0, 1] (1-d).
    hdi_prob
        Nominal level (confidence level or credible mass), in (0, 1).
    n_sims
        Simulated studies per true proportion; None (default) for the exact sums.
    priors
        ``{"rate": prior}`` of the ``bayes_*`` methods, as for :func:`binomial`.
    random_seed
        Seed or ``numpy.random.Generator`` for the simulation.

    Returns
    -------
    pandas.DataFrame
        Index ``p``; columns ``coverage``, ``coverage_se`` (binomial Monte Carlo
        standard error :math:`\sqrt{C(1-C)/n_\text{sims}}`, 0 for the exact sums),
        ``mean_width`` and ``n``; ``attrs`` record method, hdi_prob, n_sims and
        prior (the ``(a, b)`` of the ``bayes_*`` methods' Beta prior, else None).

    Raises
    ------
    ValueError
        For a bad method, ``n``, ``p_grid``, ``hdi_prob``, ``n_sims`` or prior.

    Examples
    --------
    >>> from bayescm import intervals
    >>> table = intervals.coverage("clopper_pearson", 50, [0.1, 0.5, 0.9])
    >>> bool((table["coverage"] >= 0.95).all())
    True
    >>> round(float(intervals.coverage("wald", 50, [0.02]).loc[0.02, "coverage"]), 4)
    0.6354
    """
    n = _whole(n, "n", minimum=1)
    p = _proportions(p_grid, "p_grid")
    ks = np.arange(n + 1)
    lower, upper = binomial(ks, n, method=method, hdi_prob=hdi_prob, priors=priors)
    width = upper - lower
    cov = np.empty(p.size)
    mean_width = np.empty(p.size)
    if n_sims is None:
        rows = max(1, _CHUNK // (n + 1))
        for s in range(0, p.size, rows):
            ps = p[s:s + rows, None]
            pmf = stats.binom.pmf(ks, n, ps)
            cov[s:s + rows] = np.where((lower <= ps) & (ps <= upper), pmf, 0.0).sum(-1)
            mean_width[s:s + rows] = pmf @ width
        se = np.zeros(p.size)
    else:
        n_sims = _whole(n_sims, "n_sims", minimum=1)
        rng = np.random.default_rng(random_seed)
        rows = max(1, _CHUNK // n_sims)
        for s in range(0, p.size, rows):
            ps = p[s:s + rows, None]
            k = rng.binomial(n, ps, size=(ps.shape[0], n_sims))
            cov[s:s + rows] = ((lower[k] <= ps) & (ps <= upper[k])).mean(-1)
            mean_width[s:s + rows] = width[k].mean(-1)
        se = np.sqrt(cov * (1 - cov) / n_sims)
    out = pd.DataFrame({"coverage": cov, "coverage_se": se, "mean_width": mean_width,
                        "n": np.full(p.size, n, dtype=np.int64)},
                       index=pd.Index(p, name="p"))
    method = _method(method)
    out.attrs.update(method=method, hdi_prob=float(hdi_prob), n_sims=n_sims,
                     prior=_prior(priors) if method in _BAYES else None)
    return out


@renamed_kwargs(level="hdi_prob")
def coverage_composite(
    metric: str | registry.Metric,
    *,
    n_pos: int,
    n_neg: int,
    tpr_grid: Sequence[float] | np.ndarray,
    tnr_grid: Sequence[float] | np.ndarray | None = None,
    prevalence: float | None = None,
    hdi_prob: float = 0.95,
    n_sims: int = 200,
    draws: int = 1000,
    random_seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    r"""Coverage of the three-Beta model's HDI for any metric, by simulation.

    The analogue of Morais (2023, Fig. 6) for every registry metric.  The test set
    has fixed class sizes :math:`n_+` (positives) and :math:`n_-` (negatives), so
    its prevalence is known by design and is not inferred; the metric is evaluated
    at :math:`\varphi` = ``prevalence`` (default :math:`n_+/(n_+ + n_-)`, the test
    set's own).  For every true pair :math:`(\text{tpr}, \text{tnr})` of the grid:

    1. the true value is :math:`m^* = f(\theta)` with
       :math:`\theta = (\text{tpr}\,\varphi, (1-\text{tpr})\varphi,
       (1-\text{tnr})(1-\varphi), \text{tnr}(1-\varphi))`;
    2. ``n_sims`` studies are simulated: :math:`tp \sim \mathrm{Bin}(n_+, \text{tpr})`,
       :math:`tn \sim \mathrm{Bin}(n_-, \text{tnr})`;
    3. each study's posterior under flat priors, :math:`\text{tpr} \sim
       \mathrm{Beta}(1 + tp, 1 + fn)` and :math:`\text{tnr} \sim
       \mathrm{Beta}(1 + tn, 1 + fp)`, gives ``draws`` draws of the metric at
       :math:`\varphi` (:func:`bayescm.metrics.evaluate`) and their ``hdi_prob``
       HDI (:func:`bayescm.stats.hdi`);
    4. the coverage is the share of studies whose HDI contains :math:`m^*`.

    All studies of a grid point are one (n_sims, draws) array (in blocks of bounded
    memory); only the grid points are looped over.

    The coverage is that of the interval *as computed from* ``draws`` draws, and
    that interval is slightly too short: the sample HDI spans
    :math:`\lfloor p \cdot \text{draws} \rfloor` gaps between sorted
    draws (:math:`p` = ``hdi_prob``), which hold on average
    :math:`\lfloor p \cdot \text{draws} \rfloor / (\text{draws} + 1)` of the
    posterior mass (0.949 for 1,000 draws at 95%), and taking the narrowest window
    favours windows holding less.  For F1
    with 50 + 50 cases the coverage is about 0.935 with 200 draws, 0.944 with 1,000
    and 0.947 with 5,000 (20,000 studies each); with 20 draws the "HDI" is the range
    of the draws and covers about 19/21 = 0.905.

    Parameters
    ----------
    metric
        Registry key or alias, or a :class:`bayescm.metrics.Metric`.
    n_pos, n_neg
        Actual positives and negatives per simulated test set (whole numbers >= 1).
    tpr_grid, tnr_grid
        True rates in [0, 1]; every combination is evaluated.  ``tnr_grid``
        defaults to ``tpr_grid``.
    prevalence
        :math:`\varphi` at which the metric is evaluated, in (0, 1); default the test
        set's :math:`n_+/(n_+ + n_-)`.  Prevalence-free metrics (tpr, tnr, bm, ...)
        do not depend on it.
    hdi_prob
        Credible mass, in (0, 1) (the deprecated ``level=`` is an alias).
    n_sims
        Simulated studies per grid point; the coverage's Monte Carlo standard error
        is about :math:`\sqrt{0.05 \cdot 0.95 / n_\text{sims}}`.
    draws
        Posterior draws per study (at least 10): i.i.d. from the closed form in one
        chain, so the total per study.
    random_seed
        Seed or ``numpy.random.Generator``.

    Returns
    -------
    pandas.DataFrame
        Index ``(tpr, tnr)``; columns ``value`` (true metric), ``coverage``,
        ``coverage_se`` (:math:`\sqrt{C(1-C)/n_\text{sims}}`) and ``mean_width`` (of
        the HDI); ``attrs`` record the settings.  Coverage is NaN where the true
        metric is undefined.

    Raises
    ------
    KeyError
        For an unknown metric.
    ValueError
        For bad class sizes, grids, prevalence, ``hdi_prob``, ``n_sims`` or ``draws``.

    Examples
    --------
    >>> from bayescm import intervals
    >>> table = intervals.coverage_composite("f1", n_pos=50, n_neg=50, tpr_grid=[0.8],
    ...                                      n_sims=100, draws=200, random_seed=1)
    >>> table.index.names, list(table.columns)
    (FrozenList(['tpr', 'tnr']), ['value', 'coverage', 'coverage_se', 'mean_width'])
    >>> round(float(table["value"].iloc[0]), 4)
    0.8
    """
    m = metric if isinstance(metric, registry.Metric) else registry.get(metric)
    n_pos = _whole(n_pos, "n_pos", minimum=1)
    n_neg = _whole(n_neg, "n_neg", minimum=1)
    tprs = _proportions(tpr_grid, "tpr_grid")
    tnrs = tprs if tnr_grid is None else _proportions(tnr_grid, "tnr_grid")
    if prevalence is None:
        phi = n_pos / (n_pos + n_neg)
    else:
        phi = float(prevalence)
        if not 0 < phi < 1:
            raise ValueError(f"prevalence must lie in (0, 1), got {prevalence!r}.")
    level = _hdi_prob(hdi_prob)
    n_sims = _whole(n_sims, "n_sims", minimum=1)
    draws = _whole(draws, "draws", minimum=10)
    rng = np.random.default_rng(random_seed)
    chunk = max(1, _CHUNK // (2 * draws))
    family = default_family("binary")  # its update of tpr and tnr, default priors

    def metric_of(tpr: Any, tnr: Any) -> Any:
        return registry.evaluate(m, *registry.cells_from_rates(phi, tpr, tnr))

    rows = []
    for tpr in tprs:
        for tnr in tnrs:
            truth = float(metric_of(tpr, tnr))
            tp = rng.binomial(n_pos, tpr, size=n_sims)
            tn = rng.binomial(n_neg, tnr, size=n_sims)
            lower, upper = np.empty(n_sims), np.empty(n_sims)
            for s in range(0, n_sims, chunk):
                part = slice(s, s + chunk)
                # one row of draws per study: parameters broadcast to (studies, draws)
                shape = (tp[part].size, draws)
                rates = family.rate_posteriors({c: v[:, None] for c, v in (
                    ("tp", tp[part]), ("fn", n_pos - tp[part]), ("fp", n_neg - tn[part]),
                    ("tn", tn[part]))})
                post = draw_conjugate(rng, (), betas={r: (np.broadcast_to(
                    rates[r][0], shape), rates[r][1]) for r in ("tpr", "tnr")})
                lower[part], upper[part] = hdi(metric_of(post["tpr"], post["tnr"]), level)
            if np.isfinite(truth):
                share = float(np.mean((lower <= truth) & (truth <= upper)))
            else:
                share = np.nan
            rows.append({"tpr": tpr, "tnr": tnr, "value": truth, "coverage": share,
                         "coverage_se": np.sqrt(share * (1 - share) / n_sims),
                         "mean_width": float(np.mean(upper - lower))})
    out = pd.DataFrame(rows).set_index(["tpr", "tnr"])
    out.attrs.update(metric=m.key, n_pos=n_pos, n_neg=n_neg, prevalence=phi, hdi_prob=level,
                     n_sims=n_sims, draws=draws, prior=", ".join(
                         f"{family.default_priors[r]!r} on {r}" for r in ("tpr", "tnr")))
    return out


# -- validation ---------------------------------------------------------------------------------
