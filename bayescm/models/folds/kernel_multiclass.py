r"""Compiled log density and gradient of the K-class ``folds`` model, for nutpie.

The density is that of :func:`bayescm.models.folds.multiclass.folds_multiclass` in
PyMC's unconstrained coordinates, variables in the builder's order: ``prevalence``
:math:`\pi` and each actual class's mean row :math:`\mu_a` through PyMC's centred
simplex transform (:math:`K - 1` coordinates :math:`y`, :math:`z = (y, -\sum y)`,
:math:`\theta = \mathrm{softmax}(z)`, Jacobian :math:`K \prod_i \theta_i`), and each
spread :math:`\tau_a` on the log-odds scale.  A Dirichlet(:math:`\alpha`) prior with
its Jacobian is :math:`\sum_i \alpha_i \log\theta_i` + const, and a gradient
:math:`g_i` with respect to :math:`\log\theta_i` becomes
:math:`(g_j - g_K) - (\sum_i g_i)(\theta_j - \theta_K)` in the coordinates.

The likelihood: the class counts :math:`r_{f\cdot} \sim \mathrm{Multinomial}(N_f, \pi)`
(:math:`g_c \mathrel{+}= \sum_f r_{fc}`) and every fold's row of counts
:math:`C_{fa\cdot} \sim \mathrm{DirichletMultinomial}(r_{fa}, \kappa_a\mu_a)`:

.. math::

    \ell_a = \sum_f \log\Gamma(\kappa_a) - \log\Gamma(r_{fa} + \kappa_a)
        + \sum_j \log\Gamma(C_{faj} + \kappa_a\mu_{aj}) - \log\Gamma(\kappa_a\mu_{aj}),

    \frac{\partial \ell_a}{\partial \log\mu_{aj}} = \kappa_a\mu_{aj}\sum_f
        \psi(C_{faj} + \kappa_a\mu_{aj}) - \psi(\kappa_a\mu_{aj}),

    \frac{\partial \ell_a}{\partial \kappa_a} = \sum_f \psi(\kappa_a) - \psi(r_{fa} + \kappa_a)
        + \sum_j \mu_{aj}\,(\psi(C_{faj} + \kappa_a\mu_{aj}) - \psi(\kappa_a\mu_{aj})),

with :math:`\kappa_a` clipped as in :mod:`bayescm.models.folds.spread` (its gradient 0
outside the bounds).  (The Dirichlet-multinomial's :math:`\sum_j \kappa_a\mu_{aj}`
depends on :math:`\mu` only through :math:`\sum_j \mu_{aj} = 1`, which the simplex
transform keeps fixed: it contributes nothing to the coordinates' gradient.)  Values
equal PyMC's up to a constant (the tests compare value differences and gradients with
``model.compile_logp`` and ``compile_dlogp``).

``user_data``: ``[K, F, kappa_max, alpha_prevalence(K), beta_rows(K*K), a_tau(K),
b_tau(K), class counts (F*K), row counts (F*K*K)]``.
"""

import math

import numba
import numpy as np
from numba import types

from bayescm.models.folds.kernel import _kappa, _log_sigmoid
from bayescm.models.special import digamma

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 3
NAMES = ("prevalence", "rows_mean", "rows_spread", "rows_kappa")


@numba.njit(cache=True, error_model="numpy")
def _size(k, f):  # pragma: no cover - compiled
    return HEAD + k + k * k + 2 * k + f * k + f * k * k


@numba.njit(cache=True, error_model="numpy")
def _simplex(x, start, k, theta, log_theta):  # pragma: no cover - compiled
    """PyMC's centred simplex transform: theta = softmax(y, -sum y)."""
    total = 0.0
    for i in range(k - 1):
        total += x[start + i]
    top = -total
    for i in range(k - 1):
        top = max(top, x[start + i])
    norm = 0.0
    for i in range(k):
        z = x[start + i] if i < k - 1 else -total
        theta[i] = math.exp(z - top)
        norm += theta[i]
    lse = top + math.log(norm)
    for i in range(k):
        z = x[start + i] if i < k - 1 else -total
        log_theta[i] = z - lse
        theta[i] /= norm


