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
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.data.confusion import CELLS
from bayescm.deprecation import renamed_kwargs
from bayescm.family import Family, ModelSpec, attach, register_family
from bayescm.models._spec import (
    ConfusionCodec,
    as_confusion_matrix,
    counts_data,
    theta_from_rates,
)
from bayescm.priors import Beta, Gamma, PriorError
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

UNITS = ("mean", "new fold")


_SCALARS = ("prevalence", "tpr_mean", "tnr_mean", "tpr_kappa", "tnr_kappa")


def _kappa_pair(value: Any) -> dict[str, Gamma]:
    """The deprecated ``kappa_prior=(shape, rate)`` as ``priors`` entries."""
    prior = Gamma(*(float(x) for x in value))
    return {"tpr_kappa": prior, "tnr_kappa": prior}


@renamed_kwargs(kappa_prior=("priors", _kappa_pair))
def folds(cms: Any, *, priors: Mapping[str, Any] | None = None) -> pm.Model:
    r"""Build the hierarchical model of k folds' confusion matrices.

    Parameters
    ----------
    cms
        A :class:`bayescm.ConfusionMatrix` batch, one matrix per fold (dim
        ``classifier`` holds the fold names), at least two folds.
    priors
        Overrides by name (:func:`bayescm.priors.defaults` ``("folds")``):
        ``"prevalence"``, ``"tpr_mean"``, ``"tnr_mean"`` (Beta, default Beta(1, 1))
        and ``"tpr_kappa"``, ``"tnr_kappa"`` (Gamma shape and rate, default
        Gamma(2, 0.02): mean 100).  The deprecated ``kappa_prior=(shape, rate)``
        sets both concentrations.

    Returns
    -------
    pymc.Model
        Free ``tpr_mean``, ``tnr_mean``, ``tpr_kappa``, ``tnr_kappa``,
        ``prevalence``, per-fold ``tpr_fold``, ``tnr_fold`` (dim ``fold``) and
        ``tpr_new``, ``tnr_new``; observed ``counts``.  Prior parameters are
        ``pm.Data`` (``tpr_kappa_alpha``, ...).

    Examples
    --------
    >>> import bayescm as bcm
    >>> cms = bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7],
    ...                           tn=[47, 44, 43], classifier=["f1", "f2", "f3"])
    >>> model = bcm.models.folds(cms, priors={"tpr_kappa": bcm.priors.Gamma(2, 0.05)})
    >>> sorted(model.named_vars_to_dims["tpr_fold"])
    ['fold']
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm

    cms = as_confusion_matrix(cms)
    if len(cms) < 2:
        raise ValueError("A hierarchical model of folds needs at least two folds.")
    resolved = resolve_priors("folds", priors, cms.classifiers,
                              units={name: ["all"] for name in _SCALARS})
    for name, (prior,) in resolved.items():
        if not prior.proper:
            raise PriorError(
                f"The prior {prior!r} of {name!r} is improper; the hierarchy needs proper "
                f"priors (priors={{'{name}': ...}} with positive parameters; for the "
                "concentrations this was kappa_prior=(shape, rate))."
            )
    coords = {"fold": list(cms.classifiers), "cell": list(CELLS)}

    def params(name: str) -> tuple[Any, Any]:
        (prior,) = resolved[name]
        return (pm.Data(f"{name}_alpha", prior.params[0]),
                pm.Data(f"{name}_beta", prior.params[1]))

    with pm.Model(coords=coords) as model:
        counts = counts_data(cms.counts, ("fold", "cell"))
        tp, fn, fp, tn = (counts[:, i] for i in range(4))
        phi = pm.Beta("prevalence", *params("prevalence"))
        pm.Binomial("positives", n=counts.sum(axis=1), p=phi, observed=tp + fn, dims="fold")
        for rate_name, hits, misses in (("tpr", tp, fn), ("tnr", tn, fp)):
            mu = pm.Beta(f"{rate_name}_mean", *params(f"{rate_name}_mean"))
            shape, rate = params(f"{rate_name}_kappa")
            kappa = pm.Gamma(f"{rate_name}_kappa", alpha=shape, beta=rate)
            a, b = mu * kappa, (1 - mu) * kappa
            fold_rate = pm.Beta(f"{rate_name}_fold", a, b, dims="fold")
            pm.Beta(f"{rate_name}_new", a, b)
            pm.Binomial(f"{rate_name}_hits", n=hits + misses, p=fold_rate, observed=hits,
                        dims="fold")
    return attach(model, ModelSpec("folds", cms, resolved))


class Folds(ConfusionCodec, Family):
    """The hierarchical family of k folds: metrics for the mean rates and a new fold."""

    name = "folds"
    default_priors: ClassVar[dict[str, Any]] = {
        "prevalence": Beta(1, 1), "tpr_mean": Beta(1, 1), "tnr_mean": Beta(1, 1),
        "tpr_kappa": Gamma(2, 0.02), "tnr_kappa": Gamma(2, 0.02)}

    def parameters(self, spec: ModelSpec) -> list[str]:
        return ["tpr_mean", "tnr_mean", "tpr_kappa", "tnr_kappa", "prevalence", "tpr_fold",
                "tnr_fold", "tpr_new", "tnr_new"]

    def complete(self, ds: xr.Dataset, spec: ModelSpec, conjugate: Any = None) -> xr.Dataset:
        # metrics for the mean rates and for a new fold, at the (shared) prevalence
        unit = xr.DataArray(list(UNITS), dims="classifier", name="classifier")
        tpr = xr.concat([ds["tpr_mean"], ds["tpr_new"]], dim=unit)
        tnr = xr.concat([ds["tnr_mean"], ds["tnr_new"]], dim=unit)
        ds["theta"] = theta_from_rates(ds["prevalence"], tpr, tnr, ("classifier",)
                                       ).assign_coords(classifier=list(UNITS))
        return ds

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None):
        # a repeat of each fold with its own rates (no metrics: folds are not the units
        # the metrics describe)
        nn = n.values.astype(np.int64)
        phi = draws["prevalence"].transpose(*SAMPLE_DIMS).values[..., None]
        pos = rng.binomial(nn, phi)
        tp = rng.binomial(pos, draws["tpr_fold"].transpose(*SAMPLE_DIMS, "fold").values)
        tn = rng.binomial(nn - pos, draws["tnr_fold"].transpose(*SAMPLE_DIMS, "fold").values)
        counts = np.stack([tp, pos - tp, (nn - pos) - tn, tn], axis=-1)
        da = xr.DataArray(counts, dims=(*SAMPLE_DIMS, "fold", "cell"),
                          coords={"fold": n["fold"].values, "cell": list(CELLS)}, name="counts")
        return da, "fold confusion matrices", False

    def prior_units(self, spec: ModelSpec) -> dict[str, list[str]]:
        return {name: ["all"] for name in spec.priors}

    def rebuild(self, data: Any, priors: Mapping[str, Any], options: Mapping[str, Any]
                ) -> pm.Model:
        return folds(data, priors={name: per["all"] for name, per in priors.items()})


register_family(Folds(folds))
