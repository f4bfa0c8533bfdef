r"""Caelen's Dirichlet-multinomial model of K-class confusion matrices.

.. math::

    \theta \sim \mathrm{Dirichlet}(\alpha)\ \text{over the } K^2 \text{ cells},\qquad
    C \sim \mathrm{Multinomial}(N, \theta)

At K = 2 this is dirichlet_multinomial (the four cells tp, fn, fp, tn).  The default
carries the same information at every K: four pseudo-cases spread over the K² cells,
Dirichlet(4/K², ..., 4/K²) (:func:`default_priors`), which is Dirichlet(1, 1, 1, 1) at
K = 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.family import ClosedForm, Conjugate, ModelSpec, attach, register_family
from bayescm.models._spec import check_proper, counts_data, data_value
from bayescm.models.multiclass_rows.model import (
    DIMS,
    PAIR,
    MulticlassFamily,
    as_multiclass,
    dirichlet_draws,
    model_coords,
    observed_likelihood,
    pair_coords,
)
from bayescm.models.multiclass_rows.twin import CELLS_TWIN
from bayescm.models.multiclass_rows.weight import Weight, check_prior_weight
from bayescm.priors import Dirichlet
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

FLAT = "cells"
"""The free variable: theta on the flat dim ``pair`` (actual-major)."""

PSEUDO_CASES = 4.0
"""Pseudo-cases of the default prior over the K² cells: Dirichlet(1, 1, 1, 1)'s four."""


def default_priors(k: int) -> dict[str, Dirichlet]:
    """The default at K classes: Dirichlet(4/K², ..., 4/K²) over the K² cells.

    Four pseudo-cases whatever K, as Caelen's Dirichlet(1, 1, 1, 1) at K = 2 (the
    flat Dirichlet(1, ..., 1) would add K²); each actual class's row gets 4/K, and
    accuracy is a priori Beta(4/K, 4 (K - 1)/K).

    >>> prior = default_priors(4)["theta"]
    >>> prior.shape, prior.alpha[:2], sum(prior.alpha)
    ((16,), (0.25, 0.25), 4.0)
    """
    return {"theta": Dirichlet.weighted(k * k, PSEUDO_CASES)}


def multiclass_cells(cm: Any, *, priors: Mapping[str, Any] | None = None) -> pm.Model:
    r"""Build the Dirichlet-multinomial model of K-class confusion matrices.

    Parameters
    ----------
    cm
        A :class:`bayescm.MulticlassConfusionMatrix` (one matrix or a batch along
        dim ``classifier``).
    priors
        ``{"theta": bayescm.priors.Dirichlet(...)}`` with K² concentrations in
        actual-major order (row by row of the table), for all classifiers or as
        ``{classifier: prior}``; default Dirichlet(4/K², ..., 4/K²)
        (:func:`default_priors`): four pseudo-cases at every K, Dirichlet(1, 1, 1, 1)
        at K = 2.  A prior whose row sums exceed 25 % of a class's test cases, or
        whose total exceeds 25 % of N, draws a
        :class:`~bayescm.models.multiclass_rows.weight.PriorWeightWarning` naming a
        lighter prior.

    Returns
    -------
    pymc.Model
        Unsampled: free ``cells`` (dims ``classifier, pair``: the K² cells in
        actual-major order), deterministic ``theta`` (dims ``classifier, actual,
        predicted``), observed ``counts``; pm.Data ``theta_alpha`` and
        ``counts_data``.  Posteriors report ``theta`` only (``cells`` is the same
        numbers).

    Notes
    -----
    Conjugate: :math:`\theta \mid C \sim \mathrm{Dirichlet}(\alpha + C)`; accuracy
    :math:`\sum_k \theta_{kk}` is then
    :math:`\mathrm{Beta}(\sum_k \alpha_{kk} + C_{kk}, \sum_{a \ne p} \alpha_{ap} + C_{ap})`.

    Examples
    --------
    >>> import bayescm as bcm
    >>> mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> [v.name for v in bcm.models.multiclass_cells(mc).free_RVs]
    ['cells']
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    spec = _specify(cm, priors)
    cm, resolved = spec.data, spec.priors
    k = cm.n_classes
    with pm.Model(coords=model_coords(cm)) as model:
        counts = counts_data(cm.counts, DIMS)
        dims = ("classifier", PAIR)
        alpha = pm.Data("theta_alpha", np.array([p.alpha for p in resolved["theta"]]),
                        dims=dims)
        if all(p.proper for p in resolved["theta"]):
            flat = pm.Dirichlet(FLAT, a=alpha, dims=dims)
        else:
            flat = pm.Dirichlet(FLAT, a=pt.ones_like(alpha), dims=dims)
            pm.Potential("theta_prior", pt.sum((alpha - 1) * pt.log(flat)))
        theta = pm.Deterministic("theta", flat.reshape((flat.shape[0], k, k)), dims=DIMS)
        observed_likelihood(counts, theta, k)
    return attach(model, spec)


def _specify(cm: Any, priors: Mapping[str, Any] | None) -> ModelSpec:
    """Validated data and resolved priors: the builder's record (no PyMC)."""
    cm = as_multiclass(cm)
    k = cm.n_classes
    resolved = resolve_priors("multiclass_cells", priors, cm.classifiers,
                              base=default_priors(k))
    check_proper("theta", resolved["theta"], cm.counts.reshape(len(cm), k * k),
                 cm.classifiers, pair_coords(cm.labels))
    alpha = np.array([p.alpha for p in resolved["theta"]], dtype=float).reshape(-1, k, k)
    # a cells prior is a row prior alpha[a, :] per class with the class mix Dirichlet(row sums)
    check_prior_weight("multiclass_cells", cm.counts, [str(x) for x in cm.labels],
                       cm.classifiers, [Weight("theta", k * k, per_class=alpha.sum(axis=2),
                                               total=alpha.sum(axis=(1, 2)),
                                               per_class_of_total=1 / k,
                                               what="recall, precision, F1, accuracy")])
    return ModelSpec("multiclass_cells", cm, resolved)


