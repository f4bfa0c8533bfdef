r"""Compiled log density and gradient of the partially pooled Dawid–Skene model, for nutpie.

The model is :func:`bayescm.models.dawid_skene` with ``pooling="partial"``
(:mod:`~bayescm.models.dawid_skene.hierarchical`): row :math:`c` of rater :math:`r` is
:math:`\operatorname{softmax}(u_{rc\cdot})` with :math:`u_{rcc} = 0` and
:math:`u_{rcl} = \zeta_{cl} + \sigma_{cl}\eta_{rcl}`.  PyMC's unconstrained coordinates
are :math:`y = (` the prevalence's centred simplex coordinates, :math:`\zeta`,
:math:`\log\sigma`, :math:`\eta)` (its value variables in the model's order), and the
kernel's are :math:`x = y - y_0`, shifted by the start
(:func:`~bayescm.models.dawid_skene.hierarchical.partial_start`) as in
:mod:`~bayescm.models.dawid_skene.kernel`.  Up to a constant the log density is

.. math::

    \sum_c \alpha_c \log\pi_c - \sum \frac{(\zeta - \mu)^2}{2 s^2}
    + \sum \Bigl(\log\sigma - \frac{\sigma^2}{2\tau^2}\Bigr) - \sum \frac{\eta^2}{2}
    + \sum_p m_p \ell_p,

the last term by :func:`~bayescm.models.dawid_skene.kernel.fast_likelihood`, which also
gives :math:`G_{rcl} = \partial/\partial \log\theta_{rcl}`.  Through the softmax,
:math:`\partial/\partial u_{rcl} = G_{rcl} - \theta_{rcl}\sum_{l'} G_{rcl'}`, and then
:math:`\partial\zeta_{cl} = \sum_r \partial u_{rcl}`,
:math:`\partial\eta_{rcl} = \sigma_{cl}\,\partial u_{rcl}`,
:math:`\partial\log\sigma_{cl} = \sigma_{cl}\sum_r \eta_{rcl}\,\partial u_{rcl}`.

``user_data`` is ``[K, R, P, E, alpha(K), mu(F), sd(F), tau(F), y0(D), m(P), gold(P),
indptr(P+1), cell(E), count(E)]`` with :math:`F = K(K-1)` and
:math:`D = (K-1) + 2F + RF`.
"""

import math

import numba
import numpy as np

from bayescm.models.dawid_skene.kernel import (
    EXPAND_SIG,
    HEAD,
    LOGP_SIG,
    _log_simplex,
    _simplex_grad,
    fast_likelihood,
)


@numba.njit(cache=True)
def _size(head):  # pragma: no cover - compiled
    k, r, p, e = int(head[0]), int(head[1]), int(head[2]), int(head[3])
    f = k * (k - 1)
    d = (k - 1) + 2 * f + r * f
    return HEAD + k + 3 * f + d + 2 * p + (p + 1) + 2 * e


@numba.njit(cache=True)
def _unpack(par):  # pragma: no cover - compiled
    k, r, p, e = int(par[0]), int(par[1]), int(par[2]), int(par[3])
    f = k * (k - 1)
    d = (k - 1) + 2 * f + r * f
    o = HEAD
    alpha = par[o:o + k]
    o += k
    mu = par[o:o + f]
    o += f
    sd = par[o:o + f]
    o += f
    tau = par[o:o + f]
    o += f
    y0 = par[o:o + d]
    o += d
    mult = par[o:o + p]
    o += p
    gold = par[o:o + p]
    o += p
    indptr = par[o:o + p + 1]
    o += p + 1
    cell = par[o:o + e]
    o += e
    count = par[o:o + e]
    return k, r, alpha, mu, sd, tau, y0, mult, gold, indptr, cell, count


