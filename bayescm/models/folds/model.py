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

with :math:`\mu \sim \mathrm{Beta}(1, 1)`, :math:`\phi \sim \mathrm{Beta}(1, 1)` and the
concentration :math:`\kappa` through the *spread*
:math:`\tau = (\kappa + 1)^{-1/2} \sim \mathrm{Beta}(1, 1)`: the between-fold sd of
the rate as a fraction of its largest possible value :math:`\sqrt{\mu(1-\mu)}`,
uniform, so that identical folds (:math:`\tau \to 0`) stay reachable.
:mod:`bayescm.models.folds.spread` gives the reasons (Gelman 2006; Gelman et al.,
BDA3 §5.3) and why the earlier :math:`\kappa \sim \mathrm{Gamma}(2, 0.02)`, still
accepted by name (``priors={"tpr_kappa": Gamma(2, 0.02)}``), over-covered when folds
were identical.  A :class:`bayescm.MulticlassConfusionMatrix` batch gets the K-class
model (:mod:`bayescm.models.folds.multiclass`).

How it is sampled
    The fold rates are integrated out: given :math:`(\mu, \kappa)` each fold's hits
    are Beta-binomial,

    .. math::

        tp_k \mid \mu_+, \kappa_+ \sim
            \mathrm{BetaBinomial}(P_k,\ \mu_+\kappa_+,\ (1 - \mu_+)\kappa_+),

    so NUTS moves in five dimensions (:math:`\mathrm{logit}\,\mu_\pm`,
    :math:`\mathrm{logit}\,\tau_\pm`, :math:`\mathrm{logit}\,\phi`) and never meets the funnel
    between :math:`\kappa` and the fold rates that made the centred model diverge on
    near-perfect folds (accuracies 0.97--1, where the fold rates pile up at 1 and
    their Beta densities become extremely skewed).  The fold rates are then drawn
    exactly from their conditional posteriors, once per draw,

    .. math::

        TPR_k \mid \mu_+, \kappa_+, D \sim
            \mathrm{Beta}(\mu_+\kappa_+ + tp_k,\ (1 - \mu_+)\kappa_+ + fn_k),

    and a *new* fold's rates from :math:`\mathrm{Beta}(\mu\kappa, (1-\mu)\kappa)`:
    the same joint posterior as the centred model, without its geometry.  These
    draws use a random stream seeded by the MCMC draws themselves, so a fit with a
    ``random_seed`` is reproducible.  NUTS runs on a compiled density
    (:mod:`bayescm.models.folds.kernel`, numba, cached on disk once for every fold
    count) unless a rate has a Gamma prior on its concentration.

Identical folds
    Folds of one data set are often identical in distribution, which no continuous
    prior on the spread can believe from a handful of folds.  ``fit`` therefore
    averages this model with complete pooling, each rate with prior probability
    ``identical`` (default 0.5) of being the same in every fold, weighted by the two
    models' marginal likelihoods (:mod:`bayescm.models.folds.identical`): the mean
    rates' intervals are then calibrated at between-fold sd 0 as well as when folds
    differ.

