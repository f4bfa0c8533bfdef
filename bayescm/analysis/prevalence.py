r"""Metrics at a deployment prevalence (Tötsch & Hoffmann 2021, §1A).

TPR and TNR belong to the classifier; prevalence belongs to the population.  A
test set enriched in positives says little directly about PPV in a population
where positives are rare.  Keeping the posterior draws of TPR and TNR and
replacing the prevalence by the deployment value :math:`\phi'`

.. math::

    \theta' = \bigl(TPR\,\phi',\ (1-TPR)\,\phi',\ (1-TNR)(1-\phi'),\ TNR\,(1-\phi')\bigr)

gives the posterior of every prevalence-dependent metric (ppv, npv, acc, f1, mcc,
...) at :math:`\phi'`.  :math:`\phi'` may be a number, or uncertain: a Beta
distribution or an array of draws, one per posterior draw.

K-class data (a multiclass fit or a MulticlassConfusionMatrix) take a deployment
class-prevalence *vector* instead: :mod:`bayescm.analysis.prevalence_multiclass`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.analysis.prevalence_multiclass import multiclass_at_prevalence
from bayescm.data.confusion import CELLS, ConfusionMatrix
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.inference.posterior import metric_draws
from bayescm.priors import Beta
from bayescm.stats import SAMPLE_DIMS

__all__ = ["at_prevalence"]

if TYPE_CHECKING:
    import arviz as az


def at_prevalence(
    data: az.InferenceData | ConfusionMatrix | MulticlassConfusionMatrix,
    prevalence: Any,
    *,
    metrics: Sequence[str] | None = None,
    random_seed: int | None = None,
) -> az.InferenceData:
    r"""Re-evaluate metrics at a deployment prevalence, keeping what the classifier does.

    Binary data keep the TPR/TNR posterior and replace the prevalence.  K-class data
    (their ``theta`` on dims ``actual`` × ``predicted``) keep each actual class's row
    of predicted-class probabilities :math:`\rho_{kj} = \theta_{kj} / \sum_j
    \theta_{kj}` and use :math:`\theta'_{kj} = \pi'_k \rho_{kj}` for the deployment
    class prevalence :math:`\pi'`; every multiclass metric follows (per-class recall
    is unchanged, precision, accuracy :math:`\sum_k \pi'_k \rho_{kk}`, kappa, F-scores
    and the averages change).

    Parameters
    ----------
    data
        InferenceData from :func:`bayescm.fit` (binary: its posterior needs ``tpr``
        and ``tnr``; K-class: ``theta``, from either multiclass family), a
        ConfusionMatrix (three-Beta posterior, Beta(1, 1) priors) or a
        MulticlassConfusionMatrix (rows posterior :math:`\rho_k \sim
        \mathrm{Dirichlet}(1 + C_{k\cdot})`, 4000 draws in one chain).
    prevalence
        Binary: a number in (0, 1); a :class:`bayescm.priors.Beta` or frozen
        ``scipy.stats.beta`` for an uncertain prevalence (one draw per posterior
        draw); or an array of draws with shape (chain, draw).
        K-class: K positive shares summing to 1 (class order) or a mapping
        label -> share; a :class:`bayescm.priors.Dirichlet` (or ``"dirichlet:a1,..."``,
        a pymc_extras ``Prior("Dirichlet", a=...)``, a frozen ``scipy.stats.dirichlet``)
        for an uncertain prevalence, one draw per posterior draw; or an array of
        draws with shape (chain, draw, K).
    metrics
        Metric keys to compute (default: all of the data's registry).

    Returns
    -------
    arviz.InferenceData
        A ``posterior`` group with ``prevalence`` (the deployment value; dim
        ``actual`` for K classes), ``tpr``, ``tnr`` (binary) or ``rows`` (K-class),
        ``theta`` and every metric at that prevalence; it works with
        :func:`bayescm.summary` and ArviZ plots.

    Raises
    ------
    ValueError
        For a prevalence outside (0, 1), shares that are not K positive numbers
        summing to 1, a mapping missing or inventing classes, or draws of the wrong
        shape.

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> rare = bcm.analysis.at_prevalence(cm, 0.01, metrics=["ppv"], random_seed=1)
    >>> float(rare.posterior["ppv"].mean()) < 0.1
    True

    Three classes, a rare one at deployment: its precision drops, its recall stays.

    >>> mc = bcm.MulticlassConfusionMatrix([[50, 3, 2], [4, 40, 6], [1, 2, 30]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> out = bcm.analysis.at_prevalence(mc, {"cat": 0.6, "dog": 0.38, "bird": 0.02},
    ...                                  metrics=["ppv", "tpr"], random_seed=1)
    >>> post = out.posterior.sel(classifier="cm", **{"class": "bird"})
    >>> round(float(post["ppv"].mean()), 2), round(float(post["tpr"].mean()), 2)
    (0.2, 0.88)
    """
    if registry.registry_for(data).multiclass:
        return multiclass_at_prevalence(data, prevalence, metrics=metrics,
                                        random_seed=random_seed)
    rng = np.random.default_rng(random_seed)
    tpr = metric_draws(data, "tpr", random_seed=random_seed)
    tnr = metric_draws(data, "tnr", random_seed=None if random_seed is None
                       else random_seed + 1) if isinstance(data, ConfusionMatrix) \
        else metric_draws(data, "tnr")
    shape = tuple(tpr.sizes[d] for d in SAMPLE_DIMS)
    phi = _prevalence_draws(prevalence, shape, rng)
    phi_da = xr.DataArray(phi, dims=SAMPLE_DIMS)
    cells = registry.cells_from_rates(phi_da, tpr, tnr)
    theta = xr.concat(list(cells), dim=xr.DataArray(list(CELLS), dims="cell", name="cell"))
    theta = theta.transpose(*SAMPLE_DIMS, ..., "cell")
    keys = [m.key for m in registry.resolve(metrics)]
    ds = registry.compute(theta, [k for k in keys if k not in ("tpr", "tnr", "prevalence")])
    ds["tpr"], ds["tnr"] = tpr, tnr
    ds["prevalence"] = phi_da.broadcast_like(tpr)
    ds["theta"] = theta
    return idata_mod.make({"posterior": ds}, {
        "deployment_prevalence": repr(prevalence),
        "meaning": ("metrics of the same classifiers (same TPR/TNR posterior) in a "
                    "population with the deployment prevalence"),
    })


def _prevalence_draws(prevalence: Any, shape: tuple[int, int],
                      rng: np.random.Generator) -> np.ndarray:
    if isinstance(prevalence, Beta):
        if not prevalence.proper:
            raise ValueError(f"The deployment prevalence {prevalence!r} is not a distribution.")
        return rng.beta(prevalence.alpha, prevalence.beta, size=shape)
    if hasattr(prevalence, "rvs"):  # a frozen scipy distribution
        draws = np.asarray(prevalence.rvs(size=shape, random_state=rng), dtype=float)
    else:
        draws = np.asarray(prevalence, dtype=float)
        if draws.ndim == 0:
            draws = np.full(shape, float(draws))
        elif draws.shape != shape:
            raise ValueError(
                f"Prevalence draws have shape {draws.shape}; give one per posterior draw "
                f"{shape}, a number, or a distribution."
            )
    if not (np.all(np.isfinite(draws)) and np.all((draws > 0) & (draws < 1))):
        raise ValueError("A deployment prevalence must lie strictly between 0 and 1.")
    return draws
