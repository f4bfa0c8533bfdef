r"""The between-fold spread of a rate (or of a row of rates) and its default prior.

A fold's rate is :math:`\mathrm{Beta}(\mu\kappa, (1-\mu)\kappa)` (a row of rates
:math:`\mathrm{Dirichlet}(\kappa\mu)`), so its between-fold standard deviation is

.. math::

    \mathrm{sd} = \sqrt{\frac{\mu(1-\mu)}{\kappa + 1}} = \tau\,\sqrt{\mu(1-\mu)},
    \qquad \tau = (\kappa + 1)^{-1/2} \in (0, 1).

:math:`\tau` is the *spread*: the between-fold sd as a fraction of the largest sd a
rate with mean :math:`\mu` can have, :math:`\sqrt{\mu(1-\mu)}` (folds that are all
perfect or all wrong); :math:`\tau^2 = 1/(\kappa+1)` is the intra-fold correlation of
the Beta-binomial (Dirichlet-multinomial).  :math:`\tau = 0` is complete pooling
(identical folds), :math:`\tau = 1` no pooling at all.

Why the prior is on :math:`\tau`, and why Beta(1, 1)
    The first version of the folds model put :math:`\kappa \sim \mathrm{Gamma}(2, 0.02)`.
    That prior's density vanishes exponentially as :math:`\kappa \to \infty`:
    :math:`P(\kappa > 1000) = 21 e^{-20} \approx 4 \cdot 10^{-8}`, i.e. a between-fold
    sd below 0.011 at :math:`\mu = 0.85` was ruled out *a priori*.  Identical folds --
    the common case in cross-validation on one data set -- were then never believed,
    however much the data agreed, and the interval of the mean rate kept a between-fold
    variance the data did not show (measured: 95 % intervals covering 0.99--1.00 at
    sd 0); its mode near :math:`\kappa = 50` also pulled large real spreads down
    (coverage 0.87 at sd 0.06 with 5 folds).  Gelman, "Prior distributions for
    variance parameters in hierarchical models" (Bayesian Analysis, 2006) recommends a
    prior on the group-level *standard deviation* that is flat (or at least positive)
    at zero, so that complete pooling stays reachable, and Gelman et al., "Bayesian
    Data Analysis" (3rd ed., 2013, §5.3) use exactly this one for Beta-binomial
    hierarchies: uniform on :math:`(\mu, (\alpha+\beta)^{-1/2})`.  Bounded to
    :math:`(0, 1)` as :math:`(\kappa+1)^{-1/2}` it is proper: :math:`\tau \sim
    \mathrm{Beta}(1, 1)`, i.e. :math:`p(\kappa) = \tfrac12 (\kappa+1)^{-3/2}`.  It
    states no scale of its own: any spread from none to the largest possible is
    equally plausible before the data, and the likelihood decides.

    With few folds (5) a continuous prior cannot tell "no spread" from "a spread of
    the order of the binomial noise" (the between-fold variance has k − 1 degrees of
    freedom), so on its own it keeps the interval of the mean wider than the pooled one
    when folds are identical (coverage 0.98--1.00).  ``fit`` therefore averages the
    model with identical folds (:mod:`bayescm.models.folds.identical`).

An informative ``Beta(a, b)`` on :math:`\tau` (``priors={"tpr_spread": ...}``) states a
typical spread; the binary model still accepts the old Gamma prior on
:math:`\kappa` by name (``"tpr_kappa"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayescm.priors import Beta

if TYPE_CHECKING:
    import pytensor.tensor as pt

__all__ = ["KAPPA_MAX", "SPREAD_PRIOR", "concentration", "kappa_of", "spread_of"]

KAPPA_MAX = 1e8
r"""Largest concentration the likelihood sees (spread 1e-4: a between-fold sd of 1e-4 of
its maximum).  The Beta-binomial and the binomial then differ by a factor
:math:`1 + (n-1)/(\kappa+1)` in variance, 1.0001 even for folds of 10,000 cases, and
the log-Gamma differences keep errors near 1e-6."""

SPREAD_PRIOR = Beta(1, 1, rationale=(
    "Uniform on the between-fold sd as a fraction of its maximum sqrt(mu (1 - mu)), "
    "tau = (kappa + 1)^(-1/2): flat at zero so that identical folds stay reachable "
    "(Gelman 2006; Gelman et al., BDA3 §5.3)"))
"""The default prior of the spread :math:`\\tau` of every rate (and row)."""


def kappa_of(tau: Any) -> Any:
    r""":math:`\kappa = (1 - \tau^2)/\tau^2`, written so that it stays accurate near 1.

    >>> float(kappa_of(0.5))
    3.0
    """
    return (1 - tau) * (1 + tau) / tau**2


def spread_of(kappa: Any) -> Any:
    r""":math:`\tau = (\kappa + 1)^{-1/2}`, the inverse of :func:`kappa_of`.

    >>> float(spread_of(3.0))
    0.5
    """
    return 1 / np.sqrt(np.asarray(kappa, dtype=float) + 1)


def concentration(prefix: str, alpha: Any, beta: Any, dims: str | None = None,
                  ) -> pt.TensorVariable:
    r"""``{prefix}_spread`` :math:`\sim \mathrm{Beta}(\alpha, \beta)` and the deterministic
    ``{prefix}_kappa`` :math:`= (1-\tau^2)/\tau^2` (inside a model context).

    :math:`\kappa` is kept at least ``1e-10`` so that a spread that rounds to 1 leaves
    the Beta-binomial's parameters positive, and at most :data:`KAPPA_MAX`: beyond it
    the Beta-binomial is the binomial to within far less than the data can tell, and
    its log density, a difference of log-Gamma values of order :math:`\kappa \log
    \kappa`, loses every digit to cancellation.  Unbounded, that noise let chains of
    identical folds stick at :math:`\tau \approx 10^{-10}` (:math:`\kappa \approx
    10^{20}`) with hundreds of divergences (measured: 6 of 12 fits of 5 identical
    folds); bounded, the likelihood is flat there and the spread follows its prior.
    """
    import pymc as pm
    import pytensor.tensor as pt

    tau = pm.Beta(f"{prefix}_spread", alpha=alpha, beta=beta, dims=dims)
    return pm.Deterministic(f"{prefix}_kappa", pt.clip(kappa_of(tau), 1e-10, KAPPA_MAX),
                            dims=dims)
