r"""Compiled log density and gradient of the binary ``folds`` model, for nutpie.

The density is that of :func:`bayescm.models.folds` (spread priors on both rates) in
PyMC's unconstrained coordinates, variables in the builder's order: ``prevalence``
:math:`\phi`, ``tpr_mean`` :math:`\mu_+`, ``tpr_spread`` :math:`\tau_+`,
``tnr_mean``, ``tnr_spread``, each on the log-odds scale :math:`x` (Jacobian
:math:`\sigma(x)\sigma(-x)`).  A Beta(a, b) prior with its Jacobian is then
:math:`a \log\sigma(x) + b \log\sigma(-x) - \log B(a, b)`, with derivative
:math:`a\,\sigma(-x) - b\,\sigma(x)`.

The likelihood: the positives :math:`P_f \sim \mathrm{Binomial}(N_f, \phi)`, and per
rate the Beta-binomial hits of every fold with :math:`\alpha = \mu\kappa`,
:math:`\beta = (1-\mu)\kappa`, :math:`\kappa = \mathrm{clip}((1-\tau^2)/\tau^2,
10^{-10}, \kappa_{\max})` (:mod:`bayescm.models.folds.spread`):

.. math::

    \ell = \sum_f \log\Gamma(h_f + \alpha) + \log\Gamma(m_f + \beta)
        - \log\Gamma(n_f + \kappa) - \log\Gamma(\alpha) - \log\Gamma(\beta)
        + \log\Gamma(\kappa),

    \partial_\alpha \ell = \sum_f \psi(h_f + \alpha) - \psi(n_f + \kappa) - \psi(\alpha)
        + \psi(\kappa),

and likewise :math:`\partial_\beta`; then :math:`\partial_{x_\mu} = \kappa(\partial_\alpha
- \partial_\beta)\,\mu(1-\mu)` and :math:`\partial_{x_\tau} = (\mu\partial_\alpha +
(1-\mu)\partial_\beta)\,\partial_{x_\tau}\kappa`, with :math:`\partial_{x_\tau}\kappa =
-2(1-\tau)/\tau^2` inside the bounds and 0 outside (the clip's gradient, as PyTensor's).
Constants (binomial coefficients, Beta functions) are included, so the value equals
PyMC's (the tests compare value and gradient with ``model.compile_logp`` and
``compile_dlogp``).

Why compiled: nutpie compiling the PyMC model took 30 s per fold count on first use
(measured: 29.6 s for a first fit of 10 folds, against 2.8 s with this kernel compiled
from an empty cache); this kernel compiles once (numba's disk cache) for every fold
count.

``user_data``: ``[F, kappa_max, const, a_phi, b_phi, (a_mu, b_mu, a_tau, b_tau) for TPR
and TNR, then per fold N, P, tp, tn]``.
"""

import math

import numba
from numba import types

from bayescm.models.special import digamma

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 13
NAMES = ("prevalence", "tpr_mean", "tpr_spread", "tpr_kappa", "tnr_mean", "tnr_spread",
         "tnr_kappa")


@numba.njit(cache=True, error_model="numpy")
def _log_sigmoid(x):  # pragma: no cover - compiled
    """log sigma(x), stable in both tails."""
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@numba.njit(cache=True, error_model="numpy")
def _beta_logit(x, a, b):  # pragma: no cover - compiled
    """Beta(a, b) on sigma(x) with the Jacobian, without -log B(a, b): value, d/dx."""
    s = 1.0 / (1.0 + math.exp(-x))
    return a * _log_sigmoid(x) + b * _log_sigmoid(-x), a * (1.0 - s) - b * s


@numba.njit(cache=True, error_model="numpy")
def _kappa(x, kappa_max):  # pragma: no cover - compiled
    """kappa of tau = sigma(x), clipped as the model does, and d kappa / dx."""
    tau = 1.0 / (1.0 + math.exp(-x))
    kappa = (1.0 - tau) * (1.0 + tau) / (tau * tau)
    if kappa < 1e-10:
        return 1e-10, 0.0
    if kappa > kappa_max:
        return kappa_max, 0.0
    return kappa, -2.0 * (1.0 - tau) / (tau * tau)


