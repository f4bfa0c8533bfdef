r"""Tötsch & Hoffmann's three-Beta model of a confusion matrix.

.. math::

    \phi \sim \mathrm{Beta}(a_\phi, b_\phi),\quad
    \mathrm{TPR} \sim \mathrm{Beta}(a_+, b_+),\quad
    \mathrm{TNR} \sim \mathrm{Beta}(a_-, b_-)

    \theta = \bigl(\mathrm{TPR}\,\phi,\ (1-\mathrm{TPR})\,\phi,\
             (1-\mathrm{TNR})(1-\phi),\ \mathrm{TNR}(1-\phi)\bigr)
             \quad\text{over cells } (tp, fn, fp, tn)

    (tp, fn, fp, tn) \sim \mathrm{Multinomial}(N, \theta)

The math, priors and references are in ``models/three_beta/README.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.data.confusion import CELLS
from bayescm.family import ClosedForm, Conjugate, Family, Kernel, ModelSpec, attach, register_family
from bayescm.models._loglik import case_log_likelihood
from bayescm.models._spec import (
    ConfusionCodec,
    as_confusion_matrix,
    beta_prior_draws,
    check_proper,
    conjugate_kernel,
    counts_data,
    data_value,
    rate,
    theta_from_rates,
    unit_dim,
)
from bayescm.priors import Beta, PriorError
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

RATES = ("prevalence", "tpr", "tnr")
# The counts that update each rate's Beta (successes, failures), by cell name.
UPDATES = {"prevalence": (("tp", "fn"), ("fp", "tn")), "tpr": (("tp",), ("fn",)),
           "tnr": (("tn",), ("fp",))}


def three_beta(
    cm: Any, *, priors: Mapping[str, Any] | None = None, prevalence: float | None = None
) -> pm.Model:
    r"""Build Tötsch's three-Beta model for one or many confusion matrices.

    Parameters
    ----------
    cm
        A :class:`bayescm.ConfusionMatrix` (one matrix or a batch along dim
        ``classifier``), or a dict of cells / DataFrame accepted by it.
    priors
        Overrides of the default priors by name: ``"prevalence"``, ``"tpr"``,
        ``"tnr"``.  Each value is a :class:`bayescm.priors.Beta` (or
        ``"beta:a,b"``) for all classifiers, or a mapping ``classifier -> prior``.
        Defaults: Beta(1, 1) each (:func:`bayescm.priors.defaults`).
    prevalence
        A number in (0, 1) fixes the prevalence of a designed test set (known class
        balance); then only tpr and tnr are inferred.

    Returns
    -------
    pymc.Model
        Unsampled.  Free variables ``prevalence``, ``tpr``, ``tnr`` (dim
        ``classifier``), deterministic ``theta`` (dims ``classifier, cell``),
        observed ``counts``; prior parameters and counts are ``pm.Data``
        (``tpr_alpha``, ``tpr_beta``, ..., ``counts_data``).

    Raises
    ------
    bayescm.priors.PriorError
        For unknown prior names or a prior (e.g. Haldane's Beta(0, 0)) whose
        posterior would be improper with these counts.

    Examples
    --------
    >>> import bayescm as bcm
    >>> model = bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))
    >>> sorted(v.name for v in model.free_RVs)
    ['prevalence', 'tnr', 'tpr']
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    spec = _specify(cm, priors, prevalence)
    cm, resolved, fixed = spec.data, spec.priors, spec.options["prevalence"]
    unit = cm.unit  # "classifier", or "slice" for a sliced matrix
    coords = {unit: list(cm.classifiers), "cell": list(CELLS)}
    with pm.Model(coords=coords) as model:
        counts = counts_data(cm.counts, (unit, "cell"))
        if fixed is None:
            phi = rate("prevalence", resolved["prevalence"], unit)
        else:
            phi = pm.Data("prevalence", np.full(len(cm), fixed), dims=unit)
        tpr = rate("tpr", resolved["tpr"], unit)
        tnr = rate("tnr", resolved["tnr"], unit)
        theta = pm.Deterministic(
            "theta",
            pt.stack([tpr * phi, (1 - tpr) * phi, (1 - tnr) * (1 - phi), tnr * (1 - phi)], -1),
            dims=(unit, "cell"),
        )
        pm.Multinomial("counts", n=counts.sum(axis=-1), p=theta, observed=counts,
                       dims=(unit, "cell"))
    return attach(model, spec)


