r"""Compiled log density and gradient of the ``groups`` model, for nutpie.

The density is that of :func:`bayescm.models.groups` in PyMC's unconstrained
coordinates (the tests compare it with ``model.compile_logp`` and
``model.compile_dlogp`` at random points): ``mu`` as is, each scale on the log scale
(:math:`\sigma = e^{x}`, Jacobian :math:`e^{x}`), the walk's standard normal steps as
is, and each block's sum-to-zero standard normals ``z`` (``pm.ZeroSumNormal``, L
levels) through PyMC's ``ZeroSumTransform``: L - 1 free coordinates :math:`y` give

.. math::

    z_l = y_l - \frac{\sum y}{\sqrt L + L}\ (l < L - 1),\qquad
    z_{L-1} = -\frac{\sum y}{\sqrt L},

an isometry onto :math:`\{\sum_l z_l = 0\}` (log-Jacobian 0), with log density
:math:`-\tfrac12 \sum_l z_l^2 - \tfrac{L-1}{2}\log 2\pi` (PyMC's, for
:math:`\sigma = 1`).  A centred block (flag ``centred``) samples the effect
:math:`a = \sigma z` the same way, with density
:math:`-\tfrac12 \sum_l a_l^2/\sigma^2 - (L-1)(\tfrac12\log 2\pi + \log\sigma)`.
With :math:`\eta_{rs}` the log-odds of rate r in slice s
(:mod:`._groups_design`), :math:`\phi, \mathrm{TPR}, \mathrm{TNR} = \sigma(\eta)`,
the log-likelihood of a slice is

.. math::

    (tp + fn)\log\phi + (fp + tn)\log(1-\phi) + tp\log\mathrm{TPR} + fn\log(1-\mathrm{TPR})
    + tn\log\mathrm{TNR} + fp\log(1-\mathrm{TNR}) + \text{const}

so :math:`\partial/\partial\eta` is ``successes - n * rate`` per rate (e.g.
:math:`tp - (tp + fn)\mathrm{TPR}`), collected over the slices of each level
(:math:`\partial/\partial z_l = \sigma G_l - z_l`, then through the transform's
Jacobian to :math:`y`;
:math:`\partial/\partial x_\sigma = \sigma \sum_l z_l G_l - \sigma^2/s^2 + 1`) and,
for the walk :math:`w_t = \tau \sum_{k \le t} e_k`, summed over the windows from
step k on.  Constants (normal and half-normal normalisers, multinomial
coefficients) are included, so the value equals PyMC's.

``user_data``: ``[S, B, T, const, L(B), centred(B), mu_m(3), mu_s(3), sig_s(3), tau_s(3),
index(B*S), window(S), counts(S*4)]``.
"""

import math

import numba
import numpy as np
from numba import types

from bayescm.models.hui_walter.kernel import _logsig  # log sigmoid without overflow

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 4
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
HALF_LOG_2_OVER_PI = 0.5 * math.log(2.0 / math.pi)


@numba.njit(cache=True, error_model="numpy")
def _size(par):  # pragma: no cover - compiled
    s_, b_ = int(par[0]), int(par[1])
    return HEAD + 2 * b_ + 12 + b_ * s_ + s_ + 4 * s_


@numba.njit(cache=True, error_model="numpy")
def _zero_sum(x, start, nl):  # pragma: no cover - compiled
    """PyMC's ``ZeroSumTransform.extend_axis``: (3, L) sum-to-zero z from the 3 x (L - 1)
    free coordinates at ``x[start:]``."""
    z = np.empty((3, nl))
    n = float(nl)
    for r in range(3):
        total = 0.0
        for k in range(nl - 1):
            total += x[start + r * (nl - 1) + k]
        norm = total / (math.sqrt(n) + n)
        for k in range(nl - 1):
            z[r, k] = x[start + r * (nl - 1) + k] - norm
        z[r, nl - 1] = -total / math.sqrt(n)
    return z


@numba.njit(cache=True, error_model="numpy")
def _density(x, grad, par):  # pragma: no cover - compiled
    s_, b_, t_ = int(par[0]), int(par[1]), int(par[2])
    total = par[3]
    lens = par[HEAD:HEAD + b_]
    centred = par[HEAD + b_:HEAD + 2 * b_]
    o = HEAD + 2 * b_
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
    # the blocks' offsets in x (3 log-scales, then 3 x (L - 1) zero-sum coordinates),
    # their sum-to-zero values v (z, or the effect itself when centred) added to eta
    xo = 3
    for b in range(b_):
        nl = int(lens[b])
        v = _zero_sum(x, xo + 3, nl)
        for r in range(3):
            sig = math.exp(x[xo + r])
            u = sig / sig_s[r]
            total += -0.5 * u * u - math.log(sig_s[r]) + HALF_LOG_2_OVER_PI + x[xo + r]
            mult, q = (1.0, sig) if centred[b] > 0 else (sig, 1.0)
            total -= (nl - 1) * (HALF_LOG_2PI + math.log(q))
            for level in range(nl):
                total -= 0.5 * (v[r, level] / q) ** 2
            for s in range(s_):
                eta[r, s] += mult * v[r, int(index[b * s_ + s])]
        xo += 3 + 3 * (nl - 1)
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
        v = _zero_sum(x, xo + 3, nl)
        c_all, c_last = 1.0 / (math.sqrt(nl) + nl), 1.0 / math.sqrt(nl)
        for r in range(3):
            sig = math.exp(x[xo + r])
            gl = np.zeros(nl)
            for s in range(s_):
                gl[int(index[b * s_ + s])] += g[r, s]
            dsig = 0.0
            head = 0.0  # sum of d/dv over the first L - 1 levels
            for level in range(nl):
                if centred[b] > 0:  # v = effect ~ ZeroSumNormal(sig)
                    dsig += (v[r, level] / sig) ** 2
                    gl[level] = gl[level] - v[r, level] / (sig * sig)
                else:  # v = z ~ ZeroSumNormal(1), effect sig * z
                    dsig += sig * v[r, level] * gl[level]
                    gl[level] = sig * gl[level] - v[r, level]  # now d logp / d v
                if level < nl - 1:
                    head += gl[level]
            if centred[b] > 0:
                dsig -= nl - 1
            # the transform's Jacobian: dz_l/dy_k = [l == k] - c_all (l < L - 1), -c_last
            for k in range(nl - 1):
                grad[xo + 3 + r * (nl - 1) + k] = gl[k] - c_all * head - c_last * gl[nl - 1]
            grad[xo + r] = dsig - (sig / sig_s[r]) ** 2 + 1.0
        xo += 3 + 3 * (nl - 1)
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
    # expanded: mu, then per block sigma (3) and the full sum-to-zero z or effect
    # (3 x L), then
    # tau and the walk's steps as they are
    for r in range(3):
        out[r] = x[r]
    xo = oo = 3
    for b in range(b_):
        nl = int(lens[HEAD + b])
        for r in range(3):
            out[oo + r] = math.exp(x[xo + r])
        z = _zero_sum(x, xo + 3, nl)
        for r in range(3):
            for level in range(nl):
                out[oo + 3 + r * nl + level] = z[r, level]
        xo += 3 + 3 * (nl - 1)
        oo += 3 + 3 * nl
    if t_ > 1:
        for r in range(3):
            out[oo + r] = math.exp(x[xo + r])
        for i in range(3, dim - xo):
            out[oo + i] = x[xo + i]
    return 0