@numba.njit(cache=True, error_model="numpy")
def _simplex_grad(g, theta, grad, start, k):  # pragma: no cover - compiled
    """A gradient in log theta to the transform's K - 1 coordinates."""
    total = 0.0
    for i in range(k):
        total += g[i]
    for j in range(k - 1):
        grad[start + j] = (g[j] - g[k - 1]) - total * (theta[j] - theta[k - 1])


@numba.njit(cache=True, error_model="numpy")
def _density(x, grad, par):  # pragma: no cover - compiled
    k, f_, kappa_max = int(par[0]), int(par[1]), par[2]
    o_alpha = HEAD
    o_beta = o_alpha + k
    o_at = o_beta + k * k
    o_bt = o_at + k
    o_r = o_bt + k
    o_c = o_r + f_ * k
    theta, log_theta, g = np.empty(k), np.empty(k), np.empty(k)
    total = 0.0
    # prevalence: Dirichlet prior with its Jacobian, multinomial class counts
    _simplex(x, 0, k, theta, log_theta)
    for c in range(k):
        g[c] = par[o_alpha + c]
        for f in range(f_):
            g[c] += par[o_r + f * k + c]
        total += g[c] * log_theta[c]
    _simplex_grad(g, theta, grad, 0, k)
    o_tau = (k - 1) * (1 + k)
    for a in range(k):
        start = (k - 1) * (1 + a)
        _simplex(x, start, k, theta, log_theta)
        xt = x[o_tau + a]
        at, bt = par[o_at + a], par[o_bt + a]
        s = 1.0 / (1.0 + math.exp(-xt))
        total += at * _log_sigmoid(xt) + bt * _log_sigmoid(-xt)
        g_tau = at * (1.0 - s) - bt * s
        kappa, dkappa = _kappa(xt, kappa_max)
        lg_k, ps_k = math.lgamma(kappa), digamma(kappa)
        d_kappa = 0.0
        for j in range(k):
            g[j] = par[o_beta + a * k + j]
            total += g[j] * log_theta[j]
        for j in range(k):
            aj = kappa * theta[j]
            lg_a, ps_a = math.lgamma(aj), digamma(aj)
            acc = 0.0
            for f in range(f_):
                cnt = par[o_c + (f * k + a) * k + j]
                if cnt > 0:
                    total += math.lgamma(cnt + aj) - lg_a
                    acc += digamma(cnt + aj) - ps_a
            g[j] += aj * acc
            d_kappa += theta[j] * acc
        for f in range(f_):
            r = par[o_r + f * k + a]
            total += lg_k - math.lgamma(r + kappa)
            d_kappa += ps_k - digamma(r + kappa)
        _simplex_grad(g, theta, grad, start, k)
        grad[o_tau + a] = g_tau + d_kappa * dkappa
    return total


@numba.cfunc(LOGP_SIG, cache=True, nopython=True, error_model="numpy")
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    head = numba.carray(user_data_, (2,))
    par = numba.carray(user_data_, (_size(int(head[0]), int(head[1])),))
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
    par = numba.carray(user_data_, (HEAD,))
    k, kappa_max = int(par[0]), par[2]
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    theta, log_theta = np.empty(k), np.empty(k)
    # prevalence (K), rows_mean (K x K), rows_spread (K), rows_kappa (K)
    for a in range(k + 1):
        _simplex(x, (k - 1) * a, k, theta, log_theta)
        for j in range(k):
            out[a * k + j] = theta[j]
    o_tau, o_out = (k - 1) * (1 + k), k + k * k
    for a in range(k):
        xt = x[o_tau + a]
        out[o_out + a] = 1.0 / (1.0 + math.exp(-xt))
        out[o_out + k + a] = _kappa(xt, kappa_max)[0]
    return 0
