r"""Hierarchical model of k cross-validation folds.

When fold-to-fold variation matters (each fold trains a different model, or the
folds are different populations), each fold's rates are draws around a shared
mean:

.. math::

    TPR_k \sim \mathrm{Beta}(\mu_+ \kappa_+,\ (1 - \mu_+) \kappa_+),\qquad
    TNR_k \sim \mathrm{Beta}(\mu_- \kappa_-,\ (1 - \mu_-) \kappa_-),

    tp_k \sim \mathrm{Binomial}(P_k, TPR_k),\quad
    tn_k \sim \mathrm{Binomial}(N_k - P_k, TNR_k),\quad
    P_k \sim \mathrm{Binomial}(N_k, \phi),

with :math:`\mu \sim \mathrm{Beta}(1, 1)`, concentration
:math:`\kappa \sim \mathrm{Gamma}(2, 0.02)` (mean 100, i.e. fold rates typically
within a few points of each other, with a long tail to small :math:`\kappa`, large
variation) and :math:`\phi \sim \mathrm{Beta}(1, 1)`.  The model also carries the
rates of a *new* fold, :math:`TPR_{new} \sim \mathrm{Beta}(\mu_+\kappa_+, (1 -
\mu_+)\kappa_+)` (no data: its posterior is the posterior predictive of a fold),
so ``fit`` reports every metric for ``"mean"`` (the rates :math:`\mu`) and for
``"new fold"`` (what the next fold or retrained model is likely to achieve).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pymc as pm

from bayescm.data import CELLS
from bayescm.models._spec import ModelSpec, as_confusion_matrix, register

UNITS = ("mean", "new fold")


def folds(
    cms: Any,
    *,
    kappa_prior: tuple[float, float] = (2.0, 0.02),
    priors: Mapping[str, Any] | None = None,
) -> pm.Model:
    r"""Build the hierarchical model of k folds' confusion matrices.

    Parameters
    ----------
    cms
        A :class:`bayescm.ConfusionMatrix` batch, one matrix per fold (dim
        ``classifier`` holds the fold names), at least two folds.
    kappa_prior
        Shape and rate of the Gamma prior on each concentration :math:`\kappa`.
    priors
        Reserved for future use (the mean rates have Beta(1, 1) priors).

    Returns
    -------
    pymc.Model
        Free ``tpr_mean``, ``tnr_mean``, ``tpr_kappa``, ``tnr_kappa``,
        ``prevalence``, per-fold ``tpr_fold``, ``tnr_fold`` (dim ``fold``) and
        ``tpr_new``, ``tnr_new``; observed ``counts``.

    Examples
    --------
    >>> import bayescm as bcm
    >>> cms = bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7],
    ...                           tn=[47, 44, 43], classifier=["f1", "f2", "f3"])
    >>> model = bcm.models.folds(cms)
    >>> sorted(model.named_vars_to_dims["tpr_fold"])
    ['fold']
    """
    cms = as_confusion_matrix(cms)
    if len(cms) < 2:
        raise ValueError("A hierarchical model of folds needs at least two folds.")
    if priors:
        raise ValueError("folds() takes no priors yet: the mean rates have Beta(1, 1) priors.")
    shape, rate = (float(x) for x in kappa_prior)
    if not (shape > 0 and rate > 0):
        raise ValueError(f"kappa_prior needs a positive shape and rate, got {kappa_prior}.")
    coords = {"fold": list(cms.classifiers), "cell": list(CELLS)}
    with pm.Model(coords=coords) as model:
        counts = pm.Data("counts_data", cms.counts, dims=("fold", "cell"))
        tp, fn, fp, tn = (counts[:, i] for i in range(4))
        phi = pm.Beta("prevalence", 1.0, 1.0)
        pm.Binomial("positives", n=counts.sum(axis=1), p=phi, observed=tp + fn, dims="fold")
        for rate_name, hits, misses in (("tpr", tp, fn), ("tnr", tn, fp)):
            mu = pm.Beta(f"{rate_name}_mean", 1.0, 1.0)
            kappa = pm.Gamma(f"{rate_name}_kappa", alpha=shape, beta=rate)
            a, b = mu * kappa, (1 - mu) * kappa
            fold_rate = pm.Beta(f"{rate_name}_fold", a, b, dims="fold")
            pm.Beta(f"{rate_name}_new", a, b)
            pm.Binomial(f"{rate_name}_hits", n=hits + misses, p=fold_rate, observed=hits,
                        dims="fold")
    spec = ModelSpec("folds", cms, {}, frozenset(model.named_vars),
                     extra={"kappa_prior": (shape, rate)})
    return register(model, spec)