SHOWN_DEFAULTS = {"theta": replace(default_priors(2)["theta"], rationale=(
    "Four pseudo-cases at every K, as Dirichlet(1, 1, 1, 1): Dirichlet(4/K², ..., 4/K²), "
    "shown at K = 2"))}
"""The registered default (``bcm.priors.defaults("multiclass_cells")``): K = 2's."""


class MulticlassCells(MulticlassFamily):
    r"""Caelen's family for K classes: :math:`\theta \mid C \sim \mathrm{Dirichlet}(\alpha + C)`."""

    name = "multiclass_cells"
    #: Dirichlet(4/K², ..., 4/K²) over the K² cells: four pseudo-cases at every K
    #: (:func:`default_priors`).  Shown here at K = 2, where it is Dirichlet(1, 1, 1, 1);
    #: the builder sizes it to the data's K (Dirichlet(0.04, ...) at K = 10).
    default_priors: ClassVar[dict[str, Any]] = SHOWN_DEFAULTS
    jags = CELLS_TWIN

    def parameters(self, spec: ModelSpec) -> list[str]:
        return ["theta"]

    def conjugate(self, model: pm.Model, spec: ModelSpec) -> Conjugate:
        counts = data_value(model, "counts_data")
        alpha = data_value(model, "theta_alpha") + counts.reshape(counts.shape[0], -1)
        return Conjugate(dirichlets={FLAT: alpha.astype(float)})

    def closed_form(self, data: Any, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> ClosedForm:
        spec = _specify(data, priors, **dict(options or {}))
        cm = spec.data
        alpha = (np.array([p.alpha for p in spec.priors["theta"]], dtype=float)
                 + cm.counts.reshape(len(cm), -1))
        return ClosedForm(spec, Conjugate(dirichlets={FLAT: alpha}),
                          {FLAT: ("classifier", PAIR)}, model_coords(cm),
                          xr.DataArray(cm.counts, dims=DIMS, coords=cm.coords))

    def complete(self, ds: xr.Dataset, spec: ModelSpec,
                 conjugate: Conjugate | None = None) -> xr.Dataset:
        if "theta" not in ds and FLAT in ds:
            flat = ds[FLAT].transpose(*SAMPLE_DIMS, "classifier", PAIR)
            k = spec.data.n_classes
            ds["theta"] = xr.DataArray(flat.values.reshape(*flat.shape[:-1], k, k),
                                       dims=(*SAMPLE_DIMS, *DIMS), coords=spec.data.coords)
        # the flat cells are theta's numbers again: keep one copy
        return ds.drop_vars([v for v in (FLAT, PAIR) if v in ds.variables])

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        x = dirichlet_draws(data_value(model, "theta_alpha"), size, rng)
        return None if x is None else {FLAT: x}


register_family(MulticlassCells(multiclass_cells))
