r"""Folds that may be identical: the folds model averaged with complete pooling.

With a handful of folds no continuous prior on the spread :math:`\tau` can tell "no
spread" from "a spread of the order of the binomial noise" (the between-fold variance
has :math:`k - 1` degrees of freedom), so the interval of the mean rate keeps a
between-fold variance identical folds do not have: measured, 95% intervals of the
mean accuracy covered 0.98--1.00 with Beta(1, 1) on :math:`\tau`, and every
continuous prior narrow enough to cover 0.97 at sd 0 under-covered (0.88) at sd 0.06
(``benchmarks/bench_folds_spread_prior.py``).  Cross-validation folds of one data set
often *are* identical in distribution, so the model gives that case prior mass of its
own: each rate (each actual class's row) is either the same in every fold, with
probability ``identical`` a priori, or spread with :math:`\tau \sim \mathrm{Beta}(1,
1)` -- the average of a fixed-effect and a random-effects model of Bayesian
model-averaged meta-analysis (Gronau et al., "A Bayesian model-averaged meta-analysis
of the power pose effect with informed and default priors: the case of felt power",
Comprehensive Results in Social Psychology 2017; Bartoš et al., "Bayesian model-averaged
meta-analysis in medicine", Statistics in Medicine 2021).

Each rate's posterior probability of identical folds is

.. math::

    P(\text{identical} \mid D) = \frac{w\, m_0}{w\, m_0 + (1 - w)\, m_1},

with :math:`m_0` the marginal likelihood of the pooled counts (exact:
:math:`B(\beta + \sum_f C_f) / B(\beta)` for a Dirichlet(:math:`\beta`) mean row,
multinomial coefficients cancelling) and :math:`m_1` that of the spread model,
:math:`\iint \prod_f \mathrm{DirMult}(C_f \mid \kappa\mu)\, p(\mu)\, p(\tau)\, d\mu\,
d\tau`, estimated by bridge sampling from the NUTS draws
(:func:`bayescm.models.bridge.log_evidence`).  Because the likelihood and the
priors factorise over rates (rows), the averaged posterior is a product of per-rate
mixtures: each draw keeps its NUTS value of a rate with probability
:math:`1 - P(\text{identical} \mid D)` and otherwise takes an exact draw of the pooled
posterior :math:`\mathrm{Dirichlet}(\beta + \sum_f C_f)`, where every fold's rate and
a new fold's are that mean and the between-fold sd is 0.

Calibration (95% HDIs of the mean accuracy, folds of 200 cases; NUTS:
``benchmarks/bench_compare_folds_calibration.py``, 200 data sets per cell; exact
posterior by quadrature: ``benchmarks/bench_folds_spread_prior.py``, 200--300 data sets,
1,000 where given; two numbers: two runs):

==========  ==============  ==============  ==============
folds       sd 0            sd 0.03         sd 0.06
==========  ==============  ==============  ==============
5, NUTS     0.980           0.935           0.955
5, quad.    0.974 (1000)    0.963, 0.930    0.973, 0.940
10, NUTS    0.975           0.935           0.965
10, quad.   0.943           0.950           0.935
==========  ==============  ==============  ==============

The spread model alone covered 1.00 / 0.99 / 0.98 (5 folds) and 0.98 / 0.98 / 1.00
(10 folds).  A prior of 0.7 or one spike for both rates together were tried and
rejected: the first under-covers 10 folds at sd 0.03 (0.933), the second 5 folds at
sd 0.03 (0.885).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit, gammaln, log_softmax, logit

from bayescm.models._dirichlet import dirichlet
from bayescm.models.bridge import log_evidence
from bayescm.models.folds.spread import KAPPA_MAX

__all__ = ["IDENTICAL", "average", "average_rows", "enough_draws", "evidence",
           "log_evidence_pooled", "log_evidence_spread", "prior_probability", "probability"]

PERSON = b"identical"
"""Separates the average's random stream (:func:`bayescm.stats.stream_from`) from the
fold rates' one, seeded by the same draws."""

IDENTICAL = 0.5
"""Default prior probability that a rate is the same in every fold (equal prior odds of
the pooled and the spread model, the convention of model-averaged meta-analysis)."""

_TINY = np.finfo(float).tiny


