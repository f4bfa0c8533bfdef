r"""Closed-form posteriors of the conjugate models (no sampling).

For the three-Beta model the multinomial likelihood factorises into
Binomial(N, φ) for the positives, Binomial(P, TPR) for tp and Binomial(N − P,
TNR) for tn, so with Beta priors

.. math::

    \phi \mid D \sim \mathrm{Beta}(a_\phi + tp + fn,\ b_\phi + fp + tn),\quad
    \mathrm{TPR} \mid D \sim \mathrm{Beta}(a_+ + tp,\ b_+ + fn),\quad
    \mathrm{TNR} \mid D \sim \mathrm{Beta}(a_- + tn,\ b_- + fp),

independently.  For the Dirichlet-multinomial model
:math:`\theta \mid D \sim \mathrm{Dirichlet}(\alpha + \text{counts})`.

Parameters are read from the model's ``pm.Data`` containers, so a model updated
with ``pm.set_data`` is honoured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymc as pm

from bayescm.data import CELLS
from bayescm.models._spec import is_unmodified, spec_of
from bayescm.priors import PriorError

CONJUGATE_FAMILIES = ("three_beta", "dirichlet_multinomial")


@dataclass(frozen=True)
class ConjugatePosterior:
    """Posterior parameters of a conjugate bayescm model.

    Attributes
    ----------
    family
        ``"three_beta"`` or ``"dirichlet_multinomial"``.
    classifiers
        Coords of dim ``classifier``.
    betas
        Rate name -> ``(alpha, beta)`` arrays of shape ``(n_classifiers,)``.
    dirichlet
        Posterior concentrations ``(n_classifiers, 4)`` in cell order, or None.
    fixed_prevalence
        Per-classifier fixed prevalence of a designed test set, or None.
    """

    family: str
    classifiers: tuple[str, ...]
    betas: dict[str, tuple[np.ndarray, np.ndarray]]
    dirichlet: np.ndarray | None
    fixed_prevalence: np.ndarray | None

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> dict[str, np.ndarray]:
        """I.i.d. posterior draws, arrays of shape ``size + (n_classifiers, ...)``."""
        out = {}
        c = len(self.classifiers)
        for name, (a, b) in self.betas.items():
            out[name] = rng.beta(a, b, size=(*size, c))
        if self.dirichlet is not None:
            # Dirichlet via normalised Gamma variates: vectorised over classifiers.
            g = rng.standard_gamma(self.dirichlet, size=(*size, *self.dirichlet.shape))
            out["theta"] = g / g.sum(axis=-1, keepdims=True)
        return out


def _value(model: pm.Model, name: str) -> np.ndarray:
    return np.asarray(model[name].get_value())


def conjugate_posterior(model: pm.Model) -> ConjugatePosterior:
    """Posterior parameters of an unmodified three-Beta or Dirichlet model.

    Raises
    ------
    ValueError
        When the model was not built by a conjugate bayescm builder or has been
        extended since; such models need ``sampler="nuts"``.
    """
    spec = spec_of(model)
    if spec is None or spec.family not in CONJUGATE_FAMILIES:
        raise ValueError(
            "The exact sampler needs a model from bayescm.models.three_beta or "
            "bayescm.models.dirichlet_multinomial; use sampler='nuts' for other models."
        )
    if not is_unmodified(model):
        raise ValueError(
            "This model has variables its builder did not create, so its posterior is no "
            "longer conjugate; use sampler='nuts'."
        )
    counts = _value(model, "counts_data").astype(float)
    classifiers = tuple(str(c) for c in model.coords["classifier"])
    cell = {c: counts[:, i] for i, c in enumerate(CELLS)}
    betas: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    dirichlet = None
    fixed = None
    if spec.family == "three_beta":
        from bayescm.models.three_beta import RATES, UPDATES

        for name in RATES:
            if name == "prevalence" and spec.fixed_prevalence is not None:
                fixed = _value(model, "prevalence").astype(float)
                continue
            succ, fail = UPDATES[name]
            a = _value(model, f"{name}_alpha") + sum(cell[c] for c in succ)
            b = _value(model, f"{name}_beta") + sum(cell[c] for c in fail)
            betas[name] = (a, b)
    else:
        dirichlet = _value(model, "theta_alpha") + counts
    for name, arr in [*((k, np.stack(v, -1)) for k, v in betas.items()), ("theta", dirichlet)]:
        if arr is not None and np.any(arr <= 0):
            i = int(np.argwhere(arr <= 0)[0][0])
            raise PriorError(
                f"The posterior of {name!r} for classifier {classifiers[i]!r} is improper "
                "(a posterior parameter is zero); use a proper prior such as Beta(1, 1)."
            )
    return ConjugatePosterior(spec.family, classifiers, betas, dirichlet, fixed)
