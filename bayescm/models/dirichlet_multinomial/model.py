r"""Caelen's Dirichlet-multinomial model of a confusion matrix.

.. math::

    \theta \sim \mathrm{Dirichlet}(\alpha),\qquad
    (tp, fn, fp, tn) \sim \mathrm{Multinomial}(N, \theta)

The math, priors and references are in ``models/dirichlet_multinomial/README.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.data.confusion import CELLS
from bayescm.family import ClosedForm, Conjugate, Family, Kernel, ModelSpec, attach, register_family
from bayescm.models._dirichlet import dirichlet
from bayescm.models._loglik import case_log_likelihood
from bayescm.models._spec import (
    ConfusionCodec,
    as_confusion_matrix,
    check_proper,
    conjugate_kernel,
    counts_data,
    data_value,
)
from bayescm.priors import Dirichlet
from bayescm.priors import resolve as resolve_priors

if TYPE_CHECKING:
    import pymc as pm


def dirichlet_multinomial(cm: Any, *, priors: Mapping[str, Any] | None = None) -> pm.Model:
    r"""Build Caelen's Dirichlet-multinomial model for one or many confusion matrices.

    Parameters
    ----------
    cm
        A :class:`bayescm.ConfusionMatrix` (one matrix or a batch along dim
        ``classifier``).
    priors
        ``{"theta": bayescm.priors.Dirichlet((a_tp, a_fn, a_fp, a_tn))}`` for all
        classifiers or ``{"theta": {classifier: Dirichlet(...)}}``; default
        Dirichlet(1, 1, 1, 1).  Concentrations are in cell order tp, fn, fp, tn.

    Returns
    -------
    pymc.Model
        Unsampled: free ``theta`` (dims ``classifier, cell``), observed ``counts``;
        pm.Data ``theta_alpha`` and ``counts_data``.

    Examples
    --------
    >>> import bayescm as bcm
    >>> model = bcm.models.dirichlet_multinomial(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))
    >>> [v.name for v in model.free_RVs]
    ['theta']
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    spec = _specify(cm, priors)
    cm, resolved = spec.data, spec.priors
    coords = {cm.unit: list(cm.classifiers), "cell": list(CELLS)}
    dims = (cm.unit, "cell")
    with pm.Model(coords=coords) as model:
        counts = counts_data(cm.counts, dims)
        alpha = pm.Data("theta_alpha", np.array([p.alpha for p in resolved["theta"]]), dims=dims)
        if all(p.proper for p in resolved["theta"]):
            theta = pm.Dirichlet("theta", a=alpha, dims=dims)
        else:
            theta = pm.Dirichlet("theta", a=pt.ones_like(alpha), dims=dims)
            pm.Potential("theta_prior", pt.sum((alpha - 1) * pt.log(theta)))
        pm.Multinomial("counts", n=counts.sum(axis=-1), p=theta, observed=counts, dims=dims)
    return attach(model, spec)


def _specify(cm: Any, priors: Mapping[str, Any] | None) -> ModelSpec:
    """Validated data and resolved priors: the builder's record (no PyMC)."""
    cm = as_confusion_matrix(cm)
    resolved = resolve_priors("dirichlet_multinomial", priors, cm.classifiers)
    check_proper("theta", resolved["theta"], cm.counts, cm.classifiers, CELLS, unit=cm.unit)
    return ModelSpec("dirichlet_multinomial", cm, resolved)


class DirichletMultinomial(ConfusionCodec, Family):
    r"""Caelen's family: :math:`\theta \mid D \sim \mathrm{Dirichlet}(\alpha + \text{counts})`."""

    name = "dirichlet_multinomial"
    default_priors: ClassVar[dict[str, Any]] = {"theta": Dirichlet((1, 1, 1, 1))}

    def log_likelihood(self, draws: xr.Dataset, observed: xr.DataArray,
                       spec: ModelSpec) -> xr.DataArray:
        # each case: the log of its cell's probability (counts ~ Multinomial(N, theta))
        return case_log_likelihood(draws["theta"], observed)

    def parameters(self, spec: ModelSpec) -> list[str]:
        return ["theta"]

    def conjugate(self, model: pm.Model, spec: ModelSpec) -> Conjugate:
        alpha = data_value(model, "theta_alpha") + data_value(model, "counts_data")
        return Conjugate(dirichlets={"theta": alpha.astype(float)})

    def closed_form(self, data: Any, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> ClosedForm:
        spec = _specify(data, priors, **dict(options or {}))
        cm = spec.data
        alpha = np.array([p.alpha for p in spec.priors["theta"]], dtype=float) + cm.counts
        coords = {cm.unit: list(cm.classifiers), "cell": list(CELLS)}
        dims = (cm.unit, "cell")
        return ClosedForm(spec, Conjugate(dirichlets={"theta": alpha.astype(float)}),
                          {"theta": dims}, coords,
                          xr.DataArray(cm.counts, dims=dims, coords=coords))

    def kernel(self, model: pm.Model, spec: ModelSpec,
               conjugate: Conjugate | None = None) -> Kernel:
        return conjugate_kernel(conjugate or self.conjugate(model, spec))

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        alpha = data_value(model, "theta_alpha")
        if np.any(alpha <= 0):
            return None  # an improper prior has no draws
        return {"theta": dirichlet(rng, alpha, (*size, *alpha.shape))}


register_family(DirichletMultinomial(dirichlet_multinomial))