What is reported
    ``fit`` reports every metric for ``"mean"`` (the rates :math:`\mu`) and for
    ``"new fold"`` (what the next fold or retrained model is likely to achieve:
    the posterior predictive of a fold), and the between-fold standard deviations
    of the rates, ``tpr_sd`` and ``tnr_sd``,
    :math:`\sqrt{\mu(1-\mu)/(\kappa+1)}` (the sd of a Beta with mean :math:`\mu`
    and concentration :math:`\kappa`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.data.confusion import CELLS
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.deprecation import renamed_kwargs
from bayescm.family import Family, Kernel, ModelSpec, attach, register_family
from bayescm.models._spec import (
    ConfusionCodec,
    as_confusion_matrix,
    counts_data,
    theta_from_rates,
)
from bayescm.models.folds import identical as averaging
from bayescm.models.folds.identical import IDENTICAL
from bayescm.models.folds.multiclass import folds_multiclass
from bayescm.models.folds.spread import SPREAD_PRIOR, concentration
from bayescm.priors import Beta, Gamma, PriorError
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS, stream_from

if TYPE_CHECKING:
    import pymc as pm

UNITS = ("mean", "new fold")


RATES = ("tpr", "tnr")


def _kappa_pair(value: Any) -> dict[str, Gamma]:
    """The deprecated ``kappa_prior=(shape, rate)`` as ``priors`` entries."""
    prior = Gamma(*(float(x) for x in value))
    return {"tpr_kappa": prior, "tnr_kappa": prior}


@renamed_kwargs(kappa_prior=("priors", _kappa_pair))
def folds(cms: Any, *, priors: Mapping[str, Any] | None = None,
          identical: float = IDENTICAL) -> pm.Model:
    r"""Build the hierarchical model of k folds' confusion matrices.

    Parameters
    ----------
    cms
        A :class:`bayescm.ConfusionMatrix` batch, one matrix per fold (dim
        ``classifier`` holds the fold names), at least two folds.  A
        :class:`bayescm.MulticlassConfusionMatrix` batch (one K×K matrix per fold)
        gets the K-class model, :func:`bayescm.models.folds.multiclass.folds_multiclass`.
    priors
        Overrides by name (:func:`bayescm.priors.defaults` ``("folds")``):
        ``"prevalence"``, ``"tpr_mean"``, ``"tnr_mean"`` (Beta, default Beta(1, 1))
        and ``"tpr_spread"``, ``"tnr_spread"`` (Beta on
        :math:`\tau = (\kappa+1)^{-1/2}`, default Beta(1, 1)).  A Gamma prior on a
        concentration itself, ``"tpr_kappa"`` or ``"tnr_kappa"`` (shape and rate),
        replaces that rate's spread prior (the model's first default was
        Gamma(2, 0.02)); the deprecated ``kappa_prior=(shape, rate)`` sets both.
    identical
        Prior probability that a rate is the same in every fold (default 0.5, equal
        prior odds).  ``fit`` averages the model with complete pooling
        (:mod:`bayescm.models.folds.identical`): ``tpr_mean``, the fold rates, the new
        fold's and ``tpr_sd`` are averaged draws and ``tpr_identical`` is each draw's
        indicator (its mean the posterior probability of identical folds).  0 gives
        the spread model alone, 1 the pooled one.  A rate with a Gamma prior on its
        concentration is not averaged.

    Returns
    -------
    pymc.Model
        Free ``tpr_mean``, ``tnr_mean``, ``tpr_spread``, ``tnr_spread`` (with the
        deterministic concentrations ``tpr_kappa``, ``tnr_kappa``; free themselves
        when given a Gamma prior), ``prevalence``; observed ``positives`` and the
        Beta-binomial ``tpr_hits``, ``tnr_hits`` (dim ``fold``).  ``fit`` adds the
        per-fold ``tpr_fold``, ``tnr_fold`` (dim ``fold``), the new fold's ``tpr_new``,
        ``tnr_new``, the between-fold sds ``tpr_sd``, ``tnr_sd`` and the indicators
        ``tpr_identical``, ``tnr_identical``.  The model is the spread component of the
        average: its ``tpr_spread`` and ``tpr_kappa`` stay the draws given that the
        folds differ.  Prior parameters are ``pm.Data`` (``tpr_spread_alpha``, ...).

    Examples
    --------
    >>> import bayescm as bcm
    >>> cms = bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7],
    ...                           tn=[47, 44, 43], classifier=["f1", "f2", "f3"])
    >>> model = bcm.models.folds(cms, priors={"tpr_kappa": bcm.priors.Gamma(2, 0.05)})
    >>> sorted(model.named_vars_to_dims["tpr_hits"])
    ['fold']
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm

    if isinstance(cms, MulticlassConfusionMatrix):
        return folds_multiclass(cms, priors=priors, identical=identical)
    identical = averaging.prior_probability(identical)
    cms = as_confusion_matrix(cms)
    if len(cms) < 2:
        raise ValueError("A hierarchical model of folds needs at least two folds.")
    base = dict(Folds.default_priors)
    for rate_name in RATES:  # a Gamma on kappa replaces that rate's spread prior
        if priors is not None and f"{rate_name}_kappa" in priors:
            if f"{rate_name}_spread" in priors:
                raise PriorError(f"Give {rate_name}_spread (a Beta on the spread) or "
                                 f"{rate_name}_kappa (a Gamma on the concentration), not both.")
            del base[f"{rate_name}_spread"]
            base[f"{rate_name}_kappa"] = Gamma(2, 0.02)
    resolved = resolve_priors(Folds.name, priors, cms.classifiers, base=base,
                              units={name: ["all"] for name in base})
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
            if f"{rate_name}_kappa" in resolved:
                shape, rate = params(f"{rate_name}_kappa")
                kappa = pm.Gamma(f"{rate_name}_kappa", alpha=shape, beta=rate)
            else:
                kappa = concentration(rate_name, *params(f"{rate_name}_spread"))
            # the fold rates integrated out (see the module docstring): no funnel
            pm.BetaBinomial(f"{rate_name}_hits", n=hits + misses, alpha=mu * kappa,
                            beta=(1 - mu) * kappa, observed=hits, dims="fold")
    return attach(model, ModelSpec("folds", cms, resolved,
                                   options={"identical": identical}))


def _average(ds: xr.Dataset, spec: ModelSpec) -> dict[str, np.ndarray]:
    """Each rate's mean averaged with identical folds (:mod:`bayescm.models.folds.identical`);
    returns the per-draw indicators of identical folds by rate."""
    prior = spec.options.get("identical", IDENTICAL)
    if prior == 0 or not averaging.enough_draws(ds.sizes["chain"] * ds.sizes["draw"], 2,
                                                "the folds' TPR and TNR"):
        return {}
    counts = np.asarray(spec.data.counts, dtype=float)
    cells = dict(zip(CELLS, np.moveaxis(counts, -1, 0), strict=True))
    # each rate a row of two categories: (hits, misses), the mean rate and its complement
    rows = np.stack([np.column_stack([cells["tp"], cells["fn"]]),
                     np.column_stack([cells["tn"], cells["fp"]])], axis=1)
    means = [ds[f"{r}_mean"].transpose(*SAMPLE_DIMS).values for r in RATES]
    mu = np.stack([np.stack([m, 1 - m], axis=-1) for m in means], axis=-2)
    tau = np.stack([ds[f"{r}_spread"].transpose(*SAMPLE_DIMS).values if f"{r}_spread" in ds
                    else np.zeros_like(means[0]) for r in RATES], axis=-1)
    alpha = np.array([spec.priors[f"{r}_mean"][0].params for r in RATES])
    # a Gamma on kappa gives identical folds no mass: that rate is not averaged
    tau_priors = [spec.priors[f"{r}_spread"][0].params if f"{r}_spread" in spec.priors
                  else None for r in RATES]
    rng = stream_from(*(ds[f"{r}_mean"].values for r in RATES), person=averaging.PERSON)
    mixed, same, probs, evidences = averaging.average_rows(mu, tau, rows, alpha, tau_priors,
                                                           prior, rng)
    out = {}
    for i, rate_name in enumerate(RATES):
        if probs[i] is None:
            continue
        ds[f"{rate_name}_mean"] = xr.DataArray(mixed[..., i, 0], dims=SAMPLE_DIMS)
        ds[f"{rate_name}_identical"] = xr.DataArray(
            same[..., i].astype(np.int8), dims=SAMPLE_DIMS,
            attrs={"probability": probs[i], "prior_probability": prior,
                   "log_evidence_pooled": evidences[i][0],
                   "log_evidence_spread": evidences[i][1]})
        out[rate_name] = same[..., i]
    return out


def _fold_rates(ds: xr.Dataset, cms: Any,
                identical: Mapping[str, np.ndarray] | None = None) -> xr.Dataset:
    r"""Exact conditional draws of the fold rates, a new fold's rates and the spreads.

    Given :math:`(\mu, \kappa)` a fold's rate is
    :math:`\mathrm{Beta}(\mu\kappa + hits, (1-\mu)\kappa + misses)` and a new fold's
    :math:`\mathrm{Beta}(\mu\kappa, (1-\mu)\kappa)`; in a draw of identical folds
    (``identical[rate]``) every fold's rate and a new fold's are :math:`\mu` and the
    between-fold sd is 0.  The stream is seeded by the draws themselves: the same MCMC
    draws give the same fold rates.
    """
    identical = identical or {}
    rng = stream_from(*(ds[name].values for name in
                         ("tpr_mean", "tnr_mean", "tpr_kappa", "tnr_kappa")))
    counts = np.asarray(cms.counts, dtype=float)
    cells = dict(zip(CELLS, np.moveaxis(counts, -1, 0), strict=True))
    folds_coord = list(cms.classifiers)
    for rate_name, hits, misses in (("tpr", cells["tp"], cells["fn"]),
                                    ("tnr", cells["tn"], cells["fp"])):
        mu = ds[f"{rate_name}_mean"].transpose(*SAMPLE_DIMS).values
        kappa = ds[f"{rate_name}_kappa"].transpose(*SAMPLE_DIMS).values
        same = identical.get(rate_name, np.zeros(mu.shape, dtype=bool))
        # a Beta parameter that underflowed to 0 (mu within 1e-300 of 0 or 1) is kept positive
        tiny = np.finfo(float).tiny
        a, b = np.maximum(mu * kappa, tiny), np.maximum((1 - mu) * kappa, tiny)
        fold = np.where(same[..., None], mu[..., None],
                        rng.beta(a[..., None] + hits, b[..., None] + misses))
        ds[f"{rate_name}_fold"] = xr.DataArray(fold, dims=(*SAMPLE_DIMS, "fold"),
                                               coords={"fold": folds_coord})
        ds[f"{rate_name}_new"] = xr.DataArray(np.where(same, mu, rng.beta(a, b)),
                                              dims=SAMPLE_DIMS)
        ds[f"{rate_name}_sd"] = xr.DataArray(
            np.where(same, 0.0, np.sqrt(mu * (1 - mu) / (kappa + 1))), dims=SAMPLE_DIMS)
    return ds


class Folds(ConfusionCodec, Family):
    """The hierarchical family of k folds: metrics for the mean rates and a new fold."""

    name = "folds"
    # at 0.9, 1 fit in 100 of 5 folds of 200 cases (bench_compare_folds_calibration.py) had
    # one divergence in 4,000 draws, at moderate spreads; at 0.95 none in those data sets
    target_accept = 0.95
    default_priors: ClassVar[dict[str, Any]] = {
        "prevalence": Beta(1, 1), "tpr_mean": Beta(1, 1), "tnr_mean": Beta(1, 1),
        "tpr_spread": SPREAD_PRIOR, "tnr_spread": SPREAD_PRIOR}

    def parameters(self, spec: ModelSpec) -> list[str]:
        spreads = [f"{r}_spread" for r in RATES if f"{r}_spread" in spec.priors]
        # not the sds: deterministic in the mean and kappa, and exactly 0 in every draw
        # of identical folds (a constant has no R-hat)
        return ["tpr_mean", "tnr_mean", *spreads, "tpr_kappa", "tnr_kappa", "prevalence",
                "tpr_fold", "tnr_fold", "tpr_new", "tnr_new"]

    def complete(self, ds: xr.Dataset, spec: ModelSpec, conjugate: Any = None) -> xr.Dataset:
        if "tpr_fold" not in ds and spec is not None and "tpr_kappa" in ds:
            ds = _fold_rates(ds, spec.data, _average(ds, spec))
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

    def kernel(self, model: pm.Model, spec: ModelSpec, conjugate: Any = None) -> Kernel | None:
        """The compiled density (:mod:`bayescm.models.folds.kernel`) when both rates have
        spread priors; a Gamma on a concentration falls back to nutpie's compilation."""
        if any(f"{r}_spread" not in spec.priors for r in RATES):
            return None
        from scipy.special import betaln, gammaln

        from bayescm.models.folds import kernel as _kernel_folds
        from bayescm.models.folds.spread import KAPPA_MAX

        counts = np.asarray(spec.data.counts, dtype=float)
        tp, fn, _, tn = (counts[:, i] for i in range(4))
        n, pos = counts.sum(axis=1), tp + fn
        params = [spec.priors[name][0].params for name in
                  ("prevalence", "tpr_mean", "tpr_spread", "tnr_mean", "tnr_spread")]

        def log_choose(a: np.ndarray, b: np.ndarray) -> float:
            return float(np.sum(gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)))

        # binomial coefficients and Beta functions: constants, kept so the value is PyMC's
        const = (log_choose(n, pos) + log_choose(pos, tp) + log_choose(n - pos, tn)
                 - sum(float(betaln(*p)) for p in params))
        folds_ = np.column_stack([n, pos, tp, tn]).ravel()
        user_data = np.concatenate([[len(n), KAPPA_MAX, const], *params, folds_]).astype(float)
        return Kernel(_kernel_folds, user_data, 5, _kernel_folds.NAMES, [()] * 7)

    def rebuild(self, data: Any, priors: Mapping[str, Any], options: Mapping[str, Any]
                ) -> pm.Model:
        return folds(data, priors={name: per["all"] for name, per in priors.items()},
                     **dict(options))


register_family(Folds(folds))