def _fixed_prevalence(prevalence: Any) -> float:
    """The one fixed prevalence as a float, or a TypeError saying what to pass."""
    value = np.asarray(prevalence) if not isinstance(prevalence, str) else None
    if value is None or value.ndim != 0 or value.dtype.kind not in "iuf":
        shown = (f"{len(value.ravel())} values" if value is not None and value.ndim
                 else repr(prevalence))
        raise TypeError(
            "prevalence must be one number in (0, 1), the positive share of a designed "
            f"test set (the same for every classifier), got {shown}; leave it None to "
            "give the prevalence a prior instead."
        )
    return float(value)


def _specify(cm: Any, priors: Mapping[str, Any] | None, prevalence: float | None = None
             ) -> ModelSpec:
    """Validated data, resolved priors and options: the builder's record (no PyMC)."""
    cm = as_confusion_matrix(cm)
    fixed = None
    if prevalence is not None:
        fixed = _fixed_prevalence(prevalence)
        if not 0 < fixed < 1:
            raise ValueError(f"prevalence must lie strictly between 0 and 1, got {prevalence}.")
        if priors and "prevalence" in priors:
            raise PriorError("A fixed prevalence takes no prior: drop priors['prevalence'].")
    resolved = resolve_priors("three_beta", priors, cm.classifiers)
    if fixed is not None:
        del resolved["prevalence"]
    for name, per in resolved.items():
        succ, fail = UPDATES[name]
        counts = np.stack([sum(cm.cell(c) for c in succ), sum(cm.cell(c) for c in fail)], -1)
        check_proper(name, per, counts, cm.classifiers, [" + ".join(succ), " + ".join(fail)],
                     unit=cm.unit)
    return ModelSpec("three_beta", cm, resolved, options={"prevalence": fixed})


def _update(cell: Mapping[str, Any], prior: Mapping[str, tuple[Any, Any]]
            ) -> dict[str, tuple[Any, Any]]:
    """Beta(a + successes, b + failures) per rate of ``prior``, from counts by cell name."""
    betas = {}
    for name, (a, b) in prior.items():
        succ, fail = UPDATES[name]
        betas[name] = (a + sum(cell[c] for c in succ), b + sum(cell[c] for c in fail))
    return betas


def _posterior(counts: np.ndarray, prior: Mapping[str, tuple[np.ndarray, np.ndarray]],
               fixed: np.ndarray | None) -> Conjugate:
    """:func:`_update` of the rates; ``counts`` (classifier, cell)."""
    cell = {c: counts[:, i].astype(float) for i, c in enumerate(CELLS)}
    return Conjugate(betas=_update(cell, prior),
                     fixed={} if fixed is None else {"prevalence": fixed})


