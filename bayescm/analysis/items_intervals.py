r"""bayescm's accuracy interval beside the CLT and clustered-SE intervals, per model.

For one model with item scores :math:`s_i` (the mean over its runs of item
:math:`i`), :math:`N` items and mean :math:`\bar s`, the usual intervals are
:math:`\bar s \pm z\,\mathrm{SE}` with (Miller 2024, "Adding error bars to evals: a
statistical approach to language model evaluations")

.. math::

    \mathrm{SE}_\mathrm{CLT} = \sqrt{\frac{1}{N(N-1)}\sum_i (s_i - \bar s)^2},\qquad
    \mathrm{SE}_\mathrm{clustered} = \frac1N\sqrt{\sum_c \Bigl(\sum_{i \in c}
        (s_i - \bar s)\Bigr)^2},

the second summing the products of residuals of items in one cluster.  Beside them
the Kish design effect :math:`1 + (\bar m - 1)\hat\rho`, with :math:`\bar m` the mean
cluster size and :math:`\hat\rho` the one-way ANOVA estimate of the intra-cluster
correlation of the item scores,

.. math::

    \hat\rho = \frac{\mathrm{MSB} - \mathrm{MSW}}{\mathrm{MSB} + (n_0 - 1)\mathrm{MSW}},
    \qquad n_0 = \frac{N - \sum_c m_c^2 / N}{C - 1}

(clipped at 0), and bayescm's interval of ``accuracy`` from
:func:`bayescm.models.items` (exact Beta for one model on independent items answered
once).

bayescm's interval is equal-tailed by default: the :math:`(1 \mp p)/2` quantiles of
the posterior draws (of the Beta itself where the fit is the exact one).  Accuracy's
posterior is skewed when clusters differ, and there the highest-density interval,
which leans toward the mode, covers less.  In simulated
benchmarks (``benchmarks/bench_items_calibration.py``: one model at accuracy 0.7,
10-300 items in clusters of 5, intra-cluster correlation 0.1 and 0.3, 1 and 3 runs,
200 data sets per cell) the equal-tailed interval covered as much as the HDI of the
same draws or more in 15 of the 16 clustered cells (up to 0.03 more; 0.005 less in
one), for 1-5% more width.  Quantiles also carry over to any monotone function of the
accuracy (the error rate, its log-odds), which an HDI does not, and they are the
interval of Bowyer et al. (2025, "Don't use the CLT in LLM evals with fewer than a
few hundred datapoints").  ``kind="hdi"`` gives the HDI of :func:`bayescm.summary`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.items import ItemResults
from bayescm.inference.arguments import check_fit_result
from bayescm.inference.marginals import closed_form_of, exact_marginals
from bayescm.stats import (
    SAMPLE_DIMS,
    beta_hdi_any,
    check_hdi_prob,
    check_interval_kind,
    credible_interval,
)

__all__ = ["benchmark_intervals", "icc_anova"]


def icc_anova(scores: np.ndarray, cluster: np.ndarray) -> float:
    """One-way ANOVA estimate of the intra-cluster correlation (0 when < 0 or undefined).

    Examples
    --------
    >>> icc_anova(np.array([1., 1, 0, 0]), np.array([0, 0, 1, 1]))
    1.0
    """
    scores = np.asarray(scores, dtype=float)
    cluster = np.asarray(cluster)
    _, idx, sizes = np.unique(cluster, return_inverse=True, return_counts=True)
    c_, n_ = sizes.size, scores.size
    if c_ < 2 or n_ <= c_:
        return 0.0
    means = np.bincount(idx, weights=scores) / sizes
    grand = scores.mean()
    msb = float(np.sum(sizes * (means - grand) ** 2) / (c_ - 1))
    msw = float(np.sum((scores - means[idx]) ** 2) / (n_ - c_))
    n0 = (n_ - np.sum(sizes**2) / n_) / (c_ - 1)
    denom = msb + (n0 - 1) * msw
    if denom <= 0:
        return 0.0
    return float(np.clip((msb - msw) / denom, 0.0, 1.0))


def _fit(results: ItemResults, random_seed: int | None, fit_options: dict) -> Any:
    from bayescm.inference.fit import fit
    from bayescm.models.items import items

    model = items(results)
    exact = (results.n_models == 1 and results.clusters is None and results.one_run)
    options = {"sampler": "exact" if exact else "nuts", "prior": False, "predictive": False,
               "random_seed": random_seed, **fit_options}
    return fit(model, **options)


def _exact_betas(idata: Any) -> dict[str, tuple[float, float]]:
    """``model -> (a, b)`` where the fit's closed form says accuracy ~ Beta(a, b) exactly
    (what :func:`bayescm.summary` reads; else empty)."""
    found = closed_form_of(idata)
    exact = (None if found is None else
             exact_marginals(*found, ["acc"], registry.registry_for(idata)).get("acc"))
    if exact is None:
        return {}
    a, b = (x.isel(**{"class": 0}) for x in (exact.a, exact.b))
    return {str(m): (float(x), float(y))
            for m, x, y in zip(a["model"].values, a.values, b.values, strict=True)
            if np.isfinite(x)}


def benchmark_intervals(results: ItemResults, idata: Any = None, *, hdi_prob: float = 0.95,
                        kind: str = "equal_tailed", random_seed: int | None = None,
                        **fit_options: Any) -> pd.DataFrame:
    """Per model: bayescm's interval of the accuracy, the CLT and the clustered-SE ones.

    Parameters
    ----------
    results
        A :class:`bayescm.ItemResults`.
    idata
        A fit of ``bcm.models.items(results)``; default: fitted here (exact when
        one model answered independent items once, else NUTS), with
        ``random_seed`` and ``fit_options`` passed to :func:`bayescm.fit`.
    hdi_prob
        Mass of every interval (the classical ones use the normal quantile).
    kind
        bayescm's interval: ``"equal_tailed"`` (default; the quantiles of the
        posterior draws, see above) or ``"hdi"`` (as in :func:`bayescm.summary`).  A
        fit by the exact sampler of one model on independent items answered once
        gives the Beta's own quantiles (or HDI) and mean, without Monte Carlo error.

    Returns
    -------
    pandas.DataFrame
        Index ``model``; columns ``n_items, mean`` (mean item score), ``bayes_mean,
        bayes_lower, bayes_upper`` (posterior of ``accuracy``, ``kind``), ``se_clt,
        clt_lower, clt_upper, se_clustered, clustered_lower, clustered_upper``,
        ``icc`` (ANOVA estimate), ``design_effect`` (Kish) and ``width_ratio``
        (bayescm's width over the CLT's; NaN where the CLT's width is 0, a model
        with the same score on every item).  Without clusters the clustered columns
        equal the CLT's (each item its own cluster: the residual sum is the CLT's
        with 1/N² instead of 1/(N(N - 1))).

    Examples
    --------
    >>> import pandas as pd, bayescm as bcm
    >>> df = pd.DataFrame({"item": range(40), "model": "m",
    ...                    "correct": [1, 0, 1, 1] * 10})
    >>> table = bcm.analysis.benchmark_intervals(bcm.ItemResults.from_frame(df),
    ...                                          random_seed=1)
    >>> round(float(table.loc["m", "mean"]), 3), round(float(table.loc["m", "se_clt"]), 4)
    (0.75, 0.0693)
    """
    if not isinstance(results, ItemResults):
        raise TypeError(f"benchmark_intervals needs a bayescm.ItemResults, got "
                        f"{type(results).__name__}.")
    hdi_prob = check_hdi_prob(hdi_prob)
    check_interval_kind(kind)  # before a fit
    if idata is None:
        idata = _fit(results, random_seed, fit_options)
    check_fit_result(idata)
    post = idata_mod.group(idata, "posterior")
    if "accuracy" not in post or "model" not in post["accuracy"].dims:
        raise ValueError("idata must be a fit of bcm.models.items(results) (its posterior has "
                         "'accuracy' on dim 'model').")
    acc = post["accuracy"]
    _check_fit_of(results, acc, idata)
    z = float(sps.norm.ppf(0.5 + hdi_prob / 2))
    exact = _exact_betas(idata)
    scores = results.successes_array / results.trials_array
    cluster = results.cluster_index
    sizes = results.cluster_sizes
    n_ = results.n_items
    rows = []
    for m, name in enumerate(results.models):
        s = scores[m]
        mean = float(s.mean())
        resid = s - mean
        se_clt = float(np.sqrt(np.sum(resid**2) / (n_ * max(n_ - 1, 1))))
        se_cl = float(np.sqrt(np.sum(np.bincount(cluster, weights=resid) ** 2)) / n_)
        rho = icc_anova(s, cluster) if results.clusters is not None else 0.0
        if str(name) in exact:  # the closed form itself, as bcm.summary reads it
            a, b = exact[str(name)]
            lo, hi = (beta_hdi_any(a, b, hdi_prob=hdi_prob) if kind == "hdi" else
                      sps.beta.ppf([(1 - hdi_prob) / 2, (1 + hdi_prob) / 2], a, b))
            centre = a / (a + b)
        else:
            draws = acc.sel(model=name).transpose(*SAMPLE_DIMS).values.reshape(-1)
            lo, hi = credible_interval(draws, hdi_prob, kind)
            centre = draws.mean()
        rows.append({
            "model": name, "n_items": n_, "mean": mean,
            "bayes_mean": float(centre), "bayes_lower": float(lo),
            "bayes_upper": float(hi), "se_clt": se_clt, "clt_lower": mean - z * se_clt,
            "clt_upper": mean + z * se_clt, "se_clustered": se_cl,
            "clustered_lower": mean - z * se_cl, "clustered_upper": mean + z * se_cl,
            "icc": rho, "design_effect": 1.0 + (float(sizes.mean()) - 1.0) * rho,
            "width_ratio": float((hi - lo) / (2 * z * se_clt)) if se_clt > 0 else np.nan})
    frame = pd.DataFrame(rows).set_index("model")
    frame.attrs.update(hdi_prob=hdi_prob, kind=kind, note=(
        f"bayes_*: posterior of the expected score on a new item "
        f"({'HDI' if kind == 'hdi' else 'equal-tailed'}); clt_*: mean ± z·SE; "
        "clustered_*: mean ± z·clustered SE (Miller 2024)."))
    return frame


def _check_fit_of(results: ItemResults, acc: Any, idata: Any) -> None:
    """Raise unless ``idata`` is a fit of these results: the same models, and (where
    the fit records its data) the same items."""
    fitted = [str(m) for m in acc["model"].values]
    models = [str(m) for m in results.models]
    if fitted != models:
        raise ValueError(f"idata is a fit of the models {fitted[:10]}, results has "
                         f"{models[:10]}: pass the fit of bcm.models.items(results), or "
                         "idata=None to fit it here.")
    if idata_mod.has_group(idata, "observed_data"):
        obs = idata_mod.group(idata, "observed_data")
        if "item" in obs.coords:
            items = [str(i) for i in obs["item"].values]
            mine = [str(i) for i in results.items]
            if items != mine:
                raise ValueError(
                    f"idata is a fit of {len(items):,} items, results has {len(mine):,}"
                    f"{'' if len(items) != len(mine) else ' other ones'}: pass the fit of "
                    "bcm.models.items(results), or idata=None to fit it here.")
