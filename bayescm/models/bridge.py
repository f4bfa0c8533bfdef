r"""Marginal likelihoods from posterior draws: bridge sampling.

The marginal likelihood (evidence) of a model, :math:`p(y) = \int q(\theta)\,d\theta`
with :math:`q(\theta) = p(y \mid \theta)\,p(\theta)` the unnormalised posterior on an
unconstrained scale (Jacobian included), is what a Bayes factor or a model average
needs and what MCMC draws alone do not give.  Bridge sampling (Meng & Wong,
"Simulating ratios of normalizing constants via a simple identity: a theoretical
exploration", Statistica Sinica 1996; as set out by Gronau et al., "A tutorial on
bridge sampling", Journal of Mathematical Psychology 2017) estimates it from the
posterior draws and draws from a proposal :math:`g` (here a normal fitted to the
draws): with :math:`l_{1j} = \log q(\theta_j) - \log g(\theta_j)` at
:math:`N_1` posterior draws and :math:`l_{2i}` the same at :math:`N_2` proposal
draws, the optimal bridge function gives the fixed point

.. math::

    \hat p(y)^{(t+1)} = \frac{\frac{1}{N_2}\sum_i \dfrac{e^{l_{2i}}}
        {s_1 e^{l_{2i}} + s_2 \hat p(y)^{(t)}}}
        {\frac{1}{N_1}\sum_j \dfrac{1}{s_1 e^{l_{1j}} + s_2 \hat p(y)^{(t)}}},
    \qquad s_1 = \frac{N_1}{N_1 + N_2},\ s_2 = \frac{N_2}{N_1 + N_2},

iterated in logs (no overflow).  Half the posterior draws (every other one) fit the
proposal and the other half enter the iteration, as the ``bridgesampling`` R package
does, so the proposal is not tuned to the draws it is judged on.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

__all__ = ["log_evidence"]


def log_evidence(log_density: Callable[[np.ndarray], np.ndarray], draws: np.ndarray,
                 rng: np.random.Generator, *, tol: float = 1e-10,
                 max_iter: int = 1000) -> float:
    r"""Log marginal likelihood :math:`\log \int q(\theta)\,d\theta` by bridge sampling.

    Parameters
    ----------
    log_density
        :math:`\log q` of an array of points, shape ``(n, d)`` to ``(n,)``: the
        unnormalised log posterior on the unconstrained scale of ``draws``, Jacobian
        included (``-inf`` where it vanishes).
    draws
        Posterior draws on that scale, shape ``(n, d)``, at least ``4 (d + 1)`` of them.
    rng
        The stream of the proposal draws.

    Returns
    -------
    float
        The estimate; its Monte Carlo error is of the order of
        :math:`1/\sqrt{n}` when the posterior is close to normal on that scale.

    Examples
    --------
    The evidence of a normal likelihood with a normal prior is a normal density:

    >>> import numpy as np
    >>> from scipy import stats
    >>> rng = np.random.default_rng(1)
    >>> y = 1.3  # y ~ N(theta, 1), theta ~ N(0, 1): p(y) = N(y; 0, sqrt 2)
    >>> def log_q(t):
    ...     return stats.norm.logpdf(y, t[:, 0]) + stats.norm.logpdf(t[:, 0])
    >>> draws = rng.normal(y / 2, np.sqrt(0.5), (4000, 1))
    >>> est = log_evidence(log_q, draws, rng)
    >>> bool(abs(est - stats.norm.logpdf(y, 0, np.sqrt(2))) < 0.02)
    True
    """
    draws = np.asarray(draws, dtype=float)
    if draws.ndim != 2:
        raise ValueError(f"draws must be (n, d), got shape {draws.shape}.")
    n, d = draws.shape
    if n < 8 * (d + 1):
        raise ValueError(f"Bridge sampling in {d} dimensions needs at least {8 * (d + 1)} "
                         f"posterior draws, got {n}; run more draws.")
    if not np.all(np.isfinite(draws)):
        raise ValueError("Bridge sampling needs finite draws on the unconstrained scale.")
    fit_half, iter_half = draws[0::2], draws[1::2]
    mean = fit_half.mean(axis=0)
    cov = np.atleast_2d(np.cov(fit_half, rowvar=False))
    # a dimension the draws do not move in (or nearly) still needs a proposal width
    cov = cov + np.eye(d) * 1e-10 * max(1.0, float(np.trace(cov)) / d)
    chol = np.linalg.cholesky(cov)
    log_det = 2 * np.log(np.diag(chol)).sum()

    def log_proposal(x: np.ndarray) -> np.ndarray:
        z = np.linalg.solve(chol, (x - mean).T)
        return -0.5 * (z**2).sum(axis=0) - 0.5 * log_det - 0.5 * d * np.log(2 * np.pi)

    proposal = mean + rng.standard_normal((iter_half.shape[0], d)) @ chol.T
    l1 = log_density(iter_half) - log_proposal(iter_half)
    l2 = log_density(proposal) - log_proposal(proposal)
    if not np.all(np.isfinite(l1)):
        raise ValueError("The log density is not finite at a posterior draw; it does not "
                         "match the draws' model or scale.")
    l2 = np.where(np.isnan(l2), -np.inf, l2)
    n1, n2 = l1.size, l2.size
    log_s1, log_s2 = np.log(n1 / (n1 + n2)), np.log(n2 / (n1 + n2))
    shift = float(np.median(l1))
    a1, a2 = l1 - shift, l2 - shift
    log_r = 0.0
    for _ in range(max_iter):
        num = logsumexp(-np.logaddexp(log_s1, log_s2 + log_r - a2)) - np.log(n2)
        den = logsumexp(-np.logaddexp(log_s1 + a1, log_s2 + log_r)) - np.log(n1)
        new = float(num - den)
        if abs(new - log_r) < tol:
            log_r = new
            break
        log_r = new
    return log_r + shift