def prior_probability(value: Any) -> float:
    """``identical`` checked: a probability in [0, 1].

    >>> prior_probability(0.5)
    0.5
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"identical is the prior probability that the folds share one rate, "
                        f"a number in [0, 1]; got {value!r}.")
    value = float(value)
    if not 0 <= value <= 1:
        raise ValueError(f"identical is the prior probability that the folds share one rate "
                         f"and must lie in [0, 1] (0: the spread model alone, 1: pooled "
                         f"folds); got {value!r}.")
    return value


def _log_multivariate_beta(a: np.ndarray) -> np.ndarray:
    return gammaln(a).sum(axis=-1) - gammaln(a.sum(axis=-1))


def log_evidence_pooled(counts: np.ndarray, alpha: np.ndarray) -> float:
    r"""Log marginal likelihood of the folds' rows under one shared row :math:`\mu \sim
    \mathrm{Dirichlet}(\alpha)`, without the multinomial coefficients.

    ``counts``: one row of counts per fold, shape ``(folds, K)``.

    >>> round(float(np.exp(log_evidence_pooled(np.array([[1, 0], [1, 0]]), np.ones(2)))), 4)
    0.3333
    """
    counts = np.asarray(counts, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    return float(_log_multivariate_beta(alpha + counts.sum(axis=0))
                 - _log_multivariate_beta(alpha))


def _spread_density(counts: np.ndarray, alpha: np.ndarray, tau_prior: tuple[float, float],
                    ref: int):
    """log q on (additive log-ratios of mu against class ``ref``, logit tau)."""
    k = counts.shape[1]
    others = [j for j in range(k) if j != ref]
    sizes = counts.sum(axis=1)
    a_tau, b_tau = tau_prior
    log_norm = (gammaln(alpha.sum()) - gammaln(alpha).sum()
                - (gammaln(a_tau) + gammaln(b_tau) - gammaln(a_tau + b_tau)))

    def log_q(x: np.ndarray) -> np.ndarray:
        z = np.zeros((x.shape[0], k))
        z[:, others] = x[:, :-1]
        log_mu = log_softmax(z, axis=1)
        log_tau, log_1m_tau = -np.logaddexp(0, -x[:, -1]), -np.logaddexp(0, x[:, -1])
        tau = np.exp(log_tau)
        # the model's concentration, with the model's bounds (bayescm.models.folds.spread)
        kappa = np.clip((1 - tau) * (1 + tau) / tau**2, 1e-10, KAPPA_MAX)
        a = np.maximum(kappa[:, None] * np.exp(log_mu), _TINY)
        # Dirichlet-multinomial of every fold; a category with no count adds nothing
        loglik = (gammaln(kappa)[:, None] - gammaln(kappa[:, None] + sizes)).sum(axis=1)
        for j in range(k):
            seen = counts[:, j] > 0
            if seen.any():
                aj = a[:, j][:, None]
                loglik += (gammaln(aj + counts[seen, j]) - gammaln(aj)).sum(axis=1)
        # priors and Jacobians: Dirichlet (prod mu_j^(alpha_j - 1)) times prod mu_j, and
        # Beta(tau) times tau (1 - tau)
        return (loglik + log_mu @ alpha + a_tau * log_tau + b_tau * log_1m_tau + log_norm)

    return log_q, others


def log_evidence_spread(counts: np.ndarray, alpha: np.ndarray,
                        tau_prior: tuple[float, float], mu_draws: np.ndarray,
                        tau_draws: np.ndarray, rng: np.random.Generator) -> float:
    r"""Log marginal likelihood of the folds' rows under the spread model, by bridge
    sampling from its posterior draws (``mu_draws`` ``(n, K)``, ``tau_draws`` ``(n,)``),
    on the same scale as :func:`log_evidence_pooled`."""
    counts = np.asarray(counts, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    ref = int(np.argmax(counts.sum(axis=0) + alpha))
    log_q, others = _spread_density(counts, alpha, tau_prior, ref)
    log_mu = np.log(np.maximum(np.asarray(mu_draws, dtype=float), _TINY))
    tau = np.clip(np.asarray(tau_draws, dtype=float), 1e-300, 1 - 1e-16)
    x = np.column_stack([log_mu[:, others] - log_mu[:, [ref]], logit(tau)])
    return log_evidence(log_q, x, rng)


def probability(prior: float, log_pooled: float, log_spread: float) -> float:
    """Posterior probability of identical folds from the prior one and the two evidences.

    >>> probability(0.5, 0.0, 0.0), round(probability(0.5, np.log(3), 0.0), 3)
    (0.5, 0.75)
    """
    if prior <= 0:
        return 0.0
    if prior >= 1:
        return 1.0
    return float(expit(np.log(prior) - np.log1p(-prior) + log_pooled - log_spread))


def average(mu: np.ndarray, counts: np.ndarray, alpha: np.ndarray, p_identical: float,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draws of the averaged mean row and the identical-folds indicator.

    ``mu``: the spread model's draws of the mean row, shape ``(*sample, K)``; each draw
    is replaced, with probability ``p_identical``, by an exact draw of the pooled
    posterior Dirichlet(alpha + summed counts).  Returns the new draws and the 0/1
    indicator (shape ``sample``).
    """
    sample = mu.shape[:-1]
    identical = rng.random(sample) < p_identical
    pooled = np.asarray(alpha, dtype=float) + np.asarray(counts, dtype=float).sum(axis=0)
    out = np.where(identical[..., None], dirichlet(rng, np.broadcast_to(pooled, mu.shape)), mu)
    return out, identical


def enough_draws(n_draws: int, k: int, what: str) -> bool:
    """Whether ``n_draws`` posterior draws can weigh a row of ``k`` categories (bridge
    sampling in ``k`` dimensions needs ``8 (k + 1)``); warns when not."""
    need = 8 * (k + 1)
    if n_draws >= need:
        return True
    import warnings

    warnings.warn(
        f"{n_draws} draws in all are too few to weigh identical folds against spread ones "
        f"for {what} (bridge sampling needs at least {need}); the fit is the spread model "
        "alone (as with identical=0). Run more draws (draws x chains >= "
        f"{need}).", UserWarning, stacklevel=2)
    return False


def evidence(counts: np.ndarray, alpha: np.ndarray, tau_prior: tuple[float, float],
             mu_draws: np.ndarray, tau_draws: np.ndarray, rng: np.random.Generator
             ) -> tuple[float, float]:
    """``(log m0, log m1)``: both evidences of one rate (row); equal, without sampling,
    when no fold has a case of it (the data then say nothing about either model)."""
    counts = np.asarray(counts, dtype=float)
    if counts.sum() == 0:
        return 0.0, 0.0
    return (log_evidence_pooled(counts, alpha),
            log_evidence_spread(counts, alpha, tau_prior, mu_draws, tau_draws, rng))


def average_rows(mu: np.ndarray, tau: np.ndarray, counts: np.ndarray, alpha: np.ndarray,
                 tau_priors: list[tuple[float, float] | None], prior: float,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list, list]:
    """Every row averaged with identical folds: the loop both folds families share.

    ``mu``: the spread model's draws of the mean rows, ``(*sample, R, K)``; ``tau``
    their spreads, ``(*sample, R)``; ``counts`` ``(folds, R, K)``; ``alpha`` the mean
    rows' Dirichlet priors ``(R, K)``; ``tau_priors`` each row's Beta on its spread, or
    None for a row not averaged (a Gamma on its concentration).  Returns the averaged
    draws, the indicators ``(*sample, R)`` and, per row, the posterior probability of
    identical folds and ``(log m0, log m1)`` (None where not averaged).
    """
    mu = np.array(mu, dtype=float)
    k = mu.shape[-1]
    same = np.zeros(mu.shape[:-1], dtype=bool)
    probs: list[float | None] = []
    evidences: list[tuple[float, float] | None] = []
    for a, tau_prior in enumerate(tau_priors):
        if tau_prior is None:
            probs.append(None)
            evidences.append(None)
            continue
        log0, log1 = evidence(counts[:, a, :], alpha[a], tau_prior,
                              mu[..., a, :].reshape(-1, k), tau[..., a].ravel(), rng)
        p = probability(prior, log0, log1)
        mu[..., a, :], same[..., a] = average(mu[..., a, :], counts[:, a, :], alpha[a], p, rng)
        probs.append(p)
        evidences.append((log0, log1))
    return mu, same, probs, evidences