@numba.njit(cache=True)
def _logs(y, k, r):  # pragma: no cover - compiled
    """log prevalence (K), log confusion rows (R*K, K), log population rows (K, K) at
    PyMC's coordinates ``y``."""
    f = k * (k - 1)
    lp = np.empty(k)
    _log_simplex(y, 0, k, lp)
    zeta = y[k - 1:k - 1 + f]
    sigma = np.exp(y[k - 1 + f:k - 1 + 2 * f])
    eta = y[k - 1 + 2 * f:]
    lc = np.empty((r * k, k))
    pop = np.empty((k, k))
    u = np.empty(k)
    for rr in range(-1, r):  # -1: the population row (eta = 0)
        for c in range(k):
            top = 0.0
            for l_ in range(k):
                if l_ == c:
                    u[l_] = 0.0
                else:
                    j = c * (k - 1) + (l_ if l_ < c else l_ - 1)
                    u[l_] = zeta[j] if rr < 0 else zeta[j] + sigma[j] * eta[rr * f + j]
                    top = max(top, u[l_])
            s = 0.0
            for l_ in range(k):
                s += math.exp(u[l_] - top)
            lz = top + math.log(s)
            for l_ in range(k):
                if rr < 0:
                    pop[c, l_] = u[l_] - lz
                else:
                    lc[rr * k + c, l_] = u[l_] - lz
    return lp, lc, pop


@numba.njit(cache=True)
def log_density(x, par, grad):  # pragma: no cover - compiled
    """Log density at kernel coordinates ``x``; writes the gradient into ``grad``."""
    k, r, alpha, mu, sd, tau, y0, mult, gold, indptr, cell, count = _unpack(par)
    f = k * (k - 1)
    y = x + y0
    lp, lc, _ = _logs(y, k, r)
    g_prev = alpha.copy()
    gt = np.zeros((r * k, k))
    total = fast_likelihood(lp, lc, k, r, mult, gold, indptr, cell, count, g_prev, gt)
    if not math.isfinite(total):
        return -np.inf
    for c in range(k):
        total += alpha[c] * lp[c]
    _simplex_grad(g_prev, lp, k, grad, 0)
    oz, os, oe = k - 1, k - 1 + f, k - 1 + 2 * f
    for j in range(f):
        dz = y[oz + j] - mu[j]
        sig = math.exp(y[os + j])
        total += -0.5 * dz * dz / (sd[j] * sd[j]) + y[os + j] - 0.5 * sig * sig / (tau[j] * tau[j])
        grad[oz + j] = -dz / (sd[j] * sd[j])
        grad[os + j] = 1.0 - sig * sig / (tau[j] * tau[j])
    for i in range(r * f):
        total -= 0.5 * y[oe + i] * y[oe + i]
        grad[oe + i] = -y[oe + i]
    for rr in range(r):
        for c in range(k):
            gsum = 0.0
            for l_ in range(k):
                gsum += gt[rr * k + l_, c]
            for l_ in range(k):
                if l_ == c:
                    continue
                j = c * (k - 1) + (l_ if l_ < c else l_ - 1)
                du = gt[rr * k + l_, c] - math.exp(lc[rr * k + c, l_]) * gsum
                sig = math.exp(y[os + j])
                eta = y[oe + rr * f + j]
                grad[oz + j] += du
                grad[oe + rr * f + j] += sig * du
                grad[os + j] += sig * eta * du
    return total


@numba.cfunc(LOGP_SIG, cache=True, nopython=True)
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    par = numba.carray(user_data_, (_size(numba.carray(user_data_, (HEAD,))),))
    x = numba.carray(x_, (dim,))
    grad = numba.carray(grad_, (dim,))
    out = numba.carray(logp_, (1,))
    value = log_density(x, par, grad)
    out[0] = value
    if not math.isfinite(value):
        return 4
    for i in range(dim):
        if not math.isfinite(grad[i]):
            return 3
    return 0


@numba.cfunc(EXPAND_SIG, cache=True, nopython=True)
def expand(dim, n_expanded, x_, out_, user_data_):  # pragma: no cover - compiled
    """prevalence (K), confusion (R, K, K), confusion_population (K, K),
    confusion_logit_mean (K, K-1), confusion_logit_scale (K, K-1), row-major."""
    par = numba.carray(user_data_, (_size(numba.carray(user_data_, (HEAD,))),))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    k, r, _, _, _, _, y0, _, _, _, _, _ = _unpack(par)
    f = k * (k - 1)
    y = np.empty(dim)
    for i in range(dim):
        y[i] = x[i] + y0[i]
    lp, lc, pop = _logs(y, k, r)
    o = 0
    for c in range(k):
        out[o] = math.exp(lp[c])
        o += 1
    for g in range(r * k):
        for l_ in range(k):
            out[o] = math.exp(lc[g, l_])
            o += 1
    for c in range(k):
        for l_ in range(k):
            out[o] = math.exp(pop[c, l_])
            o += 1
    for j in range(f):
        out[o] = y[k - 1 + j]
        out[o + f] = math.exp(y[k - 1 + f + j])
        o += 1
    return 0
