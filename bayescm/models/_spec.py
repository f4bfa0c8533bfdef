"""What a builder made: the record `fit` uses to recognise bayescm's own models.

Builders return plain ``pm.Model`` objects.  Alongside, they register a
:class:`ModelSpec` (weakly keyed by the model) naming the family, the data, the
priors and the variables the builder created.  ``fit`` uses it to pick the
conjugate shortcuts (exact draws, the cached NUTS kernel) only while the model is
unmodified; a model a user has extended falls back to generic samplers.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayescm.agreement import AgreementTable
from bayescm.data import ConfusionMatrix
from bayescm.priors import Beta, Prior, PriorError


@dataclass(frozen=True)
class ModelSpec:
    """Record of a model built by a bayescm builder."""

    family: str
    data: ConfusionMatrix | AgreementTable
    priors: Mapping[str, Sequence[Prior]]
    var_names: frozenset[str]
    fixed_prevalence: float | None = None
    extra: Mapping[str, object] = field(default_factory=dict)


_SPECS: weakref.WeakKeyDictionary[pm.Model, ModelSpec] = weakref.WeakKeyDictionary()


def register(model: pm.Model, spec: ModelSpec) -> pm.Model:
    _SPECS[model] = spec
    return model


def spec_of(model: pm.Model) -> ModelSpec | None:
    """The builder's record of ``model``, or None for models built by hand."""
    return _SPECS.get(model)


def is_unmodified(model: pm.Model) -> bool:
    """True when ``model`` still has exactly the variables its builder created."""
    spec = spec_of(model)
    return spec is not None and frozenset(model.named_vars) == spec.var_names


def as_confusion_matrix(data: object) -> ConfusionMatrix:
    """Accept a ConfusionMatrix, a mapping of cells, or a DataFrame."""
    import pandas as pd

    if isinstance(data, ConfusionMatrix):
        return data
    if isinstance(data, pd.DataFrame):
        return ConfusionMatrix.from_frame(data)
    if isinstance(data, Mapping):
        return ConfusionMatrix.from_counts(data)
    raise TypeError(
        f"Expected a bayescm.ConfusionMatrix (or a dict of tp, fn, fp, tn, or a DataFrame), "
        f"got {type(data).__name__}."
    )


def check_proper(
    name: str, priors: Sequence[Prior], counts: np.ndarray, classifiers: Sequence[str],
    labels: Sequence[str],
) -> None:
    """Raise unless every posterior parameter (prior + counts) is positive.

    ``counts`` has shape ``(n_classifiers, k)``: the counts added to each of the
    ``k`` prior parameters.  A zero posterior parameter means the posterior is
    improper (the density integrates to infinity at a boundary).
    """
    for c, prior, row in zip(classifiers, priors, counts, strict=True):
        post = np.asarray(prior.params) + row
        bad = [lab for lab, v in zip(labels, post, strict=True) if v <= 0]
        if bad:
            raise PriorError(
                f"The posterior of {name!r} for classifier {c!r} is improper: prior {prior!r} "
                f"with {dict(zip(labels, row.tolist(), strict=True))} leaves parameter(s) for "
                f"{bad} at zero. Haldane priors need at least one count on each side; use "
                "Beta(1, 1) (Laplace) or Beta(0.5, 0.5) (Jeffreys) instead."
            )


def rate(name: str, priors: Sequence[Beta], dims: str) -> pt.TensorVariable:
    """A Beta-distributed rate per classifier whose parameters are pm.Data.

    The prior parameters live in ``{name}_alpha`` and ``{name}_beta`` so that a
    compiled sampler can be reused with new priors.  Haldane-type parameters (0)
    cannot be written as a ``pm.Beta``; then the rate is Uniform(0, 1) plus the
    Beta kernel as a potential, which is the same unnormalised density.
    """
    a = pm.Data(f"{name}_alpha", np.array([p.alpha for p in priors]), dims=dims)
    b = pm.Data(f"{name}_beta", np.array([p.beta for p in priors]), dims=dims)
    if all(p.proper for p in priors):
        return pm.Beta(name, alpha=a, beta=b, dims=dims)
    x = pm.Uniform(name, 0.0, 1.0, dims=dims)
    pm.Potential(f"{name}_prior", pt.sum((a - 1) * pt.log(x) + (b - 1) * pt.log1p(-x)))
    return x