class ThreeBeta(ConfusionCodec, Family):
    r"""The three-Beta family: independent Beta posteriors of prevalence, TPR and TNR.

    With Beta priors the multinomial likelihood factorises into
    Binomial(N, φ) for the positives, Binomial(P, TPR) for tp and Binomial(N − P,
    TNR) for tn, so

    .. math::

        \phi \mid D \sim \mathrm{Beta}(a_\phi + tp + fn,\ b_\phi + fp + tn),\quad
        \mathrm{TPR} \mid D \sim \mathrm{Beta}(a_+ + tp,\ b_+ + fn),\quad
        \mathrm{TNR} \mid D \sim \mathrm{Beta}(a_- + tn,\ b_- + fp)

    independently.  Parameters are read from the model's ``pm.Data``, so a model
    updated with ``pm.set_data`` is honoured.
    """

    name = "three_beta"
    default_priors: ClassVar[dict[str, Any]] = {
        "prevalence": Beta(1, 1), "tpr": Beta(1, 1), "tnr": Beta(1, 1)}

    @staticmethod
    def _fixed(spec: ModelSpec) -> float | None:
        return spec.options.get("prevalence")

    def parameters(self, spec: ModelSpec) -> list[str]:
        return ["tpr", "tnr"] + ([] if self._fixed(spec) is not None else ["prevalence"])

    def conjugate(self, model: pm.Model, spec: ModelSpec) -> Conjugate:
        fixed = self._fixed(spec) is not None
        prior = {name: (data_value(model, f"{name}_alpha"), data_value(model, f"{name}_beta"))
                 for name in RATES if not (fixed and name == "prevalence")}
        return _posterior(data_value(model, "counts_data"), prior,
                          data_value(model, "prevalence").astype(float) if fixed else None)

    def closed_form(self, data: Any, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> ClosedForm:
        spec = _specify(data, priors, **dict(options or {}))
        cm, fixed = spec.data, self._fixed(spec)
        prior = {name: (np.array([p.alpha for p in per]), np.array([p.beta for p in per]))
                 for name, per in spec.priors.items()}
        conj = _posterior(cm.counts, prior, None if fixed is None else np.full(len(cm), fixed))
        coords = {cm.unit: list(cm.classifiers), "cell": list(CELLS)}
        observed = xr.DataArray(cm.counts, dims=(cm.unit, "cell"), coords=coords)
        return ClosedForm(spec, conj, {name: (cm.unit,) for name in RATES}, coords,
                          observed)

    def rate_posteriors(self, cells: Mapping[str, Any],
                        priors: Mapping[str, tuple[Any, Any]] | None = None
                        ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        # the class docstring's update over plain arrays: prevalence, tpr, tnr in
        # RATES order (the order seeded draws depend on)
        priors = dict(priors or {})
        unknown = sorted(set(priors) - set(RATES))
        missing = [c for c in CELLS if c not in cells]
        if unknown or missing:
            raise KeyError(f"{self.name} updates the rates {list(RATES)} from the cells "
                           f"{list(CELLS)}; unknown rates {unknown}, missing cells {missing}.")
        prior = {name: tuple(np.asarray(v, dtype=float)
                             for v in priors.get(name, self.default_priors[name].params))
                 for name in RATES}
        return _update({c: np.asarray(cells[c], dtype=float) for c in CELLS}, prior)

    def kernel(self, model: pm.Model, spec: ModelSpec,
               conjugate: Conjugate | None = None) -> Kernel:
        return conjugate_kernel(conjugate or self.conjugate(model, spec))

    def complete(self, ds: xr.Dataset, spec: ModelSpec,
                 conjugate: Conjugate | None = None) -> xr.Dataset:
        if "prevalence" not in ds:
            value = (conjugate.fixed["prevalence"] if conjugate is not None
                     and "prevalence" in conjugate.fixed else self._fixed(spec))
            ds["prevalence"] = xr.DataArray(np.broadcast_to(value, ds["tpr"].shape).copy(),
                                            dims=ds["tpr"].dims)
        ds["theta"] = theta_from_rates(ds["prevalence"], ds["tpr"], ds["tnr"],
                                       (unit_dim(ds["tpr"]),))
        return ds

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        return beta_prior_draws(model, list(spec.priors), size, rng)

    def log_likelihood(self, draws: xr.Dataset, observed: xr.DataArray,
                       spec: ModelSpec) -> xr.DataArray:
        # each case: the log of its cell's probability (counts ~ Multinomial(N, theta))
        return case_log_likelihood(draws["theta"], observed)

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None):
        # Multinomial(N, theta) as its chain of binomials: class sizes first (unless
        # the design fixed them), then the correct calls within each class.
        nn = n.values.astype(np.int64)
        unit = unit_dim(draws["tpr"])
        phi = draws["prevalence"].transpose(*SAMPLE_DIMS, unit).values
        if spec is not None and self._fixed(spec) is not None:
            pos = np.broadcast_to(np.rint(phi[0, 0] * nn).astype(np.int64), phi.shape)
        else:
            pos = rng.binomial(nn, phi)
        tp = rng.binomial(pos, draws["tpr"].transpose(*SAMPLE_DIMS, unit).values)
        tn = rng.binomial(nn - pos, draws["tnr"].transpose(*SAMPLE_DIMS, unit).values)
        counts = np.stack([tp, pos - tp, (nn - pos) - tn, tn], axis=-1)
        theta = draws["theta"].transpose(*SAMPLE_DIMS, unit, "cell")
        da = xr.DataArray(counts, dims=theta.dims, coords=theta.coords, name="counts")
        return da, "confusion matrices (and their plug-in metrics)", True

    def attrs(self, spec: ModelSpec) -> dict[str, Any]:
        fixed = self._fixed(spec)
        return {} if fixed is None else {"fixed_prevalence": fixed}

    def describe(self, spec: ModelSpec) -> str:
        fixed = spec.options.get("prevalence")
        prevalence = ("prevalence φ ~ Beta" if fixed is None else
                      f"prevalence φ fixed at {fixed} by design")
        return (
            "Tötsch & Hoffmann's three-Beta model of labelled confusion matrices "
            f"({len(spec.data.classifiers)} {spec.data.unit}(s)): {prevalence}, TPR ~ Beta and "
            "TNR ~ Beta, independent; the cell probabilities are θ_tp = TPR φ, θ_fn = (1 − "
            "TPR) φ, θ_fp = (1 − TNR)(1 − φ), θ_tn = TNR (1 − φ), and the counts (tp, fn, "
            "fp, tn) ~ Multinomial(N, θ). Every metric is computed from θ draw by draw.")


register_family(ThreeBeta(three_beta))
