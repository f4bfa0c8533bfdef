r"""Compiled log density and gradient of the ``groups`` model, for nutpie.

The density is that of :func:`bayescm.models.groups` in PyMC's unconstrained
coordinates (the tests compare it with ``model.compile_logp`` and
``model.compile_dlogp`` at random points): ``mu`` as is, each scale on the log scale
(:math:`\sigma = e^{x}`, Jacobian :math:`e^{x}`), the standard normals ``z`` as is.
With :math:`\eta_{rs}` the log-odds of rate r in slice s (:mod:`._groups_design`),
:math:`\phi, \mathrm{TPR}, \mathrm{TNR} = \sigma(\eta)`, the log-likelihood of a slice
is

.. math::

    (tp + fn)\log\phi + (fp + tn)\log(1-\phi) + tp\log\mathrm{TPR} + fn\log(1-\mathrm{TPR})
    + tn\log\mathrm{TNR} + fp\log(1-\mathrm{TNR}) + \text{const}

so :math:`\partial/\partial\eta` is ``successes - n * rate`` per rate (e.g.
:math:`tp - (tp + fn)\mathrm{TPR}`), collected over the slices of each level
(:math:`\partial/\partial z = \sigma G - z`,
:math:`\partial/\partial x_\sigma = \sigma \sum_l z_l G_l - \sigma^2/s^2 + 1`) and,
for the walk :math:`w_t = \tau \sum_{k \le t} e_k`, summed over the windows from
step k on.  Constants (normal and half-normal normalisers, multinomial
coefficients) are included, so the value equals PyMC's.

``user_data``: ``[S, B, T, const, L(B), mu_m(3), mu_s(3), sig_s(3), tau_s(3),
index(B*S), window(S), counts(S*4)]``.
"""

import math

import numba
import numpy as np
from numba import types

from bayescm.models._kernel_hui_walter import _logsig  # log sigmoid without overflow

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 4
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
HALF_LOG_2_OVER_PI = 0.5 * math.log(2.0 / math.pi)


@numba.njit(cache=True, error_model="numpy")
def _size(par):  # pragma: no cover - compiled
    s_, b_ = int(par[0]), int(par[1])
    return HEAD + b_ + 12 + b_ * s_ + s_ + 4 * s_


@numba.njit(cache=True, error_model="numpy")
def _density(x, grad, par):  # pragma: no cover - compiled
    s_, b_, t_ = int(par[0]), int(par[1]), int(par[2])
    total = par[3]
    lens = par[HEAD:HEAD + b_]
    o = HEAD + b_
    mu_m, mu_s, sig_s, tau_s = par[o:o + 3], par[o + 3:o + 6], par[o + 6:o + 9], par[o + 9:o + 12]
    o += 12
    index = par[o:o + b_ * s_]
    o += b_ * s_
    window = par[o:o + s_]
    counts = par[o + s_:o + 5 * s_]
    eta = np.empty((3, s_))
    for r in range(3):
        u = (x[r] - mu_m[r]) / mu_s[r]
        total += -0.5 * u * u - math.log(mu_s[r]) - HALF_LOG_2PI
        for s in range(s_):
            eta[r, s] = x[r]
    # the blocks' offsets in x, and their effects added to eta
    xo = 3
    for b in range(b_):
        nl = int(lens[b])
        for r in range(3):
            sig = math.exp(x[xo + r])
            u = sig / sig_s[r]
            total += -0.5 * u * u - math.log(sig_s[r]) + HALF_LOG_2_OVER_PI + x[xo + r]
            for s in range(s_):
                eta[r, s] += sig * x[xo + 3 + r * nl + int(index[b * s_ + s])]
        for i in range(3 * nl):
            z = x[xo + 3 + i]
            total += -0.5 * z * z - HALF_LOG_2PI
        xo += 3 + 3 * nl
    walk = np.zeros((3, t_))
    if t_ > 1:
        for r in range(3):
            tau = math.exp(x[xo + r])
            u = tau / tau_s[r]
            total += -0.5 * u * u - math.log(tau_s[r]) + HALF_LOG_2_OVER_PI + x[xo + r]
            acc = 0.0
            for t in range(1, t_):
                e = x[xo + 3 + r * (t_ - 1) + t - 1]
                total += -0.5 * e * e - HALF_LOG_2PI
                acc += e
                walk[r, t] = tau * acc
            for s in range(s_):
                eta[r, s] += walk[r, int(window[s])]
    # likelihood and d/d eta: successes - n * rate
    g = np.empty((3, s_))
    for s in range(s_):
        tp, fn, fp, tn = counts[4 * s], counts[4 * s + 1], counts[4 * s + 2], counts[4 * s + 3]
        succ = (tp + fn, tp, tn)
        fail = (fp + tn, fn, fp)
        for r in range(3):
            v = eta[r, s]
            lp = _logsig(v)
            total += succ[r] * lp + fail[r] * (lp - v)
            g[r, s] = succ[r] - (succ[r] + fail[r]) * math.exp(lp)
    for r in range(3):
        acc = 0.0
        for s in range(s_):
            acc += g[r, s]
        grad[r] = acc - (x[r] - mu_m[r]) / (mu_s[r] * mu_s[r])
    xo = 3
    for b in range(b_):
        nl = int(lens[b])
        for r in range(3):
            sig = math.exp(x[xo + r])
            gl = np.zeros(nl)
            for s in range(s_):
                gl[int(index[b * s_ + s])] += g[r, s]
            dsig = 0.0
            for level in range(nl):
                k = xo + 3 + r * nl + level
                dsig += x[k] * gl[level]
                grad[k] = sig * gl[level] - x[k]
            grad[xo + r] = sig * dsig - (sig / sig_s[r]) ** 2 + 1.0
        xo += 3 + 3 * nl
    if t_ > 1:
        for r in range(3):
            tau = math.exp(x[xo + r])
            gw = np.zeros(t_)
            for s in range(s_):
                gw[int(window[s])] += g[r, s]
            dtau = 0.0
            tail = 0.0
            for t in range(t_ - 1, 0, -1):
                dtau += walk[r, t] * gw[t]
                tail += gw[t]  # sum of the windows from step t on
                k = xo + 3 + r * (t_ - 1) + t - 1
                grad[k] = tau * tail - x[k]
            grad[xo + r] = dtau - (tau / tau_s[r]) ** 2 + 1.0
    return total


@numba.cfunc(LOGP_SIG, cache=True, nopython=True, error_model="numpy")
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    head = numba.carray(user_data_, (HEAD,))
    par = numba.carray(user_data_, (_size(head),))
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
    head = numba.carray(user_data_, (HEAD,))
    b_, t_ = int(head[1]), int(head[2])
    lens = numba.carray(user_data_, (HEAD + b_,))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    for i in range(dim):
        out[i] = x[i]
    # the scales are stored on the log scale: sigma_b after each block's start, tau last
    xo = 3
    for b in range(b_):
        for r in range(3):
            out[xo + r] = math.exp(x[xo + r])
        xo += 3 + 3 * int(lens[HEAD + b])
    if t_ > 1:
        for r in range(3):
            out[xo + r] = math.exp(x[xo + r])
    return 0