@numba.njit(cache=True, error_model="numpy")
def _rate(xm, xt, am, bm, at, bt, par, f_, hit_col, kappa_max):  # pragma: no cover
    """One rate's prior and Beta-binomial likelihood: value, d/dx_mu, d/dx_tau."""
    vm, gm = _beta_logit(xm, am, bm)
    vt, gt = _beta_logit(xt, at, bt)
    mu = 1.0 / (1.0 + math.exp(-xm))
    kappa, dkappa = _kappa(xt, kappa_max)
    al, be = mu * kappa, (1.0 - mu) * kappa
    lg_al, lg_be, lg_k = math.lgamma(al), math.lgamma(be), math.lgamma(kappa)
    ps_al, ps_be, ps_k = digamma(al), digamma(be), digamma(kappa)
    total, d_al, d_be = 0.0, 0.0, 0.0
    for f in range(f_):
        row = HEAD + 4 * f
        pos = par[row + 1]
        n = pos if hit_col == 2 else par[row] - pos
        h = par[row + hit_col]
        m = n - h
        total += (math.lgamma(h + al) + math.lgamma(m + be) - math.lgamma(n + kappa)
                  - lg_al - lg_be + lg_k)
        ps_n = digamma(n + kappa)
        d_al += digamma(h + al) - ps_n - ps_al + ps_k
        d_be += digamma(m + be) - ps_n - ps_be + ps_k
    g_mu = kappa * (d_al - d_be) * mu * (1.0 - mu)
    g_tau = (mu * d_al + (1.0 - mu) * d_be) * dkappa
    return vm + vt + total, gm + g_mu, gt + g_tau


@numba.njit(cache=True, error_model="numpy")
def _density(x, grad, par):  # pragma: no cover - compiled
    f_, kappa_max = int(par[0]), par[1]
    total = par[2]
    v, g = _beta_logit(x[0], par[3], par[4])
    total += v
    phi = 1.0 / (1.0 + math.exp(-x[0]))
    lphi, l1phi = _log_sigmoid(x[0]), _log_sigmoid(-x[0])
    for f in range(f_):
        n, pos = par[HEAD + 4 * f], par[HEAD + 4 * f + 1]
        total += pos * lphi + (n - pos) * l1phi
        g += pos - n * phi
    grad[0] = g
    v, gm, gt = _rate(x[1], x[2], par[5], par[6], par[7], par[8], par, f_, 2, kappa_max)
    total += v
    grad[1], grad[2] = gm, gt
    v, gm, gt = _rate(x[3], x[4], par[9], par[10], par[11], par[12], par, f_, 3, kappa_max)
    total += v
    grad[3], grad[4] = gm, gt
    return total


@numba.cfunc(LOGP_SIG, cache=True, nopython=True, error_model="numpy")
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    head = numba.carray(user_data_, (1,))
    par = numba.carray(user_data_, (HEAD + 4 * int(head[0]),))
    x = numba.carray(x_, (dim,))
    grad = numba.carray(grad_, (dim,))
    total = _density(x, grad, par)
    out = numba.carray(logp_, (1,))
    out[0] = total
    if not math.isfinite(total):
        return 4
    return 0


@numba.cfunc(EXPAND_SIG, cache=True, nopython=True, error_model="numpy")
def expand(dim, n_expanded, x_, out_, user_data_):  # pragma: no cover - compiled
    par = numba.carray(user_data_, (2,))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    out[0] = 1.0 / (1.0 + math.exp(-x[0]))
    for r in range(2):
        out[1 + 3 * r] = 1.0 / (1.0 + math.exp(-x[1 + 2 * r]))
        out[2 + 3 * r] = 1.0 / (1.0 + math.exp(-x[2 + 2 * r]))
        out[3 + 3 * r] = _kappa(x[2 + 2 * r], par[1])[0]
    return 0
