r"""Metric uncertainty and deception risk (Tötsch & Hoffmann 2021, §2B–2C).

*Metric uncertainty* (MU) is the width of the 95% highest-density interval of a
metric's posterior.  Bookmaker informedness :math:`BM = TPR + TNR - 1` measures how
much better than guessing a classifier is; the posterior probabilities

.. math::

    r_{informative} = \Pr(BM > \rho \mid D),\qquad
    r_{deceptive} = \Pr(BM < -\rho \mid D),\qquad
    \Pr(|BM| \le \rho \mid D)

split its posterior at a region of practical equivalence :math:`[-\rho, \rho]`
around 0 (Tötsch & Hoffmann's eqs. 13–14 are the case :math:`\rho = 0`).

For K classes the same question is asked of multiclass informedness (Powers 2011:
the bias-weighted mean of the one-vs-rest informedness, 0 for a classifier whose
prediction is independent of the class) or of Cohen's kappa: "worse than chance" is
the posterior probability that it is below :math:`-\rho`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import integrate, stats

from bayescm.data.confusion import CELLS, ConfusionMatrix
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.family import default_family
from bayescm.inference.posterior import flat, metric_draws, units_of
from bayescm.metrics import registry_for
from bayescm.stats import hdi

if TYPE_CHECKING:
    import arviz as az

__all__ = ["deception", "metric_uncertainty"]


def metric_uncertainty(
    data: az.InferenceData | ConfusionMatrix | MulticlassConfusionMatrix,
    metric: str,
    hdi_prob: float = 0.95,
    *,
    group: str = "posterior",
    draws: int = 20_000,
    random_seed: int | None = None,
) -> pd.DataFrame:
    """HDI width of a metric per classifier or slice (Tötsch & Hoffmann's metric
    uncertainty).

    Parameters
    ----------
    data
        InferenceData from :func:`bayescm.fit` (or the DataTree of
        :func:`bayescm.exact_posterior`, NumPy or Dask-backed), or a ConfusionMatrix
        (three-Beta posterior with Beta(1, 1) priors, drawn exactly; a sliced matrix
        gets one per slice), or a MulticlassConfusionMatrix (class prevalence and rows
        with flat Dirichlet priors, drawn exactly).
    metric
        A key or alias of the registry that fits the data (for K classes: per-class
        ``"recall"``, averaged ``"f1_macro"``, overall ``"kappa"``, ...).
    hdi_prob
        Mass of the interval (0.95 gives MU).
    group
        InferenceData group to read (``"posterior"``, ``"prior"``, ...).
    draws
        For a ConfusionMatrix: i.i.d. posterior draws in one chain (the total).
    random_seed
        Seed of those draws.

    Returns
    -------
    pandas.DataFrame
        One row per classifier, or per slice of a sliced matrix (index ``slice``),
        and population, or class for a per-class multiclass metric: ``hdi_lower``,
        ``hdi_upper``, ``mu``
        and ``undefined``, the share of draws where the metric is undefined or
        infinite (ppv of a predictive table without predicted positives, ...): the
        HDI is that of the other draws (NaN when fewer than two are left).

    Examples
    --------
    >>> import bayescm as bcm
    >>> mu = bcm.analysis.metric_uncertainty(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6),
    ...                                      "tnr", random_seed=1)
    >>> 0.50 < float(mu.loc["cm", "mu"]) < 0.53   # exact: 0.513 for Beta(7, 3)
    True
    >>> mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> list(bcm.analysis.metric_uncertainty(mc, "recall", random_seed=1).index)
    [('cm', 'cat'), ('cm', 'dog'), ('cm', 'bird')]
    """
    da = metric_draws(data, metric, group=group, draws=draws, random_seed=random_seed)
    units = units_of(da)
    x = flat(da, units)
    x = x.reshape(-1, x.shape[-1])
    defined = np.isfinite(x)
    if defined.all():
        lo, hi = hdi(x, hdi_prob)
    else:  # the HDI of the draws where the metric is defined; their share is reported
        lo, hi = np.full(len(x), np.nan), np.full(len(x), np.nan)
        for i, (row, ok) in enumerate(zip(x, defined, strict=True)):
            if ok.sum() >= 2:
                lo[i], hi[i] = (v[0] for v in hdi(row[ok][None, :], hdi_prob))
    index = da.isel(chain=0, draw=0, drop=True).to_series().index
    out = pd.DataFrame({"hdi_lower": lo, "hdi_upper": hi, "mu": hi - lo,
                        "undefined": 1 - defined.mean(-1)}, index=index)
    out.attrs.update(metric=metric, hdi_prob=hdi_prob)
    return out


def deception(
    data: az.InferenceData | ConfusionMatrix | MulticlassConfusionMatrix,
    rope: float = 0.0,
    *,
    metric: str = "bm",
    group: str = "posterior",
    draws: int = 20_000,
    random_seed: int | None = None,
) -> pd.DataFrame:
    r"""Probabilities of being informative, deceptive (worse than chance) or
    practically uninformative.

    Parameters
    ----------
    data
        InferenceData from :func:`bayescm.fit` (binary or multiclass) holding
        ``metric`` (or the DataTree of :func:`bayescm.exact_posterior`), a
        ConfusionMatrix (one or many classifiers, or slices) or a
        MulticlassConfusionMatrix.  For a
        ConfusionMatrix and ``metric="bm"`` the probabilities are exact: with
        independent Beta posteriors :math:`f` of TPR and :math:`G` the CDF of TNR,
        :math:`\Pr(BM < -\rho) = \int_0^1 f(x)\,G(1 - \rho - x)\,dx`, by quadrature.
        Otherwise they are shares of posterior draws (for a confusion matrix,
        ``draws`` i.i.d. draws of the exact posterior, as in :func:`metric_uncertainty`).
    rope
        Half-width :math:`\rho \ge 0` of the region of practical equivalence
        around 0.
    metric
        A metric that is 0 for a classifier no better than chance and negative
        below it: ``"bm"`` (informedness; for K classes Powers' multiclass
        informedness), ``"kappa"``, ``"mcc"``, ``"mk"``, or their per-class
        one-vs-rest versions.
    group
        InferenceData group to read.
    draws, random_seed
        Draws of the exact posterior of a confusion matrix, where no closed form is
        used (total, one chain), and their seed.

    Returns
    -------
    pandas.DataFrame
        Per classifier or slice (and class for a per-class metric), indexed like
        :func:`metric_uncertainty`: ``r_informative`` =
        P(metric > rope), ``r_deceptive`` = P(metric < -rope), ``p_uninformative`` =
        ``P(|metric| <= rope)`` and ``undefined`` = P(metric undefined); rows sum to 1.
        BM is undefined in a predictive table without actual positives or negatives
        (``group="posterior_predictive"``); from a confusion matrix or a posterior
        ``undefined`` is 0.

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=28, fn=9, fp=4, tn=3, classifier="8")
    >>> round(float(bcm.analysis.deception(cm).loc["8", "r_deceptive"]), 3)
    0.143

    Worse than chance, K = 3 (the classifier mostly swaps "dog" and "bird"):

    >>> mc = bcm.MulticlassConfusionMatrix([[4, 3, 3], [3, 1, 7], [2, 8, 1]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> r = bcm.analysis.deception(mc, rope=0.05, metric="kappa", random_seed=1)
    >>> round(float(r.loc["cm", "r_deceptive"]), 2)
    0.9
    """
    if not (isinstance(rope, int | float | np.integer | np.floating)
            and not isinstance(rope, bool) and np.isfinite(rope) and rope >= 0):
        raise ValueError(f"rope must be a number >= 0, got {rope!r}.")
    found = registry_for(data, group=group).get(metric)
    if found.bounds[0] >= 0:
        raise ValueError(
            f"deception needs a metric that is 0 at chance and negative below it (bm, kappa, "
            f"mcc, mk), got {metric!r} with range {tuple(found.bounds)}.")
    if isinstance(data, ConfusionMatrix) and found.key == "bm":
        rows = {}
        post = default_family("binary").rate_posteriors({c: data.cell(c) for c in CELLS})
        for i, name in enumerate(data.classifiers):
            tpr, tnr = (stats.beta(post[r][0][i], post[r][1][i]) for r in ("tpr", "tnr"))

            def below(c: float, tpr=tpr, tnr=tnr) -> float:
                # P(TPR + TNR - 1 < c) = int f_TPR(x) F_TNR(1 + c - x) dx
                return integrate.quad(lambda x: tpr.pdf(x) * tnr.cdf(1 + c - x), 0, 1,
                                      epsabs=1e-12, epsrel=1e-10, limit=200)[0]

            # quadrature error can leave a probability just outside [0, 1]
            dec = min(max(below(-rope), 0.0), 1.0)
            inf_ = min(max(1 - below(rope), 0.0), 1.0 - dec)
            rows[name] = (inf_, dec, max(0.0, 1 - inf_ - dec), 0.0)
        out = pd.DataFrame.from_dict(
            rows, orient="index",
            columns=["r_informative", "r_deceptive", "p_uninformative", "undefined"])
        out.index.name = data.unit  # "classifier", or "slice" for a sliced matrix
        return out
    da = metric_draws(data, found.key, group=group, draws=draws, random_seed=random_seed)
    units = units_of(da)
    x = flat(da, units).reshape(-1, da.sizes["chain"] * da.sizes["draw"])
    index = da.isel(chain=0, draw=0, drop=True).to_series().index
    return pd.DataFrame({"r_informative": (x > rope).mean(-1),
                         "r_deceptive": (x < -rope).mean(-1),
                         "p_uninformative": (np.abs(x) <= rope).mean(-1),
                         "undefined": np.isnan(x).mean(-1)}, index=index)
